//! `/v1/policies`: RightsizingPolicies. Create, list, read, replace, soft delete, the
//! version history and revert. Every write names the version it read (`If-Match: "<n>"`
//! or in the body/query) and is refused with `version_conflict` when another write came
//! first; every write lands whole with its `config_changed` row. Validation reports every
//! bad field with its JSON path in one 400 `invalid_policy`.

use axum::body::Body;
use axum::extract::{Path, RawQuery, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Map, Value};

use super::access::Access;
use super::body::{read_limited, MAX_JSON_BYTES};
use super::config_audit::context;
use super::error::ApiError;
use super::query::{self, bad, time_or_null};
use super::routes::parse_id;
use super::AppState;
use crate::events::config_change::{action, target, Change};
use crate::policy::{validate_policy, FieldError, PolicySpec};
use crate::store::policies::{self as store, PolicyRecord, PolicyVersion};
use crate::store::StoreError;

/// The API representation of a policy.
pub fn policy_json(p: &PolicyRecord) -> Value {
    json!({
        "id": p.id,
        "name": p.spec.name,
        "version": p.version,
        "spec": p.spec,
        "createdAt": time_or_null(Some(p.created_at)),
        "updatedAt": time_or_null(Some(p.updated_at)),
        "deletedAt": time_or_null(p.deleted_at),
    })
}

fn version_json(v: &PolicyVersion) -> Value {
    json!({
        "version": v.version,
        "change": v.change,
        "createdAt": time_or_null(Some(v.created_at)),
        "actor": serde_json::from_str::<Value>(&v.actor).unwrap_or(Value::Null),
        "spec": v.spec,
    })
}

/// A policy answer with its version as the ETag.
fn with_etag(status: StatusCode, p: &PolicyRecord) -> Response {
    let etag = format!("\"{}\"", p.version);
    (status, [(header::ETAG, etag)], Json(policy_json(p))).into_response()
}

fn invalid(errors: Vec<FieldError>) -> ApiError {
    let n = errors.len();
    ApiError::bad_request(
        "invalid_policy",
        format!("the policy has {n} invalid field(s)"),
    )
    .with_details(json!({ "errors": errors }))
}

/// The JSON object of a body.
async fn object(body: Body) -> Result<Map<String, Value>, ApiError> {
    let bytes = read_limited(body, MAX_JSON_BYTES).await?;
    match serde_json::from_slice(&bytes) {
        Ok(Value::Object(o)) => Ok(o),
        Ok(_) => Err(invalid(vec![FieldError {
            path: "$".into(),
            message: "must be a JSON object".into(),
        }])),
        Err(e) => Err(ApiError::bad_request(
            "invalid_json",
            format!("request body is not JSON: {e}"),
        )),
    }
}

/// Removes `key` from `o` as an optional string / integer.
fn take_string(o: &mut Map<String, Value>, key: &str) -> Result<Option<String>, ApiError> {
    match o.remove(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(ApiError::invalid_field(key, "must be a string")),
    }
}

fn take_int(o: &mut Map<String, Value>, key: &str) -> Result<Option<i64>, ApiError> {
    match o.remove(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_i64()
            .filter(|n| *n > 0)
            .map(Some)
            .ok_or_else(|| ApiError::invalid_field(key, "must be a positive integer")),
    }
}

/// Parses and validates a policy document; every problem in one 400.
fn spec_of(o: Map<String, Value>) -> Result<PolicySpec, ApiError> {
    let spec: PolicySpec = serde_path_to_error::deserialize(Value::Object(o)).map_err(|e| {
        let path = e.path().to_string();
        let message = e.into_inner().to_string();
        let path = if path == "." { "$".into() } else { path };
        invalid(vec![FieldError { path, message }])
    })?;
    let errors = validate_policy(&spec);
    if errors.is_empty() {
        Ok(spec)
    } else {
        Err(invalid(errors))
    }
}

/// The version a write expects: `If-Match` (412 when stale) or the body's (409).
#[derive(Debug, Clone, Copy)]
struct Expected {
    version: i64,
    from_header: bool,
}

