//! Reading request bodies under a byte limit, with errors in the API's shape: JSON bodies
//! are parsed strictly (unknown fields refused) and errors name the field at fault.

use axum::body::Body;
use bytes::Bytes;
use http_body_util::BodyExt;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

use super::error::ApiError;

/// Largest JSON body of the admin endpoints, in bytes.
pub const MAX_JSON_BYTES: usize = 64 * 1024;

/// Bytes of an oversized body still read (and discarded) before answering 413, so a
/// client that is still sending receives the answer instead of a reset connection.
const DRAIN_LIMIT: usize = 16 * 1024 * 1024;

/// Collects `body`, refusing with 413 (naming `limit`) once it grows past `limit` bytes.
pub async fn read_limited(body: Body, limit: usize) -> Result<Bytes, ApiError> {
    let mut body = body;
    let mut buf = bytes::BytesMut::new();
    let mut seen = 0usize;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| {
            ApiError::bad_request("invalid_body", format!("cannot read request body: {e}"))
        })?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        seen = seen.saturating_add(data.len());
        if seen > limit {
            if seen > limit.saturating_add(DRAIN_LIMIT) {
                break;
            }
            continue;
        }
        buf.extend_from_slice(&data);
    }
    if seen > limit {
        return Err(ApiError::too_large(limit));
    }
    Ok(buf.freeze())
}

/// Reads and parses a JSON body of type `T`; see [`parse_json`]. An empty body reads
/// as `{}`.
pub async fn read_json<T: DeserializeOwned + Serialize>(body: Body) -> Result<T, ApiError> {
    read_json_nullable(body, &[]).await
}

/// [`read_json`] where the top-level fields `nullable` may be `null` (documented so).
pub async fn read_json_nullable<T: DeserializeOwned + Serialize>(
    body: Body,
    nullable: &[&str],
) -> Result<T, ApiError> {
    let bytes = read_limited(body, MAX_JSON_BYTES).await?;
    parse_strict(if bytes.is_empty() { b"{}" } else { &bytes }, nullable)
}

/// Parses `bytes` as `T`, strictly: the body is a JSON object, no value is `null`, and
/// nothing that is an object in `T` comes as an array (serde would fill a struct's
/// fields by position). A failure names the JSON path (field) at fault.
pub fn parse_json<T: DeserializeOwned + Serialize>(bytes: &[u8]) -> Result<T, ApiError> {
    parse_strict(bytes, &[])
}

fn shape_error(field: &str, message: String) -> ApiError {
    ApiError::bad_request("invalid_body", message).with_details(json!({ "field": field }))
}

fn parse_strict<T: DeserializeOwned + Serialize>(
    bytes: &[u8],
    nullable: &[&str],
) -> Result<T, ApiError> {
    let value: Value = serde_json::from_slice(bytes).map_err(|e| {
        let code = if e.is_syntax() || e.is_eof() {
            "invalid_json"
        } else {
            "invalid_body"
        };
        ApiError::bad_request(code, e.to_string()).with_details(json!({ "field": "" }))
    })?;
    let Value::Object(fields) = &value else {
        return Err(shape_error(
            "",
            "the request body must be a JSON object".into(),
        ));
    };
    for (key, v) in fields {
        let path = if nullable.contains(&key.as_str()) && v.is_null() {
            None
        } else {
            first_null(v, key.clone())
        };
        if let Some(path) = path {
            return Err(shape_error(
                &path,
                format!("{path}: must not be null; leave it out instead"),
            ));
        }
    }
    let parsed: T = serde_path_to_error::deserialize(value.clone()).map_err(|e| {
        let path = e.path().to_string();
        let message = e.into_inner().to_string();
        // serde names missing/unknown fields in the message, not the path.
        let field =
            quoted_field(&message).unwrap_or(if path == "." { String::new() } else { path });
        ApiError::bad_request("invalid_body", message).with_details(json!({ "field": field }))
    })?;
    let typed = serde_json::to_value(&parsed).map_err(ApiError::internal)?;
    if let Some(path) = array_for_object(&value, &typed, String::new()) {
        return Err(shape_error(&path, format!("{path}: must be a JSON object")));
    }
    Ok(parsed)
}

/// The path of the first `null` inside `v` (itself included).
fn first_null(v: &Value, path: String) -> Option<String> {
    match v {
        Value::Null => Some(path),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, x)| first_null(x, format!("{path}[{i}]"))),
        Value::Object(map) => map
            .iter()
            .find_map(|(k, x)| first_null(x, format!("{path}.{k}"))),
        _ => None,
    }
}

/// The first path where the request had an array and the parsed value is an object.
fn array_for_object(sent: &Value, typed: &Value, path: String) -> Option<String> {
    let join = |k: &str| {
        if path.is_empty() {
            k.to_string()
        } else {
            format!("{path}.{k}")
        }
    };
    match (sent, typed) {
        (Value::Array(_), Value::Object(_)) => {
            Some(if path.is_empty() { "$".into() } else { path })
        }
        (Value::Object(a), Value::Object(b)) => a
            .iter()
            .find_map(|(k, x)| b.get(k).and_then(|y| array_for_object(x, y, join(k)))),
        (Value::Array(a), Value::Array(b)) => a
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(i, (x, y))| array_for_object(x, y, format!("{path}[{i}]"))),
        _ => None,
    }
}

fn quoted_field(message: &str) -> Option<String> {
    let rest = message
        .strip_prefix("missing field `")
        .or_else(|| message.strip_prefix("unknown field `"))?;
    rest.split('`').next().map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, serde::Serialize, Debug)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct T {
        name: String,
        n: Option<u8>,
    }

    #[test]
    fn json_errors_name_the_field() {
        let field = |b: &str| parse_json::<T>(b.as_bytes()).unwrap_err().details["field"].clone();
        assert_eq!(field(r#"{"n": 1}"#), "name");
        assert_eq!(field(r#"{"name": "a", "x": 1}"#), "x");
        assert_eq!(field(r#"{"name": "a", "n": "many"}"#), "n");
        assert_eq!(parse_json::<T>(b"{").unwrap_err().code, "invalid_json");
    }
}
