//! Reading request bodies under a byte limit and a deadline, with errors in the API's
//! shape: every body is wrapped once ([`bound_bodies`]) so no route reads more than
//! `http.max_body_bytes` or for longer than `http.body_read_timeout_seconds`; routes may
//! take less ([`read_limited`]). JSON bodies are parsed strictly (unknown fields
//! refused) and errors name the field at fault.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Body as HttpBody, Frame, SizeHint};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

use super::error::ApiError;
use super::state::AppState;

/// Largest JSON body of the admin endpoints, in bytes.
pub const MAX_JSON_BYTES: usize = 64 * 1024;

/// Bytes of an oversized body still read (and discarded) before answering 413, so a
/// client that is still sending receives the answer instead of a reset connection.
const DRAIN_LIMIT: usize = 16 * 1024 * 1024;

/// Why a bounded body stopped.
#[derive(Debug, thiserror::Error)]
enum Bounded {
    #[error("request body exceeds the limit of {0} bytes")]
    TooLarge(usize),
    #[error("request body did not arrive within {0} seconds")]
    TooSlow(u64),
}

/// A request body that fails once it passes `limit` bytes (after draining up to
/// [`DRAIN_LIMIT`] more, so the 413 reaches the client) or once `deadline` passes.
struct BoundedBody {
    inner: Body,
    limit: usize,
    seen: usize,
    timeout: Duration,
    deadline: Pin<Box<tokio::time::Sleep>>,
}

