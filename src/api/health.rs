//! Liveness, readiness, metrics and the API document.

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use super::AppState;

/// `GET /healthz`: the process is up and serving.
#[utoipa::path(
    get,
    path = "/healthz"
)]
pub async fn healthz() -> Json<serde_json::Value> {
    Json(json!({ "status": "ok" }))
}

/// `GET /readyz`: the database answers, its schema is current and no background job
/// has failed; lists the jobs and their state.
#[utoipa::path(
    get,
    path = "/readyz"
)]
pub async fn readyz(State(state): State<AppState>) -> Response {
    let jobs = state.jobs.statuses();
    let failed = jobs
        .iter()
        .find(|j| j.state == crate::jobs::JobState::Failed);
    if let Some(job) = failed {
        return super::error::ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "not_ready",
            format!("background job {:?} failed; kerf is stopping", job.name),
        )
        .into_response();
    }
    if state.store.is_current().await {
        Json(json!({ "status": "ready", "jobs": jobs })).into_response()
    } else {
        super::error::ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "not_ready",
            "database is not open or its migrations are not current",
        )
        .into_response()
    }
}

/// `GET /metrics`: Prometheus text exposition.
#[utoipa::path(
    get,
    path = "/metrics"
)]
pub async fn metrics(State(state): State<AppState>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        state.metrics.render(),
    )
        .into_response()
}

/// `GET /v1/openapi.yaml`.
#[utoipa::path(
    get,
    path = "/v1/openapi.yaml"
)]
pub async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/yaml")], super::document::yaml()).into_response()
}
