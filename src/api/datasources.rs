//! `/v1/datasources` (admin): create, list, read, replace, delete and test datasources,
//! and `PUT /v1/clusters/{cluster}/datasource` to point a cluster at one. Secret fields
//! are write-only: sealed at rest, answered only as `…Set` flags, never logged.

use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};

use super::access::Access;
use super::body::{null_paths, read_limited, NOT_NULL};
use super::config_audit::context;
use super::error::ApiError;
use super::ids::{self, Id};
use super::lists::Items;
use super::query::params::ReasonQuery;
use super::query::Query;
use super::state::AppState;
use crate::datasource::connection::FieldError;
use crate::datasource::input::DatasourceInput;
use crate::datasource::view::DatasourceView;
use crate::datasource::TestReport;
use crate::events::config_change::AuditContext;
use crate::fleet::datasources;
use crate::fleet::declared::{guard_cluster, guard_datasource, ClusterPart};
use crate::secret::SecretKey;

/// The datasource a cluster reads usage from.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterDatasource {
    pub cluster: String,
    pub datasource_id: i64,
}

/// What `PUT /v1/clusters/{cluster}/datasource` reads (by hand, so a missing or
/// mistyped id is reported with its JSON path).
#[derive(serde::Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClusterDatasourceBody {
    pub datasource_id: i64,
    pub reason: Option<String>,
}

impl ClusterDatasourceBody {
    /// Reads the body and the audit context of its `reason`, checked in that order:
    /// the reason, the id, then any other field.
    async fn read(body: Body, access: &Access) -> Result<(AuditContext, Self), ApiError> {
        let mut body = body_json(body).await?;
        let mut read = ClusterDatasourceBody {
            datasource_id: 0,
            reason: take_reason(&mut body)?,
        };
        let ctx = context(access, read.reason.clone())?;
        read.datasource_id = body
            .get("datasourceId")
            .and_then(Value::as_i64)
            .ok_or_else(|| {
                ApiError::bad_request("invalid_body", "$.datasourceId: required integer")
                    .with_details(json!({ "errors": [{ "path": "$.datasourceId", "message": "required integer" }] }))
            })?;
        if let Some(key) = body
            .as_object()
            .and_then(|o| o.keys().find(|k| *k != "datasourceId"))
        {
            return Err(ApiError::invalid_field(key, "unknown field"));
        }
        Ok((ctx, read))
    }
}

fn key(state: &AppState) -> Result<SecretKey, ApiError> {
    SecretKey::load_or_create(&state.config.data_dir).map_err(ApiError::internal)
}

/// Largest datasource document, in bytes (a CA bundle can be a few hundred KiB).
const MAX_DATASOURCE_BYTES: usize = 512 * 1024;

async fn body_json(body: Body) -> Result<Value, ApiError> {
    let body = read_limited(body, MAX_DATASOURCE_BYTES).await?;
    let mut value = serde_json::from_slice(&body).map_err(|e| {
        ApiError::bad_request("invalid_json", format!("request body is not JSON: {e}"))
    })?;
    super::body::whole_numbers(&mut value);
    Ok(value)
}

/// Takes the audit `reason` out of a create/replace body (it is not a setting).
fn take_reason(body: &mut Value) -> Result<Option<String>, ApiError> {
    match body.as_object_mut().and_then(|o| o.remove("reason")) {
        None => Ok(None),
        Some(Value::Null) => Err(ApiError::invalid_field("reason", NOT_NULL)),
        Some(Value::String(r)) => Ok(Some(r)),
        Some(_) => Err(ApiError::invalid_field("reason", "must be a string")),
    }
}

/// Refuses a create/replace body with a `null` anywhere, every one named (before the
/// document is read: the datasource module reads a `null` as a left-out field).
fn refuse_nulls(body: &Value) -> Result<(), ApiError> {
    let members = body.as_object().into_iter().flatten();
    let errors: Vec<FieldError> = members
        .flat_map(|(k, v)| null_paths(v, format!("$.{k}")))
        .map(|path| FieldError::new(&path, NOT_NULL))
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(datasources::invalid(errors).into())
    }
}

#[utoipa::path(
    post,
    path = "/v1/datasources",
    summary = "Create a datasource (type prometheus covers Prometheus, Thanos, Mimir, VictoriaMetrics). An optional `reason` in the body goes to the audit (DatasourceCreated/Updated/Deleted; secrets never recorded, secret header values as `***`).",
    description = "Body fields name, type, url, auth {type none|basic|bearer, username, password, token}, headers [{name, value, secret}], tls {caPem, insecureSkipVerify}, timeoutSeconds (30), maxConcurrentQueries (4), maxSamplesPerQuery (500000), maxSeriesPerQuery (2000), protocol (auto | remoteRead | vmExport | queryRange; auto), stepSeconds (60), clusterLabel, clusterValue (defaults to the kerf cluster name). Secret fields (password, token, secret header values) are write-only: sealed at rest and answered only as passwordSet / tokenSet / valueSet. Validation errors list {path, message} under error.details.errors.",
    request_body(content = DatasourceInput, description = "The datasource document (fields above), plus an optional `reason`."),
    responses(
        (status = 201, description = "The datasource, without secrets.", body = DatasourceView),
        (status = 409, description = "An error.", body = super::error::ErrorBody),
    )
)]
pub async fn create(
    State(state): State<AppState>,
    access: Access,
    body: Body,
) -> Result<Response, ApiError> {
    let key = key(&state)?;
    let mut body = body_json(body).await?;
    let ctx = context(&access, take_reason(&mut body)?)?;
    refuse_nulls(&body)?;
    let view = datasources::create(
        &state.store,
        (&key, state.runs.outbound()),
        state.now(),
        ctx,
        body,
    )
    .await?;
    Ok((StatusCode::CREATED, Json(view)).into_response())
}