impl HttpBody for BoundedBody {
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        loop {
            if self.deadline.as_mut().poll(cx).is_ready() {
                return Poll::Ready(Some(Err(Bounded::TooSlow(self.timeout.as_secs()).into())));
            }
            let frame = match Pin::new(&mut self.inner).poll_frame(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) if self.seen > self.limit => {
                    return Poll::Ready(Some(Err(Bounded::TooLarge(self.limit).into())))
                }
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Some(Err(e.into()))),
                Poll::Ready(Some(Ok(frame))) => frame,
            };
            let len = frame.data_ref().map_or(0, Bytes::len);
            self.seen = self.seen.saturating_add(len);
            if self.seen <= self.limit {
                return Poll::Ready(Some(Ok(frame)));
            }
            if self.seen > self.limit.saturating_add(DRAIN_LIMIT) {
                return Poll::Ready(Some(Err(Bounded::TooLarge(self.limit).into())));
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// The one route whose bodies may pass `http.max_body_bytes`: remote writes, bounded by
/// `[usage] max_write_bytes` instead (writers batch thousands of samples a request).
const WRITE_ROUTE: &str = "/v1/clusters/{cluster}/write";

/// Middleware: bounds every request body by `http.max_body_bytes` (remote writes by
/// `[usage] max_write_bytes`) and `http.body_read_timeout_seconds`. A declared length
/// past the limit is refused before the handler runs (the body is drained as for any
/// oversized body).
pub async fn bound_bodies(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let http = &state.config.http;
    let write = req
        .extensions()
        .get::<axum::extract::MatchedPath>()
        .is_some_and(|p| p.as_str() == WRITE_ROUTE);
    let limit = if write {
        state.config.usage.max_write_bytes
    } else {
        http.max_body_bytes
    };
    let timeout = Duration::from_secs(http.body_read_timeout_seconds);
    let declared = req
        .headers()
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let req = req.map(|inner| {
        Body::new(BoundedBody {
            inner,
            limit,
            seen: 0,
            timeout,
            deadline: Box::pin(tokio::time::sleep(timeout)),
        })
    });
    if declared.is_some_and(|n| n > limit as u64) {
        let (_, body) = req.into_parts();
        return match read_limited(body, limit).await {
            Err(e) => e.into_response(),
            Ok(_) => ApiError::too_large(limit).into_response(),
        };
    }
    next.run(req).await
}

/// Collects `body`, refusing with 413 (naming `limit`) once it grows past `limit` bytes.
pub async fn read_limited(body: Body, limit: usize) -> Result<Bytes, ApiError> {
    let mut body = body;
    let mut buf = bytes::BytesMut::new();
    let mut seen = 0usize;
    while let Some(frame) = body.frame().await {
        let frame = match frame {
            Ok(f) => f,
            // Past this route's limit already: the answer is this route's 413.
            Err(_) if seen > limit => break,
            Err(e) => return Err(body_error(e)),
        };
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

/// The API error for a body that could not be read: 413 and 408 for the bounds, 400
/// for a broken stream.
fn body_error(e: axum::Error) -> ApiError {
    let inner = e.into_inner();
    match inner.downcast_ref::<Bounded>() {
        Some(Bounded::TooLarge(limit)) => ApiError::too_large(*limit),
        Some(Bounded::TooSlow(secs)) => ApiError::new(
            axum::http::StatusCode::REQUEST_TIMEOUT,
            "body_timeout",
            format!("the request body did not arrive within {secs} seconds"),
        )
        .with_details(json!({ "timeoutSeconds": secs })),
        None => ApiError::bad_request("invalid_body", format!("cannot read request body: {inner}")),
    }
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
    let mut value: Value = serde_json::from_slice(bytes).map_err(|e| {
        let code = if e.is_syntax() || e.is_eof() {
            "invalid_json"
        } else {
            "invalid_body"
        };
        ApiError::bad_request(code, e.to_string()).with_details(json!({ "field": "" }))
    })?;
    whole_numbers(&mut value);
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
            null_paths(v, key.clone()).into_iter().next()
        };
        if let Some(path) = path {
            return Err(shape_error(&path, format!("{path}: {NOT_NULL}")));
        }
    }
    typed_at(value, "")
}

/// `value` (found at JSON path `at`, `""` for the body) read as `T` under the body
/// rules' types: a type error names the path at fault, and nothing that is an object
/// in `T` may come as an array (serde would fill a struct's fields by position). For
/// documents a body carries as raw JSON (a policy's `analysis`).
pub fn typed_at<T: DeserializeOwned + Serialize>(value: Value, at: &str) -> Result<T, ApiError> {
    let join = |inner: String| match (at, inner.as_str()) {
        (_, "") => at.to_string(),
        ("", _) => inner,
        _ => format!("{at}.{inner}"),
    };
    let parsed: T = serde_path_to_error::deserialize(value.clone()).map_err(|e| {
        let path = e.path().to_string();
        let path = if path == "." { String::new() } else { path };
        let message = e.into_inner().to_string();
        // serde names missing/unknown fields in the message, not the path.
        let inner = match quoted_field(&message) {
            Some(f) if path.is_empty() => f,
            Some(f) if !path.ends_with(&f) => format!("{path}.{f}"),
            _ => path,
        };
        ApiError::bad_request("invalid_body", message).with_details(json!({ "field": join(inner) }))
    })?;
    let typed = serde_json::to_value(&parsed).map_err(ApiError::internal)?;
    if let Some(path) = array_for_object(&value, &typed, at.to_string()) {
        return Err(shape_error(&path, format!("{path}: must be a JSON object")));
    }
    Ok(parsed)
}

/// Writes every whole number as an integer: `3.0` and `3` are one JSON number (and one
/// JSON Schema integer), but serde reads only the second as an integer.
pub fn whole_numbers(v: &mut Value) {
    match v {
        Value::Number(n) if !n.is_i64() && !n.is_u64() => {
            let whole = n.as_f64().filter(|f| f.fract() == 0.0);
            if let Some(f) = whole.filter(|f| *f >= i64::MIN as f64 && *f < i64::MAX as f64) {
                *v = Value::from(f as i64);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(whole_numbers),
        Value::Object(map) => map.values_mut().for_each(whole_numbers),
        _ => {}
    }
}

/// What a body is told of a `null` value (the API has no null-as-absent, bar the few
/// fields documented as nullable).
pub const NOT_NULL: &str = "must not be null; leave it out instead";

/// The path of every `null` inside `v` (itself included), `v` being at `path`: the
/// members of `a` as `a.b`, `a[0]`. Bodies report them all at once.
pub fn null_paths(v: &Value, path: String) -> Vec<String> {
    fn walk(v: &Value, path: String, out: &mut Vec<String>) {
        match v {
            Value::Null => out.push(path),
            Value::Array(items) => {
                for (i, x) in items.iter().enumerate() {
                    walk(x, format!("{path}[{i}]"), out);
                }
            }
            Value::Object(map) => {
                for (k, x) in map {
                    walk(x, format!("{path}.{k}"), out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(v, path, &mut out);
    out
}

/// The first path where the request had an array and the parsed value is an object.
pub fn array_for_object(sent: &Value, typed: &Value, path: String) -> Option<String> {
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

/// Reads `Option<Option<T>>` so a JSON `null` (clear) differs from an absent field (keep).
pub fn double_option<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    <Option<T> as serde::Deserialize>::deserialize(d).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, serde::Serialize, Debug)]
    #[serde(deny_unknown_fields)]
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

    #[derive(serde::Deserialize, serde::Serialize, Debug)]
    #[serde(deny_unknown_fields)]
    struct Outer {
        t: Option<T>,
    }

    #[test]
    fn nested_faults_are_named_by_their_whole_path() {
        let field =
            |b: &str| parse_json::<Outer>(b.as_bytes()).unwrap_err().details["field"].clone();
        assert_eq!(field(r#"{"t": {"name": "a", "x": 1}}"#), "t.x");
        assert_eq!(field(r#"{"t": {"n": 1}}"#), "t.name");
        assert_eq!(field(r#"{"t": {"name": "a", "n": "many"}}"#), "t.n");
        assert_eq!(field(r#"{"t": ["a", 1]}"#), "t");
        let at =
            |v: Value| typed_at::<T>(v, "policy.analysis").unwrap_err().details["field"].clone();
        assert_eq!(
            at(serde_json::json!({"name": "a", "n": "many"})),
            "policy.analysis.n"
        );
        assert_eq!(at(serde_json::json!(["a", 1])), "policy.analysis");
    }

    #[test]
    fn every_null_is_named_by_its_path() {
        let v = serde_json::json!({"a": null, "b": {"c": null, "d": [1, null]}, "e": 0});
        assert_eq!(null_paths(&v["b"], "b".into()), ["b.c", "b.d[1]"]);
        assert_eq!(null_paths(&v, "$".into()), ["$.a", "$.b.c", "$.b.d[1]"]);
        let err = parse_json::<T>(br#"{"name": null, "n": null}"#).unwrap_err();
        assert_eq!(err.details["field"], "n");
    }

    #[test]
    fn whole_numbers_written_with_a_fraction_are_integers() {
        let t: T = parse_json(br#"{"name": "a", "n": 7.0}"#).unwrap();
        assert_eq!((t.name.as_str(), t.n), ("a", Some(7)));
        let err = parse_json::<T>(br#"{"name": "a", "n": 7.5}"#).unwrap_err();
        assert_eq!(err.details["field"], "n");
        let mut v = serde_json::json!({"big": 6611747123.0, "list": [1e3, 0.25]});
        whole_numbers(&mut v);
        assert_eq!(
            v,
            serde_json::json!({"big": 6611747123_i64, "list": [1000, 0.25]})
        );
    }
}