fn expected(headers: &HeaderMap, body: Option<i64>, field: &str) -> Result<Expected, ApiError> {
    if let Some(v) = headers.get(header::IF_MATCH) {
        let text = v.to_str().unwrap_or("").trim();
        let text = text.strip_prefix("W/").unwrap_or(text).trim_matches('"');
        let version = text.parse::<i64>().map_err(|_| {
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
fn conflict(e: StoreError, exp: Expected) -> ApiError {
    let mut err = ApiError::from(e);
    if err.code == "version_conflict" && exp.from_header {
        err.status = StatusCode::PRECONDITION_FAILED;
    }
    err
}

fn change(action: &'static str, p: &PolicyRecord) -> Change {
    Change::new(action, target::POLICY, p.id, Some(&p.spec.name))
}

/// `GET /v1/policies[?deleted=true]`.
pub async fn list(
    State(state): State<AppState>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>, ApiError> {
    let mut deleted = false;
    for (key, value) in query::pairs(raw.as_deref())? {
        match key.as_str() {
            "deleted" => deleted = query::boolean(&key, &value)?,
            _ => return Err(bad(&key, "unknown parameter")),
        }
    }
    let items: Vec<Value> = state
        .store
        .policies(deleted)
        .await?
        .iter()
        .map(policy_json)
        .collect();
    Ok(Json(json!({ "items": items })))
}

async fn fetch(state: &AppState, raw: &str) -> Result<PolicyRecord, ApiError> {
    let id = parse_id("policy", raw)?;
    state
        .store
        .policy(id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("policy {id} does not exist")))
}

/// `GET /v1/policies/{id}` (soft-deleted ones too, with `deletedAt`).
pub async fn get(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    Ok(with_etag(StatusCode::OK, &fetch(&state, &id).await?))
}

/// `POST /v1/policies`: the policy document plus an optional `reason`.
pub async fn create(
    State(state): State<AppState>,
    access: Access,
    body: Body,
) -> Result<Response, ApiError> {
    let now = state.now();
    let mut o = object(body).await?;
    let ctx = context(&access, take_string(&mut o, "reason")?)?;
    let spec = spec_of(o)?;
    let actor = serde_json::to_string(&ctx.actor).map_err(ApiError::internal)?;
    let p = state
        .store
        .write_audited(ctx, now, move |tx| {
            let p = store::create_policy(tx, &spec, &actor, now)?;
            let c = change(action::POLICY_CREATED, &p).after(policy_json(&p));
            Ok((p, c))
        })
        .await?;
    Ok(with_etag(StatusCode::CREATED, &p))
}

/// `PUT /v1/policies/{id}`: the whole new document, `If-Match` or `version`, `reason`.
pub async fn replace(
    State(state): State<AppState>,
    access: Access,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let now = state.now();
    let id = parse_id("policy", &id)?;
    let mut o = object(body).await?;
    let ctx = context(&access, take_string(&mut o, "reason")?)?;
    let exp = expected(&headers, take_int(&mut o, "version")?, "version")?;
    let spec = spec_of(o)?;
    let actor = serde_json::to_string(&ctx.actor).map_err(ApiError::internal)?;
    let p = state
        .store
        .write_audited(ctx, now, move |tx| {
            let (before, after) =
                store::update_policy(tx, id, exp.version, &spec, &actor, "updated", now)?;
            let c = change(action::POLICY_UPDATED, &after)
                .before(policy_json(&before))
                .after(policy_json(&after));
            Ok((after, c))
        })
        .await
        .map_err(|e| conflict(e, exp))?;
    Ok(with_etag(StatusCode::OK, &p))
}

/// `DELETE /v1/policies/{id}[?version=n&reason=…]` (or `If-Match`): soft delete.
pub async fn delete(
    State(state): State<AppState>,
    access: Access,
    Path(id): Path<String>,
    headers: HeaderMap,
    RawQuery(raw): RawQuery,
) -> Result<StatusCode, ApiError> {
    let now = state.now();
    let id = parse_id("policy", &id)?;
    let (mut reason, mut version) = (None, None);
    for (key, value) in query::pairs(raw.as_deref())? {
        match key.as_str() {
            "reason" => reason = Some(value),
            "version" => {
                version = Some(
                    value
                        .parse::<i64>()
                        .map_err(|_| bad(&key, "must be a positive integer"))?,
                )
            }
            _ => return Err(bad(&key, "unknown parameter")),
        }
    }
    let ctx = context(&access, reason)?;
    let exp = expected(&headers, version, "version")?;
    state
        .store
        .write_audited(ctx, now, move |tx| {
            let before = store::delete_policy(tx, id, exp.version, now)?;
            let after = store::get_policy(tx, id)?;
            let c = change(action::POLICY_DELETED, &before)
                .before(policy_json(&before))
                .after(after.as_ref().map(policy_json));
            Ok(((), c))
        })
        .await
        .map_err(|e| conflict(e, exp))?;
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /v1/policies/{id}/versions`: the whole history, oldest first.
pub async fn versions(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let p = fetch(&state, &id).await?;
    let items: Vec<Value> = state
        .store
        .policy_versions(p.id)
        .await?
        .iter()
        .map(version_json)
        .collect();
    Ok(Json(json!({ "policyId": p.id, "items": items })))
}

/// `GET /v1/policies/{id}/versions/{version}`.
pub async fn version(
    State(state): State<AppState>,
    Path((id, version)): Path<(String, String)>,
) -> Result<Json<Value>, ApiError> {
    let p = fetch(&state, &id).await?;
    let n = parse_id("policy version", &version)?;
    let (pid, found) = (p.id, n);
    let v = state
        .store
        .read(move |c| store::policy_version(c, pid, found))
        .await?
        .ok_or_else(|| ApiError::not_found(format!("policy {pid} has no version {n}")))?;
    Ok(Json(version_json(&v)))
}

/// `POST /v1/policies/{id}/revert` with `{version, reason}`: appends a new version with
/// the content of `version`. The version read comes as `If-Match` or `currentVersion`.
pub async fn revert(
    State(state): State<AppState>,
    access: Access,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let now = state.now();
    let id = parse_id("policy", &id)?;
    let mut o = object(body).await?;
    let ctx = context(&access, take_string(&mut o, "reason")?)?;
    let to = take_int(&mut o, "version")?
        .ok_or_else(|| ApiError::invalid_field("version", "required: the version to restore"))?;
    let exp = expected(
        &headers,
        take_int(&mut o, "currentVersion")?,
        "currentVersion",
    )?;
    if let Some(key) = o.keys().next() {
        return Err(ApiError::invalid_field(key, "unknown field"));
    }
    let actor = serde_json::to_string(&ctx.actor).map_err(ApiError::internal)?;
    let p = state
        .store
        .write_audited(ctx, now, move |tx| {
            let old = store::policy_version(tx, id, to)?
                .ok_or_else(|| StoreError::NotFound(format!("version {to} of policy {id}")))?;
            let (before, after) =
                store::update_policy(tx, id, exp.version, &old.spec, &actor, "reverted", now)?;
            let mut after_json = policy_json(&after);
            after_json["revertedTo"] = json!(to);
            let c = change(action::POLICY_REVERTED, &after)
                .before(policy_json(&before))
                .after(after_json);
            Ok((after, c))
        })
        .await
        .map_err(|e| conflict(e, exp))?;
    Ok(with_etag(StatusCode::OK, &p))
}
