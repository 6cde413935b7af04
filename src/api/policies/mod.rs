//! `/v1/policies`: RightsizingPolicies. Create, list, read, replace, soft delete, the
//! version history and revert. Every write names the version it read (`If-Match: "<n>"`
//! or in the body/query) and is refused with `version_conflict` when another write came
//! first; every write lands whole with its `config_changed` row. Validation reports every
//! bad field with its JSON path in one 400 `invalid_policy`.

use axum::body::Body;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::de::{Deserializer, Error as _};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

mod write;

pub use write::{PolicyWrite, RevertBody};

use super::access::Access;
use super::config_audit::context;
use super::error::ApiError;
use super::ids::{self, Id};
use super::lists::Items;
use super::query::Query;
use super::state::AppState;
use crate::fleet::policies::{self, policy_json, version_json, PolicyVersionView, PolicyView};
use crate::store::policies::PolicyRecord;

/// A policy's version history.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PolicyVersions {
    pub policy_id: i64,
    pub items: Vec<PolicyVersionView>,
}

/// `DELETE /v1/policies/{id}`'s query.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DeleteQuery {
    reason: Option<String>,
    #[serde(deserialize_with = "version_number")]
    version: Option<i64>,
}

fn version_number<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    String::deserialize(d)?
        .parse::<i64>()
        .map(Some)
        .map_err(|_| D::Error::custom("must be a positive integer"))
}

/// `GET /v1/policies`' query.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ListQuery {
    deleted: Option<bool>,
}

/// A policy answer with its version as the ETag.
fn with_etag(status: StatusCode, p: &PolicyRecord) -> Response {
    let etag = format!("\"{}\"", p.version);
    (status, [(header::ETAG, etag)], Json(policy_json(p))).into_response()
}

/// The version a write expects: `If-Match` (412 when stale) or the body's (409).
#[derive(Debug, Clone, Copy)]
struct Expected {
    version: i64,
    from_header: bool,
}

fn expected(headers: &HeaderMap, body: Option<i64>, field: &str) -> Result<Expected, ApiError> {
    if let Some(v) = headers.get(header::IF_MATCH) {
        // An entity tag as this API writes them: `"3"` (or weak, `W/"3"`).
        let text = v.to_str().unwrap_or("").trim();
        let text = text.strip_prefix("W/").unwrap_or(text);
        let digits = text
            .strip_prefix('"')
            .and_then(|t| t.strip_suffix('"'))
            .filter(|d| (1..=18).contains(&d.len()) && d.bytes().all(|b| b.is_ascii_digit()));
        let version = digits.and_then(|d| d.parse::<i64>().ok()).ok_or_else(|| {
            ApiError::bad_request(
                "invalid_if_match",
                "If-Match must be the policy version, e.g. \"3\"",
            )
        })?;
        return Ok(Expected {
            version,
            from_header: true,
        });
    }
    body.map(|version| Expected {
        version,
        from_header: false,
    })
    .ok_or_else(|| {
        ApiError::new(
            StatusCode::PRECONDITION_REQUIRED,
            "version_required",
            format!("send If-Match: \"<version>\" or `{field}` with the version you read"),
        )
    })
}

/// Maps a stale version to 412 (If-Match) or 409 (body), both `version_conflict`.
fn conflict(e: crate::operation::OpError, exp: Expected) -> ApiError {
    let mut err = ApiError::from(e);
    if err.code == "version_conflict" && exp.from_header {
        err.status = StatusCode::PRECONDITION_FAILED;
    }
    err
}

/// `GET /v1/policies[?deleted=true]`.
#[utoipa::path(
    get,
    path = "/v1/policies",
    summary = "Live policies (`?deleted=true` adds soft-deleted ones).",
    params(
        ("deleted" = Option<bool>, Query, description = "Default False."),
    ),
    responses(
        (status = 200, description = "The policies.", body = Items<PolicyView>),
    )
)]
pub async fn list(
    State(state): State<AppState>,
    Query(q): Query<ListQuery>,
) -> Result<Json<Items<PolicyView>>, ApiError> {
    let deleted = q.deleted.unwrap_or(false);
    let items = policies::list(&state.store, deleted)
        .await?
        .iter()
        .map(policy_json)
        .collect();
    Ok(Json(Items::new(items)))
}

