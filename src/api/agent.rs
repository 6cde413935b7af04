//! What a cluster's agent sends besides reading its feeds (`feed`): `POST .../heartbeat`
//! (versions and capabilities; feeds readiness) and `POST .../events` (audit events,
//! stored exactly once per id and counted in `kerf_actions_total`).

use axum::body::Body;
use axum::extract::{Path, State};
use axum::Json;
use serde::Serialize;
use serde_json::json;
use utoipa::ToSchema;

use super::body::{read_json, read_limited};
use super::error::ApiError;
use super::state::AppState;
use crate::events::BatchError;
use crate::fleet::ingest;
use crate::metrics::ActionLabels;
use crate::wire::{AgentEvent, Heartbeat, Readiness};

/// Largest event batch body, in bytes.
pub const MAX_BATCH_BYTES: usize = 1024 * 1024;

/// What `POST .../events` stored.
#[derive(Debug, Serialize, ToSchema)]
pub struct EventsStored {
    /// Events stored now.
    pub accepted: usize,
    /// Events whose id was already stored (or repeated in the batch): ignored.
    pub duplicates: usize,
}

/// What this hub hands its agents (`[agents]` of its config).
pub fn agent_settings(state: &AppState) -> crate::wire::AgentSettings {
    let a = &state.config.agents;
    crate::wire::AgentSettings {
        loop_interval_seconds: a.loop_interval_seconds,
        heartbeat_interval_seconds: a.heartbeat_interval_seconds,
        event_buffer_size: a.event_buffer_size,
        ..crate::wire::AgentSettings::default()
    }
}

/// `POST /v1/clusters/{cluster}/heartbeat`: stores the heartbeat, re-evaluates
/// readiness and answers with it.
#[utoipa::path(
    post,
    path = "/v1/clusters/{cluster}/heartbeat",
    summary = "Agent heartbeat {agentVersion, kubernetesVersion, capabilities {inPlaceResize, ...}}; answers with the readiness.",
    params(
        ("cluster" = String, Path),
    ),
    request_body = Heartbeat,
    responses(
        (status = 200, description = "Readiness", body = Readiness),
    )
)]
pub async fn heartbeat(
    State(state): State<AppState>,
    Path(cluster): Path<String>,
    body: Body,
) -> Result<Json<Readiness>, ApiError> {
    let hb: Heartbeat = read_json(body).await?;
    Ok(Json(store_heartbeat(&state, &cluster, hb).await?))
}

/// What `POST .../heartbeat` does after parsing (the in-process agent calls it too).
pub async fn store_heartbeat(
    state: &AppState,
    cluster: &str,
    hb: Heartbeat,
) -> Result<Readiness, ApiError> {
    let out = ingest::heartbeat(&state.store, state.now(), cluster, hb).await?;
    if out.needs_datasource_check {
        // The ticker checks the datasource at once (kept off the request path).
        state.fleet.wake();
    }
    Ok(out.readiness)
}

/// `POST /v1/clusters/{cluster}/events`: a batch of the agent's audit events.
#[utoipa::path(
    post,
    path = "/v1/clusters/{cluster}/events",
    summary = "Store a batch of audit events from a cluster's agent.",
    description = "At most 1000 items and 1 MiB. The batch is stored whole, once per event id, or refused whole with 400 invalid_item listing the problems by index, id, field and reason in details.items (at most 10 per item, 100 per batch, echoed text cut to 64 characters) with details.total and details.omitted. Duplicate ids (also within one batch) are ignored.",
    params(
        ("cluster" = String, Path),
    ),
    request_body(content = Vec<AgentEvent>, description = "At most 1000 events."),
    responses(
        (status = 200, description = "Stored.", body = EventsStored),
    )
)]
pub async fn post_events(
    State(state): State<AppState>,
    Path(cluster): Path<String>,
    body: Body,
) -> Result<Json<EventsStored>, ApiError> {
    let bytes = read_limited(body, MAX_BATCH_BYTES).await?;
    Ok(Json(store_events(&state, &cluster, &bytes).await?))
}

/// What `POST .../events` does with the body (the in-process agent calls it too):
/// validate, store once per id, count in `kerf_actions_total`.
pub async fn store_events(
    state: &AppState,
    cluster: &str,
    bytes: &[u8],
) -> Result<EventsStored, ApiError> {
    if bytes.len() > MAX_BATCH_BYTES {
        return Err(ApiError::too_large(MAX_BATCH_BYTES));
    }
    let outcome = ingest::events(&state.store, state.now(), cluster, bytes)
        .await?
        .map_err(batch_error)?;
    let mut per_label: std::collections::HashMap<&(String, String), u64> = Default::default();
    for key in &outcome.inserted {
        *per_label.entry(key).or_default() += 1;
    }
    for ((event_type, reason), n) in per_label {
        state
            .metrics
            .actions
            .get_or_create(&ActionLabels {
                cluster: cluster.to_string(),
                r#type: event_type.clone(),
                reason: reason.clone(),
            })
            .inc_by(n);
    }
    state
        .metrics
        .duplicate_events
        .inc_by(outcome.duplicates as u64);
    Ok(EventsStored {
        accepted: outcome.inserted.len(),
        duplicates: outcome.duplicates,
    })
}

fn batch_error(e: BatchError) -> ApiError {
    match e {
        BatchError::Json(_) => ApiError::bad_request("invalid_json", e.to_string()),
        BatchError::NotArray => ApiError::bad_request("invalid_body", e.to_string()),
        BatchError::TooMany(n) => ApiError::new(
            axum::http::StatusCode::PAYLOAD_TOO_LARGE,
            "too_many_items",
            e.to_string(),
        )
        .with_details(json!({ "limitItems": crate::events::MAX_BATCH_ITEMS, "items": n })),
        BatchError::Items { ref listed, total } => {
            let details = json!({
                "items": listed,
                "total": total,
                "omitted": total - listed.len(),
            });
            ApiError::bad_request("invalid_item", e.to_string()).with_details(details)
        }
    }
}
