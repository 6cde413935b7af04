//! `/v1/datasources` (admin): create, list, read, replace, delete and test datasources,
//! and `PUT /v1/clusters/{cluster}/datasource` to point a cluster at one. Secret fields
//! are write-only: sealed at rest, answered only as `…Set` flags, never logged.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use bytes::Bytes;
use serde_json::{json, Value};

use super::error::ApiError;
use super::AppState;
use crate::datasource::settings::{public_view, validate, DatasourceSettings};
use crate::datasource::{scope_for, Datasource, SecretKey, Secrets, Source};
use crate::store::{self, DatasourceRecord, StoreError};

fn key(state: &AppState) -> Result<SecretKey, ApiError> {
    SecretKey::load_or_create(&state.config.data_dir).map_err(ApiError::internal)
}

fn parse_id(raw: &str) -> Result<i64, ApiError> {
    raw.parse()
        .map_err(|_| ApiError::not_found(format!("no datasource {raw:?}")))
}

fn body_json(body: &Bytes) -> Result<Value, ApiError> {
    serde_json::from_slice(body).map_err(|e| {
        ApiError::bad_request("invalid_json", format!("request body is not JSON: {e}"))
    })
}

fn store_err(e: StoreError) -> ApiError {
    match e {
        StoreError::Conflict(what) => ApiError::new(
            StatusCode::CONFLICT,
            "conflict",
            format!("{what} conflicts with an existing record"),
        ),
        e => ApiError::internal(e),
    }
}

/// The stored settings and opened secrets of a record.
fn open(
    rec: &DatasourceRecord,
    key: &SecretKey,
) -> Result<(DatasourceSettings, Secrets), ApiError> {
    let settings: DatasourceSettings =
        serde_json::from_str(&rec.settings_json).map_err(ApiError::internal)?;
    let secrets = key.open(&rec.secrets_sealed).map_err(ApiError::internal)?;
    Ok((settings, secrets))
}

fn view(rec: &DatasourceRecord, key: &SecretKey) -> Result<Value, ApiError> {
    let (settings, secrets) = open(rec, key)?;
    Ok(public_view(rec.id, &settings, &secrets, &rec.clusters))
}

fn validated(
    body: &Value,
    previous: Option<&Secrets>,
) -> Result<(DatasourceSettings, Secrets), ApiError> {
    validate(body, previous).map_err(|errors| {
        ApiError::bad_request("invalid_datasource", "the datasource settings are invalid")
            .with_details(json!({ "errors": errors }))
    })
}

pub async fn create(State(state): State<AppState>, body: Bytes) -> Result<Response, ApiError> {
    let key = key(&state)?;
    let (settings, secrets) = validated(&body_json(&body)?, None)?;
    let sealed = key.seal(&secrets).map_err(ApiError::internal)?;
    let json = serde_json::to_string(&settings).map_err(ApiError::internal)?;
    let rec = state
        .store
        .write(move |c| store::insert_datasource(c, &settings.name, &settings.kind, &json, &sealed))
        .await
        .map_err(store_err)?;
    tracing::info!(datasource = rec.id, name = %rec.name, "datasource created");
    Ok((StatusCode::CREATED, Json(view(&rec, &key)?)).into_response())
}

pub async fn list(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    let key = key(&state)?;
    let recs = state.store.read(store::list_datasources).await?;
    let items = recs
        .iter()
        .map(|r| view(r, &key))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Json(json!({ "items": items })))
}

async fn fetch(state: &AppState, id: i64) -> Result<DatasourceRecord, ApiError> {
    state
        .store
        .read(move |c| store::get_datasource(c, id))
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no datasource {id}")))
}

pub async fn get(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let rec = fetch(&state, parse_id(&id)?).await?;
    Ok(Json(view(&rec, &key(&state)?)?))
}

pub async fn replace(
    State(state): State<AppState>,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    let id = parse_id(&id)?;
    let key = key(&state)?;
    let rec = fetch(&state, id).await?;
    let (_, previous) = open(&rec, &key)?;
    let (settings, secrets) = validated(&body_json(&body)?, Some(&previous))?;
    let sealed = key.seal(&secrets).map_err(ApiError::internal)?;
    let json = serde_json::to_string(&settings).map_err(ApiError::internal)?;
    let rec = state
        .store
        .write(move |c| {
            store::update_datasource(c, id, &settings.name, &settings.kind, &json, &sealed)
        })
        .await
        .map_err(store_err)?
        .ok_or_else(|| ApiError::not_found(format!("no datasource {id}")))?;
    tracing::info!(datasource = rec.id, name = %rec.name, "datasource replaced");
    Ok(Json(view(&rec, &key)?))
}

pub async fn delete(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let id = parse_id(&id)?;
    let deleted = state
        .store
        .write(move |c| store::delete_datasource(c, id))
        .await
        .map_err(store_err)?;
    if deleted {
        tracing::info!(datasource = id, "datasource deleted");
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found(format!("no datasource {id}")))
    }
}

/// Reachability, credentials and the metrics kerf needs, for the first cluster using it.
pub async fn test(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let rec = fetch(&state, parse_id(&id)?).await?;
    let (settings, secrets) = open(&rec, &key(&state)?)?;
    let source = Datasource::from_settings(&settings, &secrets)
        .map_err(|e| ApiError::bad_request("invalid_datasource", e.to_string()))?;
    let cluster = rec.clusters.first().cloned().unwrap_or_default();
    // Readiness follows: every cluster on this datasource is re-checked.
    for c in &rec.clusters {
        crate::fleet::readiness::spawn_check(state.store.clone(), state.runs.clone(), c.clone());
    }
    let report = source
        .test(&scope_for(&settings, &cluster))
        .await
        .map_err(|e| ApiError::new(StatusCode::BAD_GATEWAY, "datasource_failed", e.to_string()))?;
    Ok(Json(
        serde_json::to_value(report).map_err(ApiError::internal)?,
    ))
}

/// `PUT /v1/clusters/{cluster}/datasource` with `{"datasourceId": n}`.
pub async fn set_for_cluster(
    State(state): State<AppState>,
    Path(cluster): Path<String>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    let body = body_json(&body)?;
    let id = body
        .get("datasourceId")
        .and_then(Value::as_i64)
        .ok_or_else(|| {
            ApiError::bad_request("invalid_body", "$.datasourceId: required integer").with_details(
                json!({ "errors": [{ "path": "$.datasourceId", "message": "required integer" }] }),
            )
        })?;
    let name = cluster.clone();
    let ok = state
        .store
        .write(move |c| store::set_cluster_datasource(c, &name, id))
        .await?;
    if !ok {
        return Err(ApiError::not_found(format!(
            "no active cluster {cluster:?} or no datasource {id}"
        )));
    }
    crate::fleet::readiness::spawn_check(state.store.clone(), state.runs.clone(), cluster.clone());
    Ok(Json(json!({ "cluster": cluster, "datasourceId": id })))
}
