//! `POST /v1/workloads/{id}/approve` with `{recommendationId, reason}`: an operator
//! approves one recommendation once, for a workload whose effective mode is `audit` (for
//! at least one resource). Only the workload's latest recommendation made under its
//! current effective policy can be approved; one approval per recommendation, ever. The
//! agent sees it in its recommendation feed and applies it as `ApprovedOnce`, which
//! consumes it. Audited as `WorkloadApproved`.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};

use super::access::Access;
use super::body::read_json;
use super::effective::{scoped_workload, workload_context, Scope};
use super::error::ApiError;
use super::state::AppState;
use crate::fleet::workloads::{self, ApprovalView};

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApproveBody {
    recommendation_id: String,
    #[serde(default)]
    reason: Option<String>,
}

#[utoipa::path(
    post,
    path = "/v1/workloads/{id}/approve",
    summary = "Approve the workload's latest, non-stale recommendation once (the workload must be in audit mode for at least one resource). The agent feed shows the pending approval; the agent's `applied ApprovedOnce` event with details.approvalId consumes it. Audited as WorkloadApproved. 409 not_audit_mode, recommendation_superseded, recommendation_stale, already_approved.",
    params(
        ("id" = String, Path),
    ),
    request_body = ApproveBody,
    responses(
        (status = 201, description = "The approval.", body = ApprovalView),
        (status = 409, description = "An error.", body = super::error::ErrorBody),
    )
)]
pub async fn approve(
    State(state): State<AppState>,
    access: Access,
    Path(id): Path<String>,
    body: axum::body::Body,
) -> Result<Response, ApiError> {
    let body: ApproveBody = read_json(body).await?;
    let w = scoped_workload(&state, &access, &id, Scope::Write).await?;
    let ctx = workload_context(&access, &w, body.reason)?;
    let (store, runs, now) = (&state.store, &state.runs, state.now());
    let a = workloads::approve(store, runs, now, ctx, &w, body.recommendation_id).await?;
    Ok((StatusCode::CREATED, Json(a)).into_response())
}
