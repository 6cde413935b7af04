//! `/v1/clusters`: register (the agent token is shown once), read, update metadata,
//! retire (soft: the record stays for the audit trail and the token stops working),
//! rotate the agent token, and the cluster-wide freeze. Each change is one
//! `config_changed` row (`ClusterCreated`, `ClusterUpdated`, `ClusterDeleted`).

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
use super::AppState;
use crate::auth::token;
use crate::events::config_change::{action, Change};
use crate::store::{self, ClusterMeta, ClusterPatch, ClusterRecord, FreezeRecord, NewCluster};
use crate::timestamp::format_ms as rfc3339_ms;
use crate::wire::Freeze;

/// The API representation of a cluster (also `before`/`after` of its audit rows; it
/// never holds the token or its hash).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterView {
    pub name: String,
    pub display_name: String,
    pub description: String,
    pub labels: BTreeMap<String, String>,
    /// `active` or `retired`.
    pub state: &'static str,
    pub created_at: String,
    pub updated_at: Option<String>,
    pub retired_at: Option<String>,
    pub token_rotated_at: Option<String>,
    pub freeze: Freeze,
}

pub use crate::fleet::clusters::freeze_view;

impl From<&ClusterRecord> for ClusterView {
    fn from(c: &ClusterRecord) -> Self {
        ClusterView {
            name: c.name.clone(),
            display_name: c.display_name.clone(),
            description: c.description.clone(),
            labels: c.labels.clone(),
            state: if c.retired_at.is_some() {
                "retired"
            } else {
                "active"
            },
            created_at: rfc3339_ms(c.created_at),
            updated_at: c.updated_at.map(rfc3339_ms),
            retired_at: c.retired_at.map(rfc3339_ms),
            token_rotated_at: c.token_rotated_at.map(rfc3339_ms),
            freeze: freeze_view(c.freeze.as_ref()),
        }
    }
}