async fn fetch(state: &AppState, id: i64) -> Result<PolicyRecord, ApiError> {
    Ok(policies::get(&state.store, id).await?)
}

/// `GET /v1/policies/{id}` (soft-deleted ones too, with `deletedAt`).
#[utoipa::path(
    get,
    path = "/v1/policies/{id}",
    summary = "One policy (soft-deleted too). ETag = its version.",
    params(
        ("id" = i64, Path),
    ),
    responses(
        (status = 200, description = "The policy.", body = PolicyView, headers(("ETag" = String, description = "The version, quoted"))),
    )
)]
pub async fn get(
    State(state): State<AppState>,
    Id(id, _): Id<ids::Policy>,
) -> Result<Response, ApiError> {
    Ok(with_etag(StatusCode::OK, &fetch(&state, id).await?))
}

/// `POST /v1/policies`: the policy document plus an optional `reason`.
#[utoipa::path(
    post,
    path = "/v1/policies",
    summary = "Create a policy (the RightsizingPolicy document of docs/contracts/policy.md plus an optional `reason`). 400 invalid_policy lists every bad field in details.errors [{path, message}]; 409 conflict when a live policy has the name. ETag = the version.",
    request_body = PolicyWrite,
    responses(
        (status = 201, description = "The policy at version 1.", body = PolicyView, headers(("ETag" = String, description = "The version, quoted"))),
        (status = 409, description = "An error.", body = super::error::ErrorBody),
    )
)]
pub async fn create(
    State(state): State<AppState>,
    access: Access,
    body: Body,
) -> Result<Response, ApiError> {
    let (ctx, write) = PolicyWrite::read(body, &access, false).await?;
    let p = policies::create(&state.store, state.now(), ctx, write.spec).await?;
    Ok(with_etag(StatusCode::CREATED, &p))
}

/// `PUT /v1/policies/{id}`: the whole new document, `If-Match` or `version`, `reason`.
#[utoipa::path(
    put,
    path = "/v1/policies/{id}",
    summary = "Replace a policy's document. Needs `If-Match` with the version read (412 version_conflict when stale) or `version` in the body (409 version_conflict); 428 version_required without either. Appends version n+1.",
    params(
        ("id" = i64, Path),
        ("If-Match" = Option<String>, Header, pattern = r#"^(W/)?"[0-9]{1,18}"$"#, description = "The version read, e.g. \"3\""),
    ),
    request_body = PolicyWrite,
    responses(
        (status = 200, description = "The policy at its new version.", body = PolicyView, headers(("ETag" = String, description = "The version, quoted"))),
        (status = 409, description = "An error.", body = super::error::ErrorBody),
        (status = 412, description = "An error.", body = super::error::ErrorBody),
        (status = 428, description = "An error.", body = super::error::ErrorBody),
    )
)]
pub async fn replace(
    State(state): State<AppState>,
    access: Access,
    Id(id, _): Id<ids::Policy>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let (ctx, write) = PolicyWrite::read(body, &access, true).await?;
    let exp = expected(&headers, write.version, "version")?;
    let p = policies::replace(&state.store, state.now(), ctx, id, exp.version, write.spec)
        .await
        .map_err(|e| conflict(e, exp))?;
    Ok(with_etag(StatusCode::OK, &p))
}

