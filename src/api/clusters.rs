//! `/v1/clusters`: register (the agent token is shown once), read, update metadata,
//! retire, rotate the agent token, the cluster-wide freeze and readiness. The rules and
//! the audit live in `fleet::clusters`; this file parses, calls and serializes.

use std::collections::BTreeMap;

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::access::Access;
use super::body::read_json;
use super::config_audit::context;
use super::error::ApiError;
use super::lists::Items;
use super::query::params::ReasonQuery;
use super::query::parse_time;
use super::query::Query;
use super::state::AppState;
use crate::fleet::clusters::{
    self, ClusterMetaInput, ClusterView, ClusterWithReadiness, FreezeInput, Registered,
};
use crate::fleet::declared::{guard_cluster, ClusterPart};
use crate::fleet::usage_source;
use crate::wire::Readiness;

/// A cluster with its new agent token (shown once).
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct WithToken {
    #[serde(flatten)]
    pub cluster: ClusterView,
    pub token: String,
}

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CreateCluster {
    /// A DNS label: 1 to 63 lower-case letters, digits or '-'.
    #[schema(pattern = r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")]
    name: String,
    #[serde(default)]
    #[schema(pattern = r"^[^\u0000-\u001f\u007f-\u009f]*$", max_length = 100)]
    display_name: String,
    #[serde(default)]
    #[schema(
        pattern = r"^[^\u0000-\u0008\u000b-\u001f\u007f-\u009f]*$",
        max_length = 500
    )]
    description: String,
    /// At most 64; keys are 1 to 63 letters, digits, '-', '_', '.' or '/', starting
    /// and ending with a letter or digit; values at most 253 characters.
    #[serde(default)]
    #[schema(schema_with = label_map)]
    labels: BTreeMap<String, String>,
    #[schema(max_length = 1024)]
    reason: Option<String>,
}

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct UpdateCluster {
    #[schema(pattern = r"^[^\u0000-\u001f\u007f-\u009f]*$", max_length = 100)]
    display_name: Option<String>,
    #[schema(
        pattern = r"^[^\u0000-\u0008\u000b-\u001f\u007f-\u009f]*$",
        max_length = 500
    )]
    description: Option<String>,
    /// As on create; replaces them all.
    #[schema(schema_with = label_map)]
    labels: Option<BTreeMap<String, String>>,
    #[schema(max_length = 1024)]
    reason: Option<String>,
}

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReasonBody {
    #[schema(max_length = 1024)]
    reason: Option<String>,
}

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FreezeBody {
    enabled: bool,
    /// Required to freeze.
    #[schema(max_length = 1024)]
    reason: Option<String>,
    /// RFC 3339, ahead; only when freezing.
    #[schema(format = DateTime)]
    until: Option<String>,
}

/// The schema of cluster labels: what `fleet::clusters` (`names::label_key`,
/// `names::text`) accepts.
fn label_map() -> utoipa::openapi::Object {
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    let key = ObjectBuilder::new()
        .schema_type(Type::String)
        .pattern(Some(r"^[A-Za-z0-9]([A-Za-z0-9._/-]{0,61}[A-Za-z0-9])?$"));
    let value = ObjectBuilder::new()
        .schema_type(Type::String)
        .max_length(Some(253))
        .pattern(Some(r"^[^\u0000-\u001f\u007f-\u009f]*$"));
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .max_properties(Some(64))
        .property_names(Some(key))
        .additional_properties(Some(value))
        .build()
}

/// `GET /v1/clusters`: every cluster (retired ones too) with its readiness.
#[utoipa::path(
    get,
    path = "/v1/clusters",
    summary = "Every cluster (retired ones too, kept for audit) with its readiness state and reasons, and where its usage comes from.",
    description = "usage.kind: datasource (the linked datasource, by name), embedded (the hub's usage store, which the cluster's agent collects into or a Prometheus remote writer sends to: usage.embedded tells its series and history), demo, or none. Null for retired clusters.",
    responses(
        (status = 200, description = "Every cluster with its readiness.", body = Items<ClusterWithReadiness>),
    )
)]
pub async fn list(
    State(state): State<AppState>,
    access: Access,
) -> Result<Json<Items<ClusterWithReadiness>>, ApiError> {
    let mut items = clusters::list(&state.store).await?;
    usage_source::attach(&state.runs, &state.store, &mut items).await?;
    items.iter_mut().for_each(|c| shown_reasons(&access, c));
    Ok(Json(Items::new(items)))
}

/// A cluster's readiness reasons as `access` may read them (a datasource's words only
/// for editors).
fn shown_reasons(access: &Access, c: &mut ClusterWithReadiness) {
    for reason in c.readiness.iter_mut().flat_map(|r| r.reasons.iter_mut()) {
        *reason = access.datasource_text(reason).into_owned();
    }
}

/// `GET /v1/clusters/{cluster}`.
#[utoipa::path(
    get,
    path = "/v1/clusters/{cluster}",
    summary = "One cluster, with its readiness state and reasons and where its usage comes from (both null once retired).",
    params(
        ("cluster" = String, Path),
    ),
    responses(
        (status = 200, description = "Cluster", body = ClusterWithReadiness),
    )
)]
pub async fn get(
    State(state): State<AppState>,
    access: Access,
    Path(name): Path<String>,
) -> Result<Json<ClusterWithReadiness>, ApiError> {
    let mut one = [clusters::get(&state.store, name).await?];
    usage_source::attach(&state.runs, &state.store, &mut one).await?;
    let [mut one] = one;
    shown_reasons(&access, &mut one);
    Ok(Json(one))
}

