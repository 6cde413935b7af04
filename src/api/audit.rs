//! `GET /v1/audit`: stored workload events, newest first, filtered, cursor-paginated.
//! The cursor is an opaque position in the log, so pages stay stable while agents keep
//! writing: new events land above the first page, never inside a walk. Callers with only
//! team roles see their teams' namespaces.

use axum::extract::{RawQuery, State};
use axum::Json;
use base64::Engine;
use serde_json::{json, Value};
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use super::error::ApiError;
use super::AppState;
use crate::store::AuditFilter;

const DEFAULT_LIMIT: usize = 100;
const MAX_LIMIT: usize = 500;

pub async fn get_audit(
    State(state): State<AppState>,
    access: super::access::Access,
    RawQuery(query): RawQuery,
) -> Result<Json<Value>, ApiError> {
    let mut filter = parse_filter(query.as_deref().unwrap_or(""))?;
    filter.scopes = access.namespace_scope();
    let page = state.store.query_audit(filter).await?;
    let mut items = Vec::with_capacity(page.items.len());
    for e in page.items {
        let mut v: Value = serde_json::from_str(&e.payload).map_err(ApiError::internal)?;
        if let Value::Object(map) = &mut v {
            map.insert("cluster".into(), Value::String(e.cluster));
            map.insert(
                "receivedAt".into(),
                Value::String(rfc3339(e.received_at_ms)),
            );
        }
        items.push(v);
    }
    Ok(Json(
        json!({ "items": items, "next": page.next.map(encode_cursor) }),
    ))
}

fn parse_filter(query: &str) -> Result<AuditFilter, ApiError> {
    let pairs: Vec<(String, String)> = serde_urlencoded::from_str(query).map_err(|e| {
        ApiError::bad_request("invalid_query", format!("malformed query string: {e}"))
    })?;
    let mut f = AuditFilter {
        limit: DEFAULT_LIMIT,
        ..Default::default()
    };
    for (key, value) in pairs {
        let bad = |why: &str| {
            ApiError::bad_request("invalid_query", format!("{key}: {why}"))
                .with_details(json!({ "parameter": key }))
        };
        let slot = match key.as_str() {
            "cluster" => &mut f.cluster,
            "namespace" => &mut f.namespace,
            "kind" => &mut f.kind,
            "name" => &mut f.name,
            "type" => &mut f.event_type,
            "reason" => &mut f.reason,
            "recommendationID" => &mut f.recommendation_id,
            "since" => {
                f.since_ms =
                    Some(parse_time(&value).ok_or_else(|| bad("must be an RFC 3339 timestamp"))?);
                continue;
            }
            "until" => {
                f.until_ms =
                    Some(parse_time(&value).ok_or_else(|| bad("must be an RFC 3339 timestamp"))?);
                continue;
            }
            "limit" => {
                f.limit = value
                    .parse()
                    .ok()
                    .filter(|n| (1..=MAX_LIMIT).contains(n))
                    .ok_or_else(|| bad("must be an integer from 1 to 500"))?;
                continue;
            }
            "next" => {
                f.before_seq = Some(
                    decode_cursor(&value)
                        .ok_or_else(|| bad("is not a cursor returned by this API"))?,
                );
                continue;
            }
            _ => return Err(bad("unknown parameter")),
        };
        *slot = Some(value);
    }
    Ok(f)
}

pub(super) fn parse_time(s: &str) -> Option<i64> {
    OffsetDateTime::parse(s, &Rfc3339)
        .ok()
        .map(|t| (t.unix_timestamp_nanos() / 1_000_000) as i64)
}

/// Unix milliseconds as RFC 3339 (UTC, millisecond precision).
pub fn rfc3339(ms: i64) -> String {
    OffsetDateTime::from_unix_timestamp_nanos(ms as i128 * 1_000_000)
        .ok()
        .and_then(|t| t.format(&Rfc3339).ok())
        .unwrap_or_default()
}

pub(super) fn encode_cursor(seq: i64) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("s:{seq}"))
}

pub(super) fn decode_cursor(s: &str) -> Option<i64> {
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(s)
        .ok()?;
    let text = String::from_utf8(raw).ok()?;
    text.strip_prefix("s:")?.parse().ok().filter(|n| *n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_junk_is_refused() {
        assert_eq!(decode_cursor(&encode_cursor(42)), Some(42));
        assert_eq!(decode_cursor("nope"), None);
    }

    #[test]
    fn filters_are_parsed_strictly() {
        let f = parse_filter("cluster=a&type=applied&limit=5&since=2026-01-01T00:00:00Z").unwrap();
        assert_eq!((f.cluster.as_deref(), f.limit), (Some("a"), 5));
        assert_eq!(f.since_ms, Some(1_767_225_600_000));
        for bad in [
            "limit=0",
            "limit=501",
            "since=yesterday",
            "colour=red",
            "next=xyz",
        ] {
            assert!(parse_filter(bad).is_err(), "{bad}");
        }
    }
}
