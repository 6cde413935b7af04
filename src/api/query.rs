//! Strict query strings and opaque cursors shared by the list endpoints: unknown
//! parameters are errors naming the parameter; cursors are base64 of a small JSON value
//! only this API produces.

use base64::Engine;
use serde_json::{json, Value};

use super::error::ApiError;

/// Largest page any list serves.
pub const MAX_LIMIT: usize = 500;

/// The decoded `key=value` pairs of a query string. An empty value is refused: a
/// parameter left out means "no filter", so `?cluster=` would be ambiguous.
pub fn pairs(query: Option<&str>) -> Result<Vec<(String, String)>, ApiError> {
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

/// `limit`: 1..=500.
pub fn limit(key: &str, value: &str) -> Result<usize, ApiError> {
    value
        .parse()
        .ok()
        .filter(|n| (1..=MAX_LIMIT).contains(n))
        .ok_or_else(|| bad(key, "must be an integer from 1 to 500"))
}

/// `true` or `false`.
pub fn boolean(key: &str, value: &str) -> Result<bool, ApiError> {
    match value {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(bad(key, "must be true or false")),
    }
}

/// An RFC 3339 timestamp as Unix milliseconds.
pub fn time_ms(key: &str, value: &str) -> Result<i64, ApiError> {
    crate::timestamp::parse_ms(value).ok_or_else(|| bad(key, "must be an RFC 3339 timestamp"))
}

/// An RFC 3339 time in a request body, as Unix milliseconds; a 400 naming `field`.
pub fn parse_time(field: &str, text: &str) -> Result<i64, ApiError> {
    crate::timestamp::parse_ms(text)
        .ok_or_else(|| ApiError::invalid_field(field, "must be an RFC 3339 timestamp"))
}

/// The time window and paging both audit logs take: `since`, `until`, `limit`, `next`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogWindow {
    pub since_ms: Option<i64>,
    pub until_ms: Option<i64>,
    /// The log position to continue below (the `next` cursor).
    pub before_seq: Option<i64>,
    pub limit: usize,
}

impl LogWindow {
    /// No window, pages of `limit`.
    pub fn new(limit: usize) -> LogWindow {
        LogWindow {
            since_ms: None,
            until_ms: None,
            before_seq: None,
            limit,
        }
    }

    /// Takes `key=value` when it is one of the window's parameters (`Ok(false)` else).
    pub fn take(&mut self, key: &str, value: &str) -> Result<bool, ApiError> {
        match key {
            "since" => self.since_ms = Some(time_ms(key, value)?),
            "until" => self.until_ms = Some(time_ms(key, value)?),
            "limit" => self.limit = limit(key, value)?,
            "next" => self.before_seq = Some(decode_seq(key, value)?),
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// An opaque cursor for `value`.
pub fn encode_cursor(value: &Value) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(value.to_string())
}

/// The value inside a cursor, or a 400 naming `key`.
pub fn decode_cursor(key: &str, s: &str) -> Result<Value, ApiError> {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(s)
        .ok()
        .and_then(|raw| serde_json::from_slice(&raw).ok())
        .ok_or_else(|| bad(key, "is not a cursor returned by this API"))
}

/// A cursor for a position in an append-only log (`seq`).
pub fn encode_seq(seq: i64) -> String {
    encode_cursor(&json!({ "s": seq }))
}

/// The log position inside a cursor made by [`encode_seq`], or a 400 naming `key`.
pub fn decode_seq(key: &str, s: &str) -> Result<i64, ApiError> {
    decode_cursor(key, s)?
        .get("s")
        .and_then(Value::as_i64)
        .filter(|n| *n > 0)
        .ok_or_else(|| bad(key, "is not a cursor returned by this API"))
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
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_junk_is_refused() {
        let v = json!(["api", "wl-1"]);
        assert_eq!(decode_cursor("next", &encode_cursor(&v)).unwrap(), v);
        assert!(decode_cursor("next", "%%%").is_err());
        assert!(limit("limit", "0").is_err() && limit("limit", "501").is_err());
        assert_eq!(limit("limit", "500").unwrap(), 500);
    }
}
