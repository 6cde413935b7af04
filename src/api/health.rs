//! Liveness, readiness, metrics and the API document.

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;

use super::state::AppState;
use crate::jobs::JobStatus;

/// `GET /healthz`.
#[derive(Debug, Serialize, ToSchema)]
pub struct Live {
    /// Always `ok`.
    pub status: &'static str,
}

/// `GET /readyz` when it serves.
#[derive(Debug, Serialize, ToSchema)]
pub struct Ready {
    /// `ready`, or `degraded` while database writes fail for a reason of the storage
    /// (the disk is full, …): reads still answer, writes get 503 `store_unavailable`.
    #[schema(example = "ready")]
    pub status: &'static str,
    /// Why it is `degraded` (absent when ready).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
    /// Every background job and its state.
    pub jobs: Vec<JobStatus>,
}

/// `GET /healthz`: the process is up and serving.
#[utoipa::path(
    get,
    path = "/healthz",
    summary = "Liveness.",
    responses(
        (status = 200, description = "The process serves requests.", body = Live),
    )
)]
pub async fn healthz() -> Json<Live> {
    Json(Live { status: "ok" })
}

/// `GET /readyz`: the database answers, its schema is current and no background job
/// has failed; lists the jobs and their state. `degraded` (still 200: reads answer, and
/// the first write that succeeds clears it) while the database cannot write.
#[utoipa::path(
    get,
    path = "/readyz",
    summary = "Readiness (database open, migrations current); degraded while the database cannot write.",
    description = "200 with status `ready`, or `degraded` with `reasons` while database writes fail for a reason of the storage (the disk full, the file system read-only, I/O errors): reads still answer, writes (agents' heartbeats and events included) get 503 `store_unavailable` with `Retry-After`, and the first write that succeeds again ends it. 503 `not_ready` when the database is not open, its migrations are not current, or a background job failed.",
    responses(
        (status = 200, description = "Ready or degraded.", body = Ready),
        (status = 503, description = "An error.", body = super::error::ErrorBody),
    )
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
        let failing = state.store.write_failure();
        let reasons: Vec<String> = failing
            .iter()
            .map(|f| f.reason(std::time::Instant::now()))
            .collect();
        Json(Ready {
            status: if reasons.is_empty() {
                "ready"
            } else {
                "degraded"
            },
            reasons,
            jobs,
        })
        .into_response()
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
    path = "/metrics",
    summary = "Prometheus text exposition (docs/contracts/metrics.md).",
    description = "Public unless `http.metrics_require_token` is set; then it needs a bearer token (or session) of any fleet role, since its labels name clusters.",
    responses(
        (status = 200, description = "Metrics.", content_type = "application/openmetrics-text; version=1.0.0; charset=utf-8", body = String),
    )
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
    path = "/v1/openapi.yaml",
    summary = "This document.",
    responses(
        (status = 200, description = "OpenAPI 3.1 YAML.", content_type = "application/yaml", body = Object),
    )
)]
pub async fn openapi() -> Response {
    (
        [(header::CONTENT_TYPE, "application/yaml")],
        super::document::SERVED,
    )
        .into_response()
}