/// `POST /v1/clusters`: `ClusterCreated`; answers with the agent token, shown once.
#[utoipa::path(
    post,
    path = "/v1/clusters",
    summary = "Register a cluster (ClusterCreated); the agent token is in the answer, shown once.",
    description = "Body {name, displayName?, description?, labels?, reason?}. name is a DNS label. 201 returns the Cluster plus `token`. A taken name (retired clusters included) is 409.",
    request_body = CreateCluster,
    responses(
        (status = 201, description = "The cluster and its agent token (shown once).", body = Registered),
        (status = 409, description = "An error.", body = super::error::ErrorBody),
    )
)]
pub async fn create(
    State(state): State<AppState>,
    access: Access,
    body: Body,
) -> Result<(StatusCode, Json<Registered>), ApiError> {
    let b: CreateCluster = read_json(body).await?;
    let ctx = context(&access, b.reason)?;
    let meta = ClusterMetaInput {
        display_name: Some(b.display_name),
        description: Some(b.description),
        labels: Some(b.labels),
    };
    let made = clusters::register(&state.store, state.now(), ctx, b.name, meta).await?;
    Ok((StatusCode::CREATED, Json(made)))
}

/// `PATCH /v1/clusters/{cluster}`: `ClusterUpdated`.
#[utoipa::path(
    patch,
    path = "/v1/clusters/{cluster}",
    summary = "Update metadata (ClusterUpdated). Body {displayName?, description?, labels?, reason?}.",
    params(
        ("cluster" = String, Path),
    ),
    request_body = Option<UpdateCluster>,
    responses(
        (status = 200, description = "Cluster", body = ClusterView),
        (status = 409, description = "The cluster is retired (code refused), or declared in the config file (code declared_in_config).", body = super::error::ErrorBody),
    )
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
    guard_cluster(&state.config.fleet, &name, ClusterPart::Metadata)?;
    Ok(Json(
        clusters::update(&state.store, state.now(), ctx, name, meta).await?,
    ))
}

/// `DELETE /v1/clusters/{cluster}?reason=`: retire (`ClusterDeleted`).
#[utoipa::path(
    delete,
    path = "/v1/clusters/{cluster}",
    summary = "Retire (ClusterDeleted, ?reason=). Soft: the record and its data stay; the agent token stops working.",
    params(
        ("cluster" = String, Path),
        ("reason" = Option<String>, Query, max_length = 1024),
    ),
    responses(
        (status = 204, description = "Retired."),
        (status = 409, description = "Already retired (code refused), or declared in the config file (code declared_in_config).", body = super::error::ErrorBody),
    )
)]
pub async fn retire(
    State(state): State<AppState>,
    access: Access,
    Path(name): Path<String>,
    Query(q): Query<ReasonQuery>,
) -> Result<StatusCode, ApiError> {
    let ctx = context(&access, q.reason)?;
    guard_cluster(&state.config.fleet, &name, ClusterPart::Existence)?;
    clusters::retire(&state.store, state.now(), ctx, name).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /v1/clusters/{cluster}/token`: a new agent token (shown once).
#[utoipa::path(
    post,
    path = "/v1/clusters/{cluster}/token",
    summary = "Rotate the agent token; the old one is refused at once. Audited as ClusterUpdated (tokenRotatedAt), never the value.",
    params(
        ("cluster" = String, Path),
    ),
    request_body = Option<ReasonBody>,
    responses(
        (status = 200, description = "The cluster and its new agent token (shown once).", body = WithToken),
        (status = 409, description = "An error.", body = super::error::ErrorBody),
    )
)]
pub async fn rotate_token(
    State(state): State<AppState>,
    access: Access,
    Path(name): Path<String>,
    body: Body,
) -> Result<Json<WithToken>, ApiError> {
    let b: ReasonBody = read_json(body).await?;
    let ctx = context(&access, b.reason)?;
    guard_cluster(&state.config.fleet, &name, ClusterPart::Token)?;
    let (c, token) = clusters::rotate_token(&state.store, state.now(), ctx, name).await?;
    Ok(Json(WithToken { cluster: c, token }))
}

/// `PUT /v1/clusters/{cluster}/freeze`: the cluster-wide freeze on (with a reason and an
/// optional `until`) or off. Audited as `ClusterUpdated`.
#[utoipa::path(
    put,
    path = "/v1/clusters/{cluster}/freeze",
    summary = "The cluster-wide freeze on or off (ClusterUpdated). Body {enabled, reason (required when enabling), until?}.",
    params(
        ("cluster" = String, Path),
    ),
    request_body = FreezeBody,
    responses(
        (status = 200, description = "Cluster (freeze {enabled, reason, since, until})", body = ClusterView),
    )
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
    summary = "Readiness (ready, degraded, not-ready) with reasons and each check; docs/contracts/readiness.md.",
    params(
        ("cluster" = String, Path),
    ),
    responses(
        (status = 200, description = "{cluster, state, reasons, checks {heartbeat, datasource, lastRun}, since, evaluatedAt}", body = Readiness),
    )
)]
pub async fn readiness(
    State(state): State<AppState>,
    access: Access,
    Path(name): Path<String>,
) -> Result<Json<Readiness>, ApiError> {
    let mut r = crate::readiness::current(&state.store, name).await?;
    for reason in &mut r.reasons {
        *reason = access.datasource_text(reason).into_owned();
    }
    let checks = [("datasource", "message"), ("lastRun", "error")];
    for (check, key) in checks {
        if let Some(Value::String(text)) = r.checks.pointer_mut(&format!("/{check}/{key}")) {
            *text = access.datasource_text(text).into_owned();
        }
    }
    Ok(Json(r))
}
