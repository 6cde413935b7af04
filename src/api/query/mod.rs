//! Strict query strings and opaque cursors shared by the list endpoints. Every handler
//! reads its query through one extractor, [`Query`], into a typed struct (or a tuple of
//! structs, one per group of parameters views share): unknown or repeated parameters
//! and empty values are refused, and every refusal is 400 `invalid_query` with the
//! message `<param>: <why>` and `details.parameter`. Cursors are base64 of a small
//! JSON value only this API produces.

mod deserializer;
pub mod params;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use base64::Engine;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use super::error::ApiError;
pub use deserializer::QueryError;

/// Largest page any list serves.
pub const MAX_LIMIT: usize = 500;

/// The query string read into `T` (see the module doc); its rejection is the API's
/// 400 `invalid_query`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Query<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for Query<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        parse(parts.uri.query()).map(Query)
    }
}

/// Reads the query string `raw` into `T`, for handlers that must read it after another
/// check (so that check's answer comes first, as it always has).
pub fn parse<T: DeserializeOwned>(raw: Option<&str>) -> Result<T, ApiError> {
    deserializer::deserialize(&pairs(raw)?).map_err(ApiError::from)
}

impl From<QueryError> for ApiError {
    fn from(e: QueryError) -> Self {
        match &e.parameter {
            Some(key) => bad(key, &e.why),
            None => ApiError::bad_request("invalid_query", e.why),
        }
    }
}

/// The decoded `key=value` pairs of a query string. An empty value is refused: a
/// parameter left out means "no filter", so `?cluster=` would be ambiguous.
fn pairs(query: Option<&str>) -> Result<Vec<(String, String)>, ApiError> {
    let pairs: Vec<(String, String)> =
        serde_urlencoded::from_str(query.unwrap_or("")).map_err(|e| {
            ApiError::bad_request("invalid_query", format!("malformed query string: {e}"))
        })?;
    if let Some((key, _)) = pairs.iter().find(|(_, v)| v.is_empty()) {
        return Err(bad(
            key,
            "must not be empty; leave the parameter out instead",
        ));
    }
    Ok(pairs)
}

/// A 400 naming the parameter.
pub fn bad(key: &str, why: &str) -> ApiError {
    ApiError::bad_request("invalid_query", format!("{key}: {why}"))
        .with_details(json!({ "parameter": key }))
}

/// An RFC 3339 time in a request body, as Unix milliseconds; a 400 naming `field`.
pub fn parse_time(field: &str, text: &str) -> Result<i64, ApiError> {
    crate::timestamp::parse_ms(text)
        .ok_or_else(|| ApiError::invalid_field(field, "must be an RFC 3339 timestamp"))
}

/// An opaque cursor for `value`.
pub fn encode_cursor(value: &Value) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(value.to_string())
}

/// The value inside a cursor made by [`encode_cursor`].
pub fn cursor_value(s: &str) -> Option<Value> {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(s)
        .ok()
        .and_then(|raw| serde_json::from_slice(&raw).ok())
}

/// The value inside a cursor, or a 400 naming `key`.
pub fn decode_cursor(key: &str, s: &str) -> Result<Value, ApiError> {
    cursor_value(s).ok_or_else(|| bad(key, params::NOT_A_CURSOR))
}

/// A cursor for a position in an append-only log (`seq`).
pub fn encode_seq(seq: i64) -> String {
    encode_cursor(&json!({ "s": seq }))
}

/// The log position inside a cursor made by [`encode_seq`].
pub fn seq_value(s: &str) -> Option<i64> {
    cursor_value(s)?
        .get("s")
        .and_then(Value::as_i64)
        .filter(|n| *n > 0)
}

/// The log position inside a cursor made by [`encode_seq`], or a 400 naming `key`.
pub fn decode_seq(key: &str, s: &str) -> Result<i64, ApiError> {
    seq_value(s).ok_or_else(|| bad(key, params::NOT_A_CURSOR))
}

/// Unix ms as RFC 3339, or null.
pub fn time_or_null(ms: Option<i64>) -> Value {
    ms.map_or(Value::Null, |ms| {
        Value::String(crate::timestamp::format_ms(ms))
    })
}

/// Parses a stored JSON column; a corrupt one is a server error.
pub fn stored_json(text: &str) -> Result<Value, ApiError> {
    serde_json::from_str(text).map_err(ApiError::internal)
}

#[cfg(test)]
mod tests;
