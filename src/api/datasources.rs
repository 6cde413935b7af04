//! `/v1/datasources` (admin): create, list, read, replace, delete and test datasources,
//! and `PUT /v1/clusters/{cluster}/datasource` to point a cluster at one. Secret fields
//! are write-only: sealed at rest, answered only as `…Set` flags, never logged.

use axum::body::Body;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use super::access::Access;
use super::body::read_limited;
use super::config_audit::{context, reason_query};
use super::error::ApiError;
use super::AppState;
use crate::datasource::{SecretKey, TestReport};
use crate::fleet::datasources;

fn key(state: &AppState) -> Result<SecretKey, ApiError> {
    SecretKey::load_or_create(&state.config.data_dir).map_err(ApiError::internal)
}

fn parse_id(raw: &str) -> Result<i64, ApiError> {
    raw.parse()
        .map_err(|_| ApiError::not_found(format!("no datasource {raw:?}")))
}

/// Largest datasource document, in bytes (a CA bundle can be a few hundred KiB).
const MAX_DATASOURCE_BYTES: usize = 512 * 1024;

async fn body_json(body: Body) -> Result<Value, ApiError> {
    let body = read_limited(body, MAX_DATASOURCE_BYTES).await?;
    serde_json::from_slice(&body).map_err(|e| {
        ApiError::bad_request("invalid_json", format!("request body is not JSON: {e}"))
    })
}

/// Takes the audit `reason` out of a create/replace body (it is not a setting).
fn take_reason(body: &mut Value) -> Result<Option<String>, ApiError> {
    match body.as_object_mut().and_then(|o| o.remove("reason")) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(r)) => Ok(Some(r)),
        Some(_) => Err(ApiError::invalid_field("reason", "must be a string")),
    }
}

#[utoipa::path(
    post,
    path = "/v1/datasources"
)]
pub async fn create(
    State(state): State<AppState>,
    access: Access,
    body: Body,
) -> Result<Response, ApiError> {
    let key = key(&state)?;
    let mut body = body_json(body).await?;
    let ctx = context(&access, take_reason(&mut body)?)?;
    let view = datasources::create(&state.store, &key, state.now(), ctx, body).await?;
    Ok((StatusCode::CREATED, Json(view)).into_response())
}

#[utoipa::path(
    get,
    path = "/v1/datasources"
)]
pub async fn list(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    let items = datasources::list(&state.store, &key(&state)?).await?;
    Ok(Json(json!({ "items": items })))
}

#[utoipa::path(
    get,
    path = "/v1/datasources/{id}",
    params(("id" = String, Path))
)]
pub async fn get(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let id = parse_id(&id)?;
    Ok(Json(
        datasources::get(&state.store, &key(&state)?, id).await?,
    ))
}

#[utoipa::path(
    put,
    path = "/v1/datasources/{id}",
    params(("id" = String, Path))
)]
pub async fn replace(
    State(state): State<AppState>,
    access: Access,
    Path(id): Path<String>,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let id = parse_id(&id)?;
    let key = key(&state)?;
    let mut body = body_json(body).await?;
    let ctx = context(&access, take_reason(&mut body)?)?;
    let now = state.now();
    Ok(Json(
        datasources::replace(&state.store, &key, now, ctx, id, body).await?,
    ))
}

/// `DELETE /v1/datasources/{id}[?reason=…]`.
#[utoipa::path(
    delete,
    path = "/v1/datasources/{id}",
    params(("id" = String, Path))
)]
pub async fn delete(
    State(state): State<AppState>,
    access: Access,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<StatusCode, ApiError> {
    let id = parse_id(&id)?;
    let ctx = context(&access, reason_query(query.as_deref())?)?;
    datasources::delete(&state.store, &key(&state)?, state.now(), ctx, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Reachability, credentials and the metrics kerf needs, for the first cluster using it.
#[utoipa::path(
    post,
    path = "/v1/datasources/{id}/test",
    params(("id" = String, Path))
)]
pub async fn test(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<TestReport>, ApiError> {
    let id = parse_id(&id)?;
    let key = key(&state)?;
    Ok(Json(
        datasources::test(&state.store, &state.runs, &key, id).await?,
    ))
}

/// `PUT /v1/clusters/{cluster}/datasource` with `{"datasourceId": n, "reason"?}`:
/// audited as `DatasourceUpdated`.
#[utoipa::path(
    put,
    path = "/v1/clusters/{cluster}/datasource",
    params(("cluster" = String, Path))
)]
pub async fn set_for_cluster(
    State(state): State<AppState>,
    access: Access,
    Path(cluster): Path<String>,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let mut body = body_json(body).await?;
    let ctx = context(&access, take_reason(&mut body)?)?;
    let id = body
        .get("datasourceId")
        .and_then(Value::as_i64)
        .ok_or_else(|| {
            ApiError::bad_request("invalid_body", "$.datasourceId: required integer").with_details(
                json!({ "errors": [{ "path": "$.datasourceId", "message": "required integer" }] }),
            )
        })?;
    if let Some(key) = body
        .as_object()
        .and_then(|o| o.keys().find(|k| *k != "datasourceId"))
    {
        return Err(ApiError::invalid_field(key, "unknown field"));
    }
    let (store, runs, now) = (&state.store, &state.runs, state.now());
    let key = key(&state)?;
    datasources::set_for_cluster(store, runs, &key, now, ctx, cluster.clone(), id).await?;
    Ok(Json(json!({ "cluster": cluster, "datasourceId": id })))
}
