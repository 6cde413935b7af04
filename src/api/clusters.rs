//! `/v1/clusters`: register (the agent token is shown once), read, update metadata,
//! retire, rotate the agent token, the cluster-wide freeze and readiness. The rules and
//! the audit live in `fleet::clusters`; this file parses, calls and serializes.

use std::collections::BTreeMap;

use axum::body::Body;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::access::Access;
use super::body::read_json;
use super::config_audit::{context, reason_query};
use super::error::ApiError;
use super::query::parse_time;
use super::AppState;
use crate::fleet::clusters::{
    self, ClusterMetaInput, ClusterView, ClusterWithReadiness, FreezeInput,
};
use crate::wire::Readiness;

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CreateCluster {
    name: String,
    #[serde(default)]
    display_name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    labels: BTreeMap<String, String>,
    reason: Option<String>,
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct UpdateCluster {
    display_name: Option<String>,
    description: Option<String>,
    labels: Option<BTreeMap<String, String>>,
    reason: Option<String>,
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReasonBody {
    reason: Option<String>,
}

#[derive(Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FreezeBody {
    enabled: bool,
    reason: Option<String>,
    until: Option<String>,
}

/// `GET /v1/clusters`: every cluster (retired ones too) with its readiness.
#[utoipa::path(
    get,
    path = "/v1/clusters"
)]
pub async fn list(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    let items = clusters::list(&state.store).await?;
    Ok(Json(json!({ "items": items })))
}

/// `GET /v1/clusters/{cluster}`.
#[utoipa::path(
    get,
    path = "/v1/clusters/{cluster}",
    params(("cluster" = String, Path))
)]
pub async fn get(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Json<ClusterWithReadiness>, ApiError> {
    Ok(Json(clusters::get(&state.store, name).await?))
}

/// `POST /v1/clusters`: `ClusterCreated`; answers with the agent token, shown once.
#[utoipa::path(
    post,
    path = "/v1/clusters"
)]
pub async fn create(
    State(state): State<AppState>,
    access: Access,
    body: Body,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let b: CreateCluster = read_json(body).await?;
    let ctx = context(&access, b.reason)?;
    let meta = ClusterMetaInput {
        display_name: Some(b.display_name),
        description: Some(b.description),
        labels: Some(b.labels),
    };
    let made = clusters::register(&state.store, state.now(), ctx, b.name, meta).await?;
    let mut out = json!(made.cluster);
    out["token"] = json!(made.token);
    Ok((StatusCode::CREATED, Json(out)))
}

/// `PATCH /v1/clusters/{cluster}`: `ClusterUpdated`.
#[utoipa::path(
    patch,
    path = "/v1/clusters/{cluster}",
    params(("cluster" = String, Path))
)]
pub async fn update(
    State(state): State<AppState>,
    access: Access,
    Path(name): Path<String>,
    body: Body,
) -> Result<Json<ClusterView>, ApiError> {
    let b: UpdateCluster = read_json(body).await?;
    let ctx = context(&access, b.reason)?;
    let meta = ClusterMetaInput {
        display_name: b.display_name,
        description: b.description,
        labels: b.labels,
    };
    Ok(Json(
        clusters::update(&state.store, state.now(), ctx, name, meta).await?,
    ))
}

/// `DELETE /v1/clusters/{cluster}?reason=`: retire (`ClusterDeleted`).
#[utoipa::path(
    delete,
    path = "/v1/clusters/{cluster}",
    params(("cluster" = String, Path))
)]
pub async fn retire(
    State(state): State<AppState>,
    access: Access,
    Path(name): Path<String>,
    RawQuery(q): RawQuery,
) -> Result<StatusCode, ApiError> {
    let ctx = context(&access, reason_query(q.as_deref())?)?;
    clusters::retire(&state.store, state.now(), ctx, name).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /v1/clusters/{cluster}/token`: a new agent token (shown once).
#[utoipa::path(
    post,
    path = "/v1/clusters/{cluster}/token",
    params(("cluster" = String, Path))
)]
pub async fn rotate_token(
    State(state): State<AppState>,
    access: Access,
    Path(name): Path<String>,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let b: ReasonBody = read_json(body).await?;
    let ctx = context(&access, b.reason)?;
    let (c, token) = clusters::rotate_token(&state.store, state.now(), ctx, name).await?;
    let mut out = json!(c);
    out["token"] = json!(token);
    Ok(Json(out))
}

/// `PUT /v1/clusters/{cluster}/freeze`: the cluster-wide freeze on (with a reason and an
/// optional `until`) or off. Audited as `ClusterUpdated`.
#[utoipa::path(
    put,
    path = "/v1/clusters/{cluster}/freeze",
    params(("cluster" = String, Path))
)]
pub async fn put_freeze(
    State(state): State<AppState>,
    access: Access,
    Path(name): Path<String>,
    body: Body,
) -> Result<Json<ClusterView>, ApiError> {
    let b: FreezeBody = read_json(body).await?;
    let until = b
        .until
        .as_deref()
        .map(|u| parse_time("until", u))
        .transpose()?;
    let input = FreezeInput {
        enabled: b.enabled,
        reason: b.reason.clone(),
        until,
    };
    let ctx = context(&access, b.reason)?;
    Ok(Json(
        clusters::set_freeze(&state.store, state.now(), ctx, name, input).await?,
    ))
}

/// `GET /v1/clusters/{cluster}/readiness`: state, reasons and each check.
#[utoipa::path(
    get,
    path = "/v1/clusters/{cluster}/readiness",
    params(("cluster" = String, Path))
)]
pub async fn readiness(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Json<Readiness>, ApiError> {
    Ok(Json(crate::readiness::current(&state.store, name).await?))
}
