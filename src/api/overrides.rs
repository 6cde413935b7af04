//! `PUT` and `DELETE /v1/workloads/{id}/override`: an operator's per-workload override
//! (mode per resource, excluded containers, optional expiry, reason), which beats every
//! policy for the fields it sets until it expires. Audited as `OverrideSet` /
//! `OverrideCleared`, naming the team whose role allowed it.

use axum::body::Body;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::Json;

use super::access::Access;
use super::body::{parse_json, read_limited, MAX_JSON_BYTES};
use super::config_audit::reason_query;
use super::effective::{scoped_workload, workload_context, Scope};
use super::error::ApiError;
use super::state::AppState;
use crate::fleet::workloads::{self, OverrideView};
use crate::policy::OverrideSpec;

/// `PUT /v1/workloads/{id}/override`: the whole override; its `reason` is the audit's.
#[utoipa::path(
    put,
    path = "/v1/workloads/{id}/override",
    summary = "Set the workload's override (mode per resource, excludedContainers, expiresAt, reason). Audited as OverrideSet; an expired override is kept but ignored.",
    params(
        ("id" = String, Path),
    ),
    request_body = OverrideSpec,
    responses(
        (status = 200, description = "The override in force.", body = OverrideView),
    )
)]
pub async fn put_override(
    State(state): State<AppState>,
    access: Access,
    Path(id): Path<String>,
    body: Body,
) -> Result<Json<OverrideView>, ApiError> {
    let w = scoped_workload(&state, &access, &id, Scope::Write).await?;
    let bytes = read_limited(body, MAX_JSON_BYTES).await?;
    let spec: OverrideSpec = parse_json(&bytes)?;
    let reason = (!spec.reason.is_empty()).then(|| spec.reason.clone());
    let ctx = workload_context(&access, &w, reason)?;
    let out = workloads::set_override(&state.store, state.now(), ctx, &w, spec).await?;
    Ok(Json(out))
}

/// `DELETE /v1/workloads/{id}/override[?reason=…]`.
#[utoipa::path(
    delete,
    path = "/v1/workloads/{id}/override",
    summary = "Clear the workload's override (`?reason=`). Audited as OverrideCleared.",
    params(
        ("id" = String, Path),
        ("reason" = Option<String>, Query, max_length = 1024),
    ),
    responses(
        (status = 204, description = "Cleared."),
    )
)]
pub async fn delete_override(
    State(state): State<AppState>,
    access: Access,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<StatusCode, ApiError> {
    let w = scoped_workload(&state, &access, &id, Scope::Write).await?;
    let ctx = workload_context(&access, &w, reason_query(query.as_deref())?)?;
    workloads::clear_override(&state.store, state.now(), ctx, &w).await?;
    Ok(StatusCode::NO_CONTENT)
}
