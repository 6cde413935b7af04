//! Runs over HTTP: `GET /v1/runs` (filters, cursor pagination), `GET /v1/runs/{id}`
//! (with live progress while it runs) and `POST /v1/clusters/{cluster}/runs` (manual
//! trigger; 409 while the cluster has a run in progress).

use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::Json;
use serde_json::{json, Value};

use super::error::ApiError;
use super::query::{self, bad, decode_cursor, encode_cursor, stored_json, time_or_null};
use super::AppState;
use crate::runs::{RunError, Trigger};
use crate::store::{RunFilter, RunRecord};

#[utoipa::path(
    get,
    path = "/v1/runs"
)]
pub async fn list_runs(
    State(state): State<AppState>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>, ApiError> {
    let mut f = RunFilter {
        limit: 50,
        ..Default::default()
    };
    for (key, value) in query::pairs(raw.as_deref())? {
        match key.as_str() {
            "cluster" => f.cluster = Some(value),
            "status" => {
                if !["running", "succeeded", "partial", "failed"].contains(&value.as_str()) {
                    return Err(bad(&key, "must be running, succeeded, partial or failed"));
                }
                f.status = Some(value)
            }
            "trigger" => {
                if !["scheduled", "manual"].contains(&value.as_str()) {
                    return Err(bad(&key, "must be scheduled or manual"));
                }
                f.trigger = Some(value)
            }
            "limit" => f.limit = query::limit(&key, &value)?,
            "next" => {
                let seq = decode_cursor(&key, &value)?.as_i64().filter(|n| *n > 0);
                f.before_seq =
                    Some(seq.ok_or_else(|| bad(&key, "is not a cursor returned by this API"))?);
            }
            _ => return Err(bad(&key, "unknown parameter")),
        }
    }
    let (items, next) = state.store.list_runs(f).await?;
    let items = items
        .iter()
        .map(|r| run_json(&state, r))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Json(json!({
        "items": items,
        "next": next.map(|seq| encode_cursor(&json!(seq))),
    })))
}

#[utoipa::path(
    get,
    path = "/v1/runs/{id}",
    params(("id" = String, Path))
)]
pub async fn get_run(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let run = state
        .store
        .run(id.clone())
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no run {id}")))?;
    Ok(Json(run_json(&state, &run)?))
}

#[utoipa::path(
    post,
    path = "/v1/clusters/{cluster}/runs",
    params(("cluster" = String, Path))
)]
pub async fn post_run(
    State(state): State<AppState>,
    Path(cluster): Path<String>,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    match state.runs.start(&cluster, Trigger::Manual).await {
        Ok((run, _task)) => Ok((StatusCode::ACCEPTED, Json(run_json(&state, &run)?))),
        Err(e) => Err(run_error(e)),
    }
}

/// Maps a refusal to start a run onto the API's errors.
pub fn run_error(e: RunError) -> ApiError {
    match e {
        RunError::AlreadyRunning { ref run_id, .. } => {
            let details = json!({ "runId": run_id });
            ApiError::new(StatusCode::CONFLICT, "run_in_progress", e.to_string())
                .with_details(details)
        }
        RunError::UnknownCluster(_) => ApiError::not_found(e.to_string()),
        other => ApiError::internal(other),
    }
}

/// The API form of a run; a running run carries its live progress.
pub fn run_json(state: &AppState, r: &RunRecord) -> Result<Value, ApiError> {
    let mut v = json!({
        "id": r.id,
        "cluster": r.cluster,
        "trigger": r.trigger,
        "status": r.status,
        "phase": r.phase,
        "startedAt": time_or_null(Some(r.started_at)),
        "finishedAt": time_or_null(r.finished_at),
        "window": {
            "start": time_or_null(Some(r.window_start)),
            "end": time_or_null(Some(r.window_end)),
        },
        "settingsIdentity": r.settings_identity,
        "workloads": {
            "total": r.workloads_total,
            "done": r.workloads_done,
            "failed": r.workloads_failed,
            "stale": r.workloads_stale,
        },
        "recommendations": r.recommendations,
        "phaseMs": stored_json(&r.phase_ms)?,
        "collect": stored_json(&r.collect_stats)?,
        "errors": stored_json(&r.errors)?,
    });
    if r.status == "running" {
        if let Some(p) = state.runs.active().of_run(&r.id) {
            v["phase"] = json!(p.phase);
            v["workloads"]["total"] = json!(p.workloads_total);
            v["workloads"]["done"] = json!(p.workloads_done);
        }
    }
    Ok(v)
}