#[derive(Deserialize)]
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

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct UpdateCluster {
    display_name: Option<String>,
    description: Option<String>,
    labels: Option<BTreeMap<String, String>>,
    reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReasonBody {
    reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct FreezeBody {
    enabled: bool,
    reason: Option<String>,
    until: Option<String>,
}

fn validate_meta(
    display: &str,
    description: &str,
    labels: &BTreeMap<String, String>,
) -> Result<(), ApiError> {
    if display.chars().count() > 100 {
        return Err(ApiError::invalid_field(
            "displayName",
            "must be at most 100 characters",
        ));
    }
    if description.chars().count() > 500 {
        return Err(ApiError::invalid_field(
            "description",
            "must be at most 500 characters",
        ));
    }
    if labels.len() > 64 {
        return Err(ApiError::invalid_field("labels", "at most 64 labels"));
    }
    for (k, v) in labels {
        if k.is_empty() || k.len() > 63 || v.len() > 253 {
            return Err(ApiError::invalid_field(
                &format!("labels.{k}"),
                "keys are 1 to 63 characters, values at most 253",
            ));
        }
    }
    Ok(())
}

/// Parses an RFC 3339 time that must lie after `now`.
pub fn future_time(field: &str, text: &str, now: i64) -> Result<i64, ApiError> {
    let t = crate::timestamp::parse_ms(text)
        .ok_or_else(|| ApiError::invalid_field(field, "must be an RFC 3339 timestamp"))?;
    if t <= now {
        return Err(ApiError::invalid_field(field, "must be in the future"));
    }
    Ok(t)
}

fn now(state: &AppState) -> i64 {
    state.now()
}

/// `GET /v1/clusters`: every cluster (retired ones too) with its readiness.
pub async fn list(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    let rows = state
        .store
        .read(|c| {
            let mut out = Vec::new();
            for cl in store::list_clusters(c)? {
                let r = store::readiness::get_readiness(c, cl.id)?;
                out.push((cl, r));
            }
            Ok(out)
        })
        .await?;
    let items: Vec<Value> = rows
        .iter()
        .map(|(c, r)| with_readiness(c, r.as_ref()))
        .collect();
    Ok(Json(json!({ "items": items })))
}

fn with_readiness(c: &ClusterRecord, r: Option<&store::readiness::ReadinessRecord>) -> Value {
    let mut v = json!(ClusterView::from(c));
    v["readiness"] = match (c.retired_at, r) {
        (None, Some(r)) => json!({ "state": r.state, "reasons": r.reasons }),
        _ => Value::Null,
    };
    v
}

/// `GET /v1/clusters/{cluster}`.
pub async fn get(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let (c, r) = state
        .store
        .read(move |c| {
            let cl = store::get_cluster(c, &name)?
                .ok_or_else(|| store::StoreError::NotFound(format!("cluster {name:?}")))?;
            let r = store::readiness::get_readiness(c, cl.id)?;
            Ok((cl, r))
        })
        .await?;
    Ok(Json(with_readiness(&c, r.as_ref())))
}

/// `POST /v1/clusters`: `ClusterCreated`; answers with the agent token, shown once.
pub async fn create(
    State(state): State<AppState>,
    access: Access,
    body: Body,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let b: CreateCluster = read_json(body).await?;
    if !crate::commands::valid_cluster_name(&b.name) {
        return Err(ApiError::invalid_field(
            "name",
            "must be 1 to 63 lower-case letters, digits or '-', starting and ending with a letter or digit",
        ));
    }
    validate_meta(&b.display_name, &b.description, &b.labels)?;
    let ctx = context(&access, b.reason)?;
    let meta = ClusterMeta {
        display_name: b.display_name,
        description: b.description,
        labels: b.labels,
    };
    let (value, c) = register(&state.store, b.name, meta, ctx, now(&state)).await?;
    let mut out = with_readiness(&c, None);
    out["token"] = json!(value);
    Ok((StatusCode::CREATED, Json(out)))
}

/// Registers a cluster with a new agent token, audited; returns the token and record.
pub async fn register(
    st: &store::Store,
    name: String,
    meta: ClusterMeta,
    ctx: crate::events::config_change::AuditContext,
    now: i64,
) -> Result<(String, ClusterRecord), store::StoreError> {
    let value = token::generate(token::CLUSTER_TOKEN_PREFIX);
    let digest = token::hash(&value);
    let c = st
        .write_audited(ctx, now, move |tx| {
            let new = NewCluster {
                name: &name,
                token_sha256: &digest,
            };
            let c = store::insert_cluster_with(tx, &new, &meta, now)?;
            let change = Change::new(action::CLUSTER_CREATED, "cluster", &c.name, Some(&c.name))
                .after(ClusterView::from(&c));
            Ok((c, change))
        })
        .await?;
    Ok((value, c))
}

/// `PATCH /v1/clusters/{cluster}`: `ClusterUpdated`.
pub async fn update(
    State(state): State<AppState>,
    access: Access,
    Path(name): Path<String>,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let b: UpdateCluster = read_json(body).await?;
    validate_meta(
        b.display_name.as_deref().unwrap_or(""),
        b.description.as_deref().unwrap_or(""),
        b.labels.as_ref().unwrap_or(&BTreeMap::new()),
    )?;
    let ctx = context(&access, b.reason)?;
    let patch = ClusterPatch {
        display_name: b.display_name,
        description: b.description,
        labels: b.labels,
    };
    let now = now(&state);
    let c = state
        .store
        .write_audited(ctx, now, move |tx| {
            let (before, after) = store::clusters::update_cluster(tx, &name, &patch, now)?;
            Ok((after.clone(), updated(&before, &after)))
        })
        .await?;
    Ok(Json(json!(ClusterView::from(&c))))
}

fn updated(before: &ClusterRecord, after: &ClusterRecord) -> Change {
    Change::new(
        action::CLUSTER_UPDATED,
        "cluster",
        &after.name,
        Some(&after.name),
    )
    .before(ClusterView::from(before))
    .after(ClusterView::from(after))
}

/// `DELETE /v1/clusters/{cluster}?reason=`: retire (`ClusterDeleted`).
pub async fn retire(
    State(state): State<AppState>,
    access: Access,
    Path(name): Path<String>,
    RawQuery(q): RawQuery,
) -> Result<StatusCode, ApiError> {
    let ctx = context(&access, reason_query(q.as_deref())?)?;
    let now = now(&state);
    state
        .store
        .write_audited(ctx, now, move |tx| {
            let before = store::clusters::retire_cluster(tx, &name, now)?;
            let change = Change::new(action::CLUSTER_DELETED, "cluster", &name, Some(&name))
                .before(ClusterView::from(&before));
            Ok(((), change))
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /v1/clusters/{cluster}/token`: a new agent token (shown once); the old one is
/// refused from now on. Audited as `ClusterUpdated` (`tokenRotatedAt`), never the value.
pub async fn rotate_token(
    State(state): State<AppState>,
    access: Access,
    Path(name): Path<String>,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let b: ReasonBody = read_json(body).await?;
    let ctx = context(&access, b.reason)?;
    let value = token::generate(token::CLUSTER_TOKEN_PREFIX);
    let digest = token::hash(&value);
    let now = now(&state);
    let c = state
        .store
        .write_audited(ctx, now, move |tx| {
            let (before, after) = store::clusters::rotate_cluster_token(tx, &name, &digest, now)?;
            Ok((after.clone(), updated(&before, &after)))
        })
        .await?;
    let mut out = json!(ClusterView::from(&c));
    out["token"] = json!(value);
    Ok(Json(out))
}

/// `PUT /v1/clusters/{cluster}/freeze`: the cluster-wide freeze on (with a reason and an
/// optional `until`) or off. Audited as `ClusterUpdated`.
pub async fn put_freeze(
    State(state): State<AppState>,
    access: Access,
    Path(name): Path<String>,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let b: FreezeBody = read_json(body).await?;
    let now = now(&state);
    let freeze = if b.enabled {
        if b.reason.as_deref().is_none_or(|r| r.trim().is_empty()) {
            return Err(ApiError::invalid_field("reason", "a freeze needs a reason"));
        }
        let until = b
            .until
            .as_deref()
            .map(|u| future_time("until", u, now))
            .transpose()?;
        Some(FreezeRecord {
            reason: b.reason.clone().unwrap_or_default().trim().to_string(),
            since: now,
            until,
        })
    } else {
        if b.until.is_some() {
            return Err(ApiError::invalid_field("until", "only with enabled: true"));
        }
        None
    };
    let ctx = context(&access, b.reason)?;
    let c = state
        .store
        .write_audited(ctx, now, move |tx| {
            let (before, after) =
                store::clusters::set_cluster_freeze(tx, &name, freeze.as_ref(), now)?;
            Ok((after.clone(), updated(&before, &after)))
        })
        .await?;
    Ok(Json(json!(ClusterView::from(&c))))
}

/// `GET /v1/clusters/{cluster}/readiness`: state, reasons and each check.
pub async fn readiness(
    State(state): State<AppState>,
    Path(name): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let r = state
        .store
        .read(move |c| {
            let cl = store::active_cluster(c, &name)?;
            store::readiness::get_readiness(c, cl.id)?
                .map(|r| (cl.name, r))
                .ok_or_else(|| store::StoreError::NotFound(format!("readiness of {name:?}")))
        })
        .await?;
    Ok(Json(json!(crate::fleet::readiness::view(&r.0, &r.1))))
}
