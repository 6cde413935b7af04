//! `POST /v1/clusters/{cluster}/write`: Prometheus remote write 1.0 into the hub's
//! embedded usage store, with the cluster's agent token. The kerf agent's collector
//! ships its samples here; so can Prometheus in agent mode, Grafana Alloy, vmagent or the
//! OpenTelemetry collector's remote-write exporter. Answers as a remote-write client
//! understands them: 204 stored; 400 (do not retry) for a body that is not a write, or
//! naming the samples refused while the rest was stored; 413 too large; 415 another
//! protocol; 503 (retry) when the store failed and nothing was kept.

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::body::read_limited;
use super::error::ApiError;
use super::state::AppState;
use crate::fleet::usage::{self, WriteError, WriteOutcome};
use crate::metrics::{ClusterLabels, RefusedLabels};
use crate::wire::remote_write::{CONTENT_ENCODING, CONTENT_TYPE};

/// `POST /v1/clusters/{cluster}/write`.
#[utoipa::path(
    post,
    path = "/v1/clusters/{cluster}/write",
    summary = "Prometheus remote write 1.0 into the embedded usage store (cluster token).",
    description = "A snappy-compressed (block format) prometheus.WriteRequest with Content-Encoding: snappy and Content-Type: application/x-protobuf, at most [usage] max_write_bytes as sent and 8 times that decompressed. Stored in one transaction: 204 when every sample was stored or was already stored with the same value (a retry); 400 partial_write naming the samples refused by reason (details.refused, details.examples) while the rest was stored; 400 invalid_write for a body that is not a readable write (nothing stored); 415 unsupported_write for another encoding or protocol (remote write 2.0 is not taken); 503 store_unavailable when nothing was stored (retry). docs/contracts/usage.md has the rules.",
    params(
        ("cluster" = String, Path),
    ),
    request_body(content = Vec<u8>, content_type = "application/x-protobuf", description = "A snappy block of a prometheus.WriteRequest."),
    responses(
        (status = 204, description = "Stored."),
        (status = 415, description = "Another encoding or protocol.", body = super::error::ErrorBody),
        (status = 503, description = "The store failed; nothing was stored: retry.", body = super::error::ErrorBody),
    )
)]
pub async fn post_write(
    State(state): State<AppState>,
    Path(cluster): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    if let Err(e) = accepts(&headers) {
        state.metrics.usage.count_write(&cluster, "invalid");
        return Err(e);
    }
    let bytes = match read_limited(body, state.config.usage.max_write_bytes).await {
        Ok(b) => b,
        Err(e) => {
            state.metrics.usage.count_write(&cluster, "too_large");
            return Err(e);
        }
    };
    store_write(&state, &cluster, &bytes).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// A write's encoding and protocol: a snappy block of remote write 1.0.
fn accepts(headers: &HeaderMap) -> Result<(), ApiError> {
    let unsupported =
        |m: String| ApiError::new(StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_write", m);
    let value = |name| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.trim().to_ascii_lowercase())
    };
    match value(header::CONTENT_ENCODING) {
        Some(e) if e == CONTENT_ENCODING => {}
        other => {
            return Err(unsupported(format!(
                "Content-Encoding must be snappy, not {}",
                other.as_deref().unwrap_or("absent")
            )))
        }
    }
    let content_type = value(header::CONTENT_TYPE).unwrap_or_default();
    let mut parts = content_type.split(';').map(str::trim);
    if parts.next() != Some(CONTENT_TYPE) {
        return Err(unsupported(format!(
            "Content-Type must be {CONTENT_TYPE}, not {:?}",
            content_type
        )));
    }
    // Remote write 2.0 names its message; 1.0 names none or prometheus.WriteRequest.
    if let Some(proto) = parts.find_map(|p| p.strip_prefix("proto=")) {
        if proto != "prometheus.writerequest" {
            return Err(unsupported(format!(
                "only remote write 1.0 (prometheus.WriteRequest) is taken, not {proto}"
            )));
        }
    }
    Ok(())
}

/// What `POST .../write` does with the body (the in-process agent calls it too): read,
/// store, count in `/metrics`. `Ok` when everything was stored (or was a retry's
/// duplicate); an error carries the answer a remote-write client understands.
pub async fn store_write(state: &AppState, cluster: &str, bytes: &[u8]) -> Result<(), ApiError> {
    let metrics = &state.metrics.usage;
    let Some(store) = &state.usage else {
        return Err(ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "store_unavailable",
            "this hub keeps no usage store",
        ));
    };
    let max = state.config.usage.max_write_bytes;
    let outcome = match usage::write(store, state.now(), cluster, bytes, max).await {
        Ok(o) => o,
        Err(e) => {
            let (outcome, err) = refusal(e);
            metrics.count_write(cluster, outcome);
            return Err(err);
        }
    };
    count(state, cluster, &outcome);
    if outcome.refused.is_empty() {
        metrics.count_write(cluster, "stored");
        return Ok(());
    }
    metrics.count_write(cluster, "partial");
    let refused: serde_json::Map<String, serde_json::Value> = outcome
        .refused
        .iter()
        .map(|(r, n)| (r.as_str().to_string(), json!(n)))
        .collect();
    Err(
        ApiError::bad_request("partial_write", usage::refusal_summary(&outcome)).with_details(
            json!({
                "stored": outcome.accepted,
                "duplicates": outcome.duplicates,
                "refused": refused,
                "examples": outcome.refused_examples,
            }),
        ),
    )
}

/// The outcome label and the answer of a write not stored at all.
fn refusal(e: WriteError) -> (&'static str, ApiError) {
    match e {
        WriteError::TooLarge { limit, .. } => ("too_large", ApiError::too_large(limit)),
        WriteError::Snappy(_) | WriteError::Protobuf(_) => (
            "invalid",
            ApiError::bad_request("invalid_write", e.to_string()),
        ),
        WriteError::Store(cause) => {
            tracing::error!(error = %cause, "storing a remote write failed");
            (
                "failed",
                ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "store_unavailable",
                    "the usage store failed and kept nothing of this write; retry",
                ),
            )
        }
    }
}

fn count(state: &AppState, cluster: &str, outcome: &WriteOutcome) {
    let m = &state.metrics.usage;
    let labels = ClusterLabels {
        cluster: cluster.to_string(),
    };
    m.stored.get_or_create(&labels).inc_by(outcome.accepted);
    m.duplicates
        .get_or_create(&labels)
        .inc_by(outcome.duplicates);
    for (reason, n) in &outcome.refused {
        m.refused
            .get_or_create(&RefusedLabels {
                cluster: cluster.to_string(),
                reason: reason.as_str().to_string(),
            })
            .inc_by(*n);
    }
}
