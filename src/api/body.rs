//! Reading request bodies under a byte limit, with errors in the API's shape: JSON bodies
//! are parsed strictly (unknown fields refused) and errors name the field at fault.

use axum::body::Body;
use bytes::Bytes;
use http_body_util::BodyExt;
use serde::de::DeserializeOwned;
use serde_json::json;

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

/// Reads and parses a JSON body of type `T`. An empty body reads as `{}`.
pub async fn read_json<T: DeserializeOwned>(body: Body) -> Result<T, ApiError> {
    let bytes = read_limited(body, MAX_JSON_BYTES).await?;
    parse_json(if bytes.is_empty() { b"{}" } else { &bytes })
}

/// Parses `bytes` as `T`; a failure names the JSON path (field) at fault.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let de = &mut serde_json::Deserializer::from_slice(bytes);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let message = inner.to_string();
        // serde names missing/unknown fields in the message, not the path.
        let field =
            quoted_field(&message).unwrap_or(if path == "." { String::new() } else { path });
        let code = if inner.is_syntax() || inner.is_eof() {
            "invalid_json"
        } else {
            "invalid_body"
        };
        ApiError::bad_request(code, message).with_details(json!({ "field": field }))
    })
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

    #[derive(serde::Deserialize, Debug)]
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
