//! `/v1/datasources` (admin): create, list, read, replace, delete and test datasources,
//! and `PUT /v1/clusters/{cluster}/datasource` to point a cluster at one. Secret fields
//! are write-only: sealed at rest, answered only as `…Set` flags, never logged.

use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use bytes::Bytes;
use serde_json::{json, Value};

use super::access::Access;
use super::config_audit::{context, reason_query};
use super::error::ApiError;
use super::AppState;
use crate::datasource::connection::{public_view, validate, DatasourceSettings};
use crate::datasource::{scope_for, Datasource, SecretKey, Secrets, Source};
use crate::events::config_change::{action, target, Change, MASK};
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

/// Takes the audit `reason` out of a create/replace body (it is not a setting).
fn take_reason(body: &mut Value) -> Result<Option<String>, ApiError> {
    match body.as_object_mut().and_then(|o| o.remove("reason")) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(r)) => Ok(Some(r)),
        Some(_) => Err(ApiError::invalid_field("reason", "must be a string")),
    }
}

/// The representation recorded in `config_changed`: the public view, with every secret
/// header shown as `{name, sensitive: true, value: "***"}` (the fixed mask, never the
/// value; `secret` is a key the recorder refuses, so secrets fail loudly, not leak).
fn audit_view(view: &Value) -> Value {
    let mut v = view.clone();
    if let Some(headers) = v.get_mut("headers").and_then(Value::as_array_mut) {
        for h in headers.iter_mut() {
            let secret = h["secret"] == true;
            let set = h["valueSet"] == true;
            *h = if secret {
                json!({ "name": h["name"], "sensitive": true, "value": if set { json!(MASK) } else { Value::Null } })
            } else {
                json!({ "name": h["name"], "sensitive": false, "value": h["value"] })
            };
        }
    }
    v
}

fn change(action: &'static str, rec: &DatasourceRecord) -> Change {
    Change::new(action, target::DATASOURCE, rec.id, Some(&rec.name))
}

fn store_err(e: StoreError) -> ApiError {
    match e {
        StoreError::Conflict(what) => ApiError::new(
            StatusCode::CONFLICT,
            "conflict",
            format!("{what} conflicts with an existing record"),
        ),
        e => e.into(),
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

/// [`view`] inside a store transaction (errors become store errors).
fn view_or_task(rec: &DatasourceRecord, key: &SecretKey) -> Result<Value, StoreError> {
    let settings: DatasourceSettings =
        serde_json::from_str(&rec.settings_json).map_err(|e| StoreError::Task(e.to_string()))?;
    let secrets = key
        .open(&rec.secrets_sealed)
        .map_err(|e| StoreError::Task(e.to_string()))?;
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

pub async fn create(
    State(state): State<AppState>,
    access: Access,
    body: Bytes,
) -> Result<Response, ApiError> {
    let now = state.now();
    let key = key(&state)?;
    let mut body = body_json(&body)?;
    let ctx = context(&access, take_reason(&mut body)?)?;
    let (settings, secrets) = validated(&body, None)?;
    let sealed = key.seal(&secrets).map_err(ApiError::internal)?;
    let json = serde_json::to_string(&settings).map_err(ApiError::internal)?;
    let k = key.clone();
    let rec = state
        .store
        .write_audited(ctx, now, move |tx| {
            let rec =
                store::insert_datasource(tx, &settings.name, &settings.kind, &json, &sealed, now)?;
            let after = audit_view(&view_or_task(&rec, &k)?);
            let change = change(action::DATASOURCE_CREATED, &rec).after(after);
            Ok((rec, change))
        })
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
    access: Access,
    Path(id): Path<String>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    let now = state.now();
    let id = parse_id(&id)?;
    let key = key(&state)?;
    let rec = fetch(&state, id).await?;
    let (_, previous) = open(&rec, &key)?;
    let mut body = body_json(&body)?;
    let ctx = context(&access, take_reason(&mut body)?)?;
    let (settings, secrets) = validated(&body, Some(&previous))?;
    let sealed = key.seal(&secrets).map_err(ApiError::internal)?;
    let json = serde_json::to_string(&settings).map_err(ApiError::internal)?;
    let k = key.clone();
    let rec = state
        .store
        .write_audited(ctx, now, move |tx| {
            let before = store::get_datasource(tx, id)?
                .ok_or_else(|| StoreError::NotFound(format!("datasource {id}")))?;
            let rec = store::update_datasource(
                tx,
                id,
                &settings.name,
                &settings.kind,
                &json,
                &sealed,
                now,
            )?
            .ok_or_else(|| StoreError::NotFound(format!("datasource {id}")))?;
            let change = change(action::DATASOURCE_UPDATED, &rec)
                .before(audit_view(&view_or_task(&before, &k)?))
                .after(audit_view(&view_or_task(&rec, &k)?));
            Ok((rec, change))
        })
        .await
        .map_err(store_err)?;
    tracing::info!(datasource = rec.id, name = %rec.name, "datasource replaced");
    Ok(Json(view(&rec, &key)?))
}

/// `DELETE /v1/datasources/{id}[?reason=…]`.
pub async fn delete(
    State(state): State<AppState>,
    access: Access,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<StatusCode, ApiError> {
    let now = state.now();
    let id = parse_id(&id)?;
    let ctx = context(&access, reason_query(query.as_deref())?)?;
    let k = key(&state)?;
    state
        .store
        .write_audited(ctx, now, move |tx| {
            let before = store::get_datasource(tx, id)?
                .ok_or_else(|| StoreError::NotFound(format!("datasource {id}")))?;
            store::delete_datasource(tx, id)?;
            let change = change(action::DATASOURCE_DELETED, &before)
                .before(audit_view(&view_or_task(&before, &k)?));
            Ok(((), change))
        })
        .await
        .map_err(store_err)?;
    tracing::info!(datasource = id, "datasource deleted");
    Ok(StatusCode::NO_CONTENT)
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
    let now = state.now();
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
        .write(move |c| store::set_cluster_datasource(c, &name, id, now))
        .await?;
    if !ok {
        return Err(ApiError::not_found(format!(
            "no active cluster {cluster:?} or no datasource {id}"
        )));
    }
    crate::fleet::readiness::spawn_check(state.store.clone(), state.runs.clone(), cluster.clone());
    Ok(Json(json!({ "cluster": cluster, "datasourceId": id })))
}
