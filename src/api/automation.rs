//! Pause and resume of automation: `POST /v1/clusters/{cluster}/pause|resume` for one
//! cluster and `POST /v1/fleet/pause|resume` for the whole fleet (audit target
//! `automation`, id = cluster or `*`). A pause needs a reason and may carry `resumeAt`,
//! when the fleet ticker resumes it (actor `system`).

use axum::body::Body;
use axum::extract::{Path, State};
use axum::Json;
use serde::{Deserialize, Serialize};

use super::access::Access;
use super::body::read_json;
use super::config_audit::context;
use super::error::ApiError;
use super::lists::Items;
use super::query::parse_time;
use super::state::AppState;
use crate::fleet::pause;
use crate::store::automation::FLEET_SCOPE;
use crate::wire::Pause;

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PauseBody {
    /// Why: a pause needs one (not only spaces).
    #[schema(required = true, pattern = r"\S", max_length = 1024)]
    reason: Option<String>,
    /// RFC 3339, ahead: when automation resumes by itself.
    #[schema(format = DateTime)]
    resume_at: Option<String>,
}

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ResumeBody {
    #[schema(max_length = 1024)]
    reason: Option<String>,
}

async fn do_pause(
    state: &AppState,
    access: &Access,
    scope: String,
    body: Body,
) -> Result<Json<Pause>, ApiError> {
    let b: PauseBody = read_json(body).await?;
    let resume_at = b
        .resume_at
        .as_deref()
        .map(|t| parse_time("resumeAt", t))
        .transpose()?;
    let ctx = context(access, b.reason)?;
    let out = pause::pause(&state.store, state.now(), ctx, scope, resume_at).await?;
    state.fleet.wake();
    Ok(Json(out))
}

async fn do_resume(
    state: &AppState,
    access: &Access,
    scope: String,
    body: Body,
) -> Result<Json<Pause>, ApiError> {
    let b: ResumeBody = read_json(body).await?;
    let ctx = context(access, b.reason)?;
    let out = pause::resume(&state.store, state.now(), ctx, scope).await?;
    state.fleet.wake();
    Ok(Json(out))
}

/// `POST /v1/clusters/{cluster}/pause`: `AutomationPaused` (id = cluster).
#[utoipa::path(
    post,
    path = "/v1/clusters/{cluster}/pause",
    summary = "Pause automation of one cluster (AutomationPaused, target automation/<cluster>). Body {reason, resumeAt?}.",
    description = "The agent stops changing workloads (blocked Paused, pauseScope cluster); runs continue. At resumeAt the hub resumes it itself (AutomationResumed, actor type system). Pausing a paused cluster replaces reason and resumeAt.",
    params(
        ("cluster" = String, Path),
    ),
    request_body = PauseBody,
    responses(
        (status = 200, description = "Pause {id, scope, paused, reason, pausedAt, pausedBy, resumeAt}", body = Pause),
    )
)]
pub async fn pause_cluster(
    State(state): State<AppState>,
    access: Access,
    Path(cluster): Path<String>,
    body: Body,
) -> Result<Json<Pause>, ApiError> {
    do_pause(&state, &access, cluster, body).await
}

/// `POST /v1/clusters/{cluster}/resume`: `AutomationResumed` (id = cluster).
#[utoipa::path(
    post,
    path = "/v1/clusters/{cluster}/resume",
    summary = "Resume automation of one cluster (AutomationResumed). Body {reason?}. 409 when not paused.",
    params(
        ("cluster" = String, Path),
    ),
    request_body = Option<ResumeBody>,
    responses(
        (status = 200, description = "{id, scope, paused: false}", body = Pause),
        (status = 409, description = "An error.", body = super::error::ErrorBody),
    )
)]
pub async fn resume_cluster(
    State(state): State<AppState>,
    access: Access,
    Path(cluster): Path<String>,
    body: Body,
) -> Result<Json<Pause>, ApiError> {
    do_resume(&state, &access, cluster, body).await
}

/// `POST /v1/fleet/pause`: `AutomationPaused` (id = `*`).
#[utoipa::path(
    post,
    path = "/v1/fleet/pause",
    summary = "Pause automation of the whole fleet (AutomationPaused, target automation/*). Body {reason, resumeAt?}.",
    request_body = PauseBody,
    responses(
        (status = 200, description = "Pause (scope fleet, id *)", body = Pause),
    )
)]
pub async fn pause_fleet(
    State(state): State<AppState>,
    access: Access,
    body: Body,
) -> Result<Json<Pause>, ApiError> {
    do_pause(&state, &access, FLEET_SCOPE.into(), body).await
}

/// `POST /v1/fleet/resume`: `AutomationResumed` (id = `*`).
#[utoipa::path(
    post,
    path = "/v1/fleet/resume",
    summary = "Resume automation of the fleet (AutomationResumed, id *). 409 when not paused.",
    request_body = Option<ResumeBody>,
    responses(
        (status = 200, description = "{id: *, scope: fleet, paused: false}", body = Pause),
        (status = 409, description = "An error.", body = super::error::ErrorBody),
    )
)]
pub async fn resume_fleet(
    State(state): State<AppState>,
    access: Access,
    body: Body,
) -> Result<Json<Pause>, ApiError> {
    do_resume(&state, &access, FLEET_SCOPE.into(), body).await
}

/// `GET /v1/fleet/automation`: every pause in force.
#[utoipa::path(
    get,
    path = "/v1/fleet/automation",
    summary = "Every pause in force (fleet and clusters).",
    responses(
        (status = 200, description = "The pauses in force.", body = Items<Pause>),
    )
)]
pub async fn list_pauses(State(state): State<AppState>) -> Result<Json<Items<Pause>>, ApiError> {
    Ok(Json(Items::new(pause::list(&state.store).await?)))
}
