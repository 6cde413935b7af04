//! `POST /v1/clusters/{cluster}/events`: an agent's batch of audit events, stored exactly
//! once per id, counted in `kerf_actions_total`.

use axum::body::Body;
use axum::extract::{Path, State};
use axum::Json;
use serde_json::{json, Value};

use super::body::read_limited;
use super::error::ApiError;
use super::AppState;
use crate::events::{validate_batch, BatchError};
use crate::metrics::ActionLabels;

/// Largest event batch body, in bytes.
pub const MAX_BATCH_BYTES: usize = 1024 * 1024;

pub async fn post_events(
    State(state): State<AppState>,
    Path(cluster): Path<String>,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let bytes = read_limited(body, MAX_BATCH_BYTES).await?;
    let events = validate_batch(&bytes).map_err(batch_error)?;
    let outcome = state
        .store
        .insert_events(cluster.clone(), events, state.now())
        .await?;
    let mut per_label: std::collections::HashMap<&(String, String), u64> = Default::default();
    for key in &outcome.inserted {
        *per_label.entry(key).or_default() += 1;
    }
    for ((event_type, reason), n) in per_label {
        state
            .metrics
            .actions
            .get_or_create(&ActionLabels {
                cluster: cluster.clone(),
                r#type: event_type.clone(),
                reason: reason.clone(),
            })
            .inc_by(n);
    }
    state
        .metrics
        .duplicate_events
        .inc_by(outcome.duplicates as u64);
    Ok(Json(json!({
        "accepted": outcome.inserted.len(),
        "duplicates": outcome.duplicates,
    })))
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
        BatchError::Items(ref items) => {
            let details = json!({ "items": items });
            ApiError::bad_request("invalid_item", e.to_string()).with_details(details)
        }
    }
}