/// `DELETE /v1/policies/{id}[?version=n&reason=…]` (or `If-Match`): soft delete.
#[utoipa::path(
    delete,
    path = "/v1/policies/{id}",
    summary = "Soft-delete a policy (history kept, name reusable). `If-Match` or `?version=`; `?reason=`.",
    params(
        ("id" = i64, Path),
        ("If-Match" = Option<String>, Header, pattern = r#"^(W/)?"[0-9]{1,18}"$"#, description = "The version read, e.g. \"3\""),
        ("version" = Option<i64>, Query, minimum = 1),
        ("reason" = Option<String>, Query, max_length = 1024),
    ),
    responses(
        (status = 204, description = "Deleted."),
        (status = 409, description = "An error.", body = super::error::ErrorBody),
        (status = 412, description = "An error.", body = super::error::ErrorBody),
        (status = 428, description = "An error.", body = super::error::ErrorBody),
    )
)]
pub async fn delete(
    State(state): State<AppState>,
    access: Access,
    Id(id, _): Id<ids::Policy>,
    headers: HeaderMap,
    Query(q): Query<DeleteQuery>,
) -> Result<StatusCode, ApiError> {
    let ctx = context(&access, q.reason)?;
    let exp = expected(&headers, q.version, "version")?;
    policies::delete(&state.store, state.now(), ctx, id, exp.version)
        .await
        .map_err(|e| conflict(e, exp))?;
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /v1/policies/{id}/versions`: the whole history, oldest first.
#[utoipa::path(
    get,
    path = "/v1/policies/{id}/versions",
    summary = "The policy's version history, oldest first, with no gaps.",
    params(
        ("id" = i64, Path),
    ),
    responses(
        (status = 200, description = "Every version, oldest first.", body = PolicyVersions),
    )
)]
pub async fn versions(
    State(state): State<AppState>,
    Id(id, _): Id<ids::Policy>,
) -> Result<Json<PolicyVersions>, ApiError> {
    let p = fetch(&state, id).await?;
    let items = policies::versions(&state.store, p.id)
        .await?
        .iter()
        .map(version_json)
        .collect();
    Ok(Json(PolicyVersions {
        policy_id: p.id,
        items,
    }))
}

/// `GET /v1/policies/{id}/versions/{version}`.
#[utoipa::path(
    get,
    path = "/v1/policies/{id}/versions/{version}",
    summary = "One version of a policy.",
    params(
        ("id" = i64, Path),
        ("version" = i64, Path),
    ),
    responses(
        (status = 200, description = "The version.", body = PolicyVersionView),
    )
)]
pub async fn version(
    State(state): State<AppState>,
    Id(id, _): Id<ids::Policy>,
    Id(n, _): Id<ids::PolicyVersion>,
) -> Result<Json<PolicyVersionView>, ApiError> {
    let p = fetch(&state, id).await?;
    let v = policies::version(&state.store, p.id, n).await?;
    Ok(Json(version_json(&v)))
}

/// `POST /v1/policies/{id}/revert` with `{version, reason}`: appends a new version with
/// the content of `version`. The version read comes as `If-Match` or `currentVersion`.
#[utoipa::path(
    post,
    path = "/v1/policies/{id}/revert",
    summary = "Revert to an earlier version's content: body {version, reason}; the version read as If-Match or `currentVersion`. Appends a new version. Audited as PolicyReverted.",
    params(
        ("id" = i64, Path),
        ("If-Match" = Option<String>, Header, pattern = r#"^(W/)?"[0-9]{1,18}"$"#, description = "The version read, e.g. \"3\""),
    ),
    request_body = RevertBody,
    responses(
        (status = 200, description = "The policy at its new version.", body = PolicyView, headers(("ETag" = String, description = "The version, quoted"))),
        (status = 409, description = "An error.", body = super::error::ErrorBody),
        (status = 412, description = "An error.", body = super::error::ErrorBody),
        (status = 428, description = "An error.", body = super::error::ErrorBody),
    )
)]
pub async fn revert(
    State(state): State<AppState>,
    access: Access,
    Id(id, _): Id<ids::Policy>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let (ctx, revert) = RevertBody::read(body, &access).await?;
    let exp = expected(&headers, revert.current_version, "currentVersion")?;
    let to = revert.version;
    let p = policies::revert(&state.store, state.now(), ctx, id, exp.version, to)
        .await
        .map_err(|e| conflict(e, exp))?;
    Ok(with_etag(StatusCode::OK, &p))
}