#[utoipa::path(
    get,
    path = "/v1/datasources",
    summary = "Every datasource, without secrets, with the clusters pointing at each.",
    responses(
        (status = 200, description = "Every datasource, without secrets.", body = Items<DatasourceView>),
    )
)]
pub async fn list(State(state): State<AppState>) -> Result<Json<Items<DatasourceView>>, ApiError> {
    let items = datasources::list(&state.store, &key(&state)?).await?;
    Ok(Json(Items::new(items)))
}

#[utoipa::path(
    get,
    path = "/v1/datasources/{id}",
    summary = "One datasource, without secrets.",
    params(
        ("id" = i64, Path),
    ),
    responses(
        (status = 200, description = "The datasource, without secrets.", body = DatasourceView),
    )
)]
pub async fn get(
    State(state): State<AppState>,
    Id(id, _): Id<ids::Datasource>,
) -> Result<Json<DatasourceView>, ApiError> {
    Ok(Json(
        datasources::get(&state.store, &key(&state)?, id).await?,
    ))
}

#[utoipa::path(
    put,
    path = "/v1/datasources/{id}",
    summary = "Replace a datasource. Omitted secret fields keep their stored values. A datasource declared in the config file is refused (409 declared_in_config).",
    params(
        ("id" = i64, Path),
    ),
    request_body(content = DatasourceInput, description = "The whole datasource document, plus an optional `reason`."),
    responses(
        (status = 200, description = "The datasource, without secrets.", body = DatasourceView),
        (status = 409, description = "An error.", body = super::error::ErrorBody),
    )
)]
pub async fn replace(
    State(state): State<AppState>,
    access: Access,
    Id(id, _): Id<ids::Datasource>,
    body: Body,
) -> Result<Json<DatasourceView>, ApiError> {
    let key = key(&state)?;
    let mut body = body_json(body).await?;
    let ctx = context(&access, take_reason(&mut body)?)?;
    guard_datasource(&state.store, &state.config.fleet, id).await?;
    refuse_nulls(&body)?;
    let now = state.now();
    Ok(Json(
        datasources::replace(
            &state.store,
            (&key, state.runs.outbound()),
            now,
            ctx,
            id,
            body,
        )
        .await?,
    ))
}

/// `DELETE /v1/datasources/{id}[?reason=…]`.
#[utoipa::path(
    delete,
    path = "/v1/datasources/{id}",
    summary = "Delete a datasource no cluster points at and the config file does not declare (409 otherwise).",
    params(
        ("id" = i64, Path),
        ("reason" = Option<String>, Query, max_length = 1024, description = "Why (recorded in the audit)"),
    ),
    responses(
        (status = 204, description = "Deleted."),
        (status = 409, description = "An error.", body = super::error::ErrorBody),
    )
)]
pub async fn delete(
    State(state): State<AppState>,
    access: Access,
    Id(id, _): Id<ids::Datasource>,
    Query(q): Query<ReasonQuery>,
) -> Result<StatusCode, ApiError> {
    let ctx = context(&access, q.reason)?;
    guard_datasource(&state.store, &state.config.fleet, id).await?;
    datasources::delete(&state.store, &key(&state)?, state.now(), ctx, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Reachability, credentials and the metrics kerf needs, for the first cluster using it.
#[utoipa::path(
    post,
    path = "/v1/datasources/{id}/test",
    summary = "Check reachability, credentials and the metrics kerf needs.",
    description = "Answers {reachable, authenticated, missingMetrics, remoteRead (whether the server streams remote read), protocol (what runs will read usage with: remote-read, vm-export or range-selector), message (ends \"remote read: yes|no; usage read with …\")}; remoteRead and protocol are absent when the server is unreachable or refuses the credentials; 502 when the backend fails otherwise.",
    params(
        ("id" = i64, Path),
    ),
    responses(
        (status = 200, description = "The test report.", body = TestReport),
        (status = 502, description = "An error.", body = super::error::ErrorBody),
    )
)]
pub async fn test(
    State(state): State<AppState>,
    Id(id, _): Id<ids::Datasource>,
) -> Result<Json<TestReport>, ApiError> {
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
    summary = "Point a cluster at a datasource ({\"datasourceId\": n}); each cluster has one.",
    params(
        ("cluster" = String, Path),
    ),
    request_body = ClusterDatasourceBody,
    responses(
        (status = 200, description = "The cluster and its datasource.", body = ClusterDatasource),
        (status = 409, description = "The link is declared in the config file (code declared_in_config).", body = super::error::ErrorBody),
    )
)]
pub async fn set_for_cluster(
    State(state): State<AppState>,
    access: Access,
    Path(cluster): Path<String>,
    body: Body,
) -> Result<Json<ClusterDatasource>, ApiError> {
    let (ctx, read) = ClusterDatasourceBody::read(body, &access).await?;
    let id = read.datasource_id;
    guard_cluster(&state.config.fleet, &cluster, ClusterPart::Datasource)?;
    let (store, runs, now) = (&state.store, &state.runs, state.now());
    let key = key(&state)?;
    datasources::set_for_cluster(store, runs, &key, now, ctx, cluster.clone(), id).await?;
    Ok(Json(ClusterDatasource {
        cluster,
        datasource_id: id,
    }))
}
