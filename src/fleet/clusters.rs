//! Registered clusters as operations: register (the agent token is made here and shown
//! once), update metadata, retire (soft: the record stays for the audit trail and the
//! token stops working), rotate the agent token, and the cluster-wide freeze; each one
//! audited transaction (`ClusterCreated`, `ClusterUpdated`, `ClusterDeleted`). Also
//! the reads: clusters with their readiness.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::auth::token;
use crate::events::config_change::{action, AuditContext, Change};
use crate::names;
use crate::operation::OpError;
use crate::store::readiness::ReadinessRecord;
use crate::store::{ClusterMeta, ClusterPatch, ClusterRecord, FreezeRecord, NewCluster, Store};
use crate::timestamp::format_ms;
use crate::wire::Freeze;

/// The API representation of a cluster (also `before`/`after` of its audit rows; it
/// never holds the token or its hash).
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
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
            created_at: format_ms(c.created_at),
            updated_at: c.updated_at.map(format_ms),
            retired_at: c.retired_at.map(format_ms),
            token_rotated_at: c.token_rotated_at.map(format_ms),
            freeze: freeze_view(c.freeze.as_ref()),
        }
    }
}

/// A cluster's readiness in brief, as lists show it.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct ReadinessBrief {
    pub state: String,
    pub reasons: Vec<String>,
}

/// A cluster with its readiness (`null` for retired clusters and before the first
/// evaluation) and where its usage comes from (`null` for retired clusters).
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct ClusterWithReadiness {
    #[serde(flatten)]
    pub cluster: ClusterView,
    pub readiness: Option<ReadinessBrief>,
    pub usage: Option<super::usage_source::ClusterUsageSource>,
}

fn with_readiness(c: &ClusterRecord, r: Option<&ReadinessRecord>) -> ClusterWithReadiness {
    ClusterWithReadiness {
        cluster: ClusterView::from(c),
        readiness: match (c.retired_at, r) {
            (None, Some(r)) => Some(ReadinessBrief {
                state: r.state.clone(),
                reasons: r.reasons.clone(),
            }),
            _ => None,
        },
        usage: None,
    }
}

/// The cluster-wide freeze as the API shows it.
pub fn freeze_view(f: Option<&FreezeRecord>) -> Freeze {
    match f {
        None => Freeze::off(),
        Some(f) => Freeze {
            enabled: true,
            reason: Some(f.reason.clone()),
            since: Some(format_ms(f.since)),
            until: Some(f.until.map(format_ms)),
        },
    }
}

/// Display name, description and labels as given (all optional on update).
#[derive(Debug, Clone, Default)]
pub struct ClusterMetaInput {
    pub display_name: Option<String>,
    pub description: Option<String>,
    pub labels: Option<BTreeMap<String, String>>,
}

pub(super) fn check_meta(m: &ClusterMetaInput) -> Result<(), OpError> {
    let display = m.display_name.as_deref().unwrap_or("");
    names::display(display, 100).map_err(|e| OpError::invalid("displayName", e))?;
    let description = m.description.as_deref().unwrap_or("");
    if description.chars().count() > 500 {
        return Err(OpError::invalid(
            "description",
            "must be at most 500 characters",
        ));
    }
    names::text(description, true).map_err(|e| OpError::invalid("description", e))?;
    let labels = m.labels.as_ref();
    if labels.is_some_and(|l| l.len() > 64) {
        return Err(OpError::invalid("labels", "at most 64 labels"));
    }
    for (k, v) in labels.into_iter().flatten() {
        // A refused key is not echoed whole: it is the client's text.
        let field = || format!("labels.{}", k.chars().take(63).collect::<String>());
        names::label_key(k).map_err(|e| OpError::invalid(&field(), e))?;
        if v.chars().count() > 253 {
            return Err(OpError::invalid(
                &field(),
                "values are at most 253 characters",
            ));
        }
        names::text(v, false).map_err(|e| OpError::invalid(&field(), e))?;
    }
    Ok(())
}

/// A cluster registered now, with its agent token (shown once).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Registered {
    #[serde(flatten)]
    pub cluster: ClusterWithReadiness,
    pub token: String,
}

/// Registers cluster `name` with a new agent token: `ClusterCreated`.
pub async fn register(
    store: &Store,
    now: i64,
    ctx: AuditContext,
    name: String,
    meta: ClusterMetaInput,
) -> Result<Registered, OpError> {
    let value = token::generate(token::CLUSTER_TOKEN_PREFIX);
    register_with_token(store, now, ctx, name, meta, value).await
}

/// Registers cluster `name` with the agent token `value` (a declared one, checked by
/// [`check_token`]): `ClusterCreated`.
pub async fn register_with_token(
    store: &Store,
    now: i64,
    ctx: AuditContext,
    name: String,
    meta: ClusterMetaInput,
    value: String,
) -> Result<Registered, OpError> {
    crate::names::cluster(&name).map_err(|e| OpError::invalid("name", e))?;
    check_meta(&meta)?;
    let meta = ClusterMeta {
        display_name: meta.display_name.unwrap_or_default(),
        description: meta.description.unwrap_or_default(),
        labels: meta.labels.unwrap_or_default(),
    };
    let digest = token::hash(&value);
    let c = store
        .write_audited(ctx, now, move |tx| {
            let new = NewCluster {
                name: &name,
                token_sha256: &digest,
            };
            let c = tx.insert_cluster(&new, &meta, now)?;
            let change = Change::new(action::CLUSTER_CREATED, "cluster", &c.name, Some(&c.name))
                .after(ClusterView::from(&c));
            Ok((c, change))
        })
        .await?;
    Ok(Registered {
        cluster: with_readiness(&c, None),
        token: value,
    })
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

/// `ClusterUpdated`: display name, description, labels.
pub async fn update(
    store: &Store,
    now: i64,
    ctx: AuditContext,
    name: String,
    meta: ClusterMetaInput,
) -> Result<ClusterView, OpError> {
    check_meta(&meta)?;
    let patch = ClusterPatch {
        display_name: meta.display_name,
        description: meta.description,
        labels: meta.labels,
    };
    Ok(store
        .write_audited(ctx, now, move |tx| {
            let (before, after) = tx.update_cluster(&name, &patch, now)?;
            Ok((ClusterView::from(&after), updated(&before, &after)))
        })
        .await?)
}

/// Retires cluster `name`: `ClusterDeleted`; its token stops working.
pub async fn retire(
    store: &Store,
    now: i64,
    ctx: AuditContext,
    name: String,
) -> Result<(), OpError> {
    Ok(store
        .write_audited(ctx, now, move |tx| {
            let before = tx.retire_cluster(&name, now)?;
            let change = Change::new(action::CLUSTER_DELETED, "cluster", &name, Some(&name))
                .before(ClusterView::from(&before));
            Ok(((), change))
        })
        .await?)
}

/// A new agent token (shown once); the old one is refused from now on. Audited as
/// `ClusterUpdated` (`tokenRotatedAt`), never the value.
pub async fn rotate_token(
    store: &Store,
    now: i64,
    ctx: AuditContext,
    name: String,
) -> Result<(ClusterView, String), OpError> {
    let value = token::generate(token::CLUSTER_TOKEN_PREFIX);
    set_token(store, now, ctx, name, value).await
}

/// What a token given by the operator must be: the cluster prefix and at least 32 more
/// characters of letters, digits, '-' or '_' (`kerf_ct_$(openssl rand -hex 32)`).
pub fn check_token(value: &str) -> Result<(), String> {
    let rest = value
        .strip_prefix(token::CLUSTER_TOKEN_PREFIX)
        .unwrap_or("");
    if rest.len() < 32
        || !rest
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(format!(
            "must be {}<at least 32 letters, digits, '-' or '_'>, e.g. {}$(openssl rand -hex 32)",
            token::CLUSTER_TOKEN_PREFIX,
            token::CLUSTER_TOKEN_PREFIX
        ));
    }
    Ok(())
}

/// Replaces the agent token with `value` (rotation, or a declared token): audited as
/// `ClusterUpdated` (`tokenRotatedAt`), never the value.
pub async fn set_token(
    store: &Store,
    now: i64,
    ctx: AuditContext,
    name: String,
    value: String,
) -> Result<(ClusterView, String), OpError> {
    let digest = token::hash(&value);
    let c = store
        .write_audited(ctx, now, move |tx| {
            let (before, after) = tx.rotate_cluster_token(&name, &digest, now)?;
            Ok((ClusterView::from(&after), updated(&before, &after)))
        })
        .await?;
    Ok((c, value))
}

/// The freeze wanted: on with a reason and an optional end, or off.
#[derive(Debug, Clone)]
pub struct FreezeInput {
    pub enabled: bool,
    pub reason: Option<String>,
    pub until: Option<i64>,
}

/// Turns the cluster-wide freeze on (a reason is required; `until` must lie ahead) or
/// off (`until` is refused). Audited as `ClusterUpdated` under `ctx`.
pub async fn set_freeze(
    store: &Store,
    now: i64,
    ctx: AuditContext,
    name: String,
    input: FreezeInput,
) -> Result<ClusterView, OpError> {
    let freeze = if input.enabled {
        let reason = input.reason.as_deref().map(str::trim).unwrap_or("");
        if reason.is_empty() {
            return Err(OpError::invalid("reason", "a freeze needs a reason"));
        }
        if input.until.is_some_and(|u| u <= now) {
            return Err(OpError::invalid("until", "must be in the future"));
        }
        Some(FreezeRecord {
            reason: reason.to_string(),
            since: now,
            until: input.until,
        })
    } else {
        if input.until.is_some() {
            return Err(OpError::invalid("until", "only with enabled: true"));
        }
        None
    };
    Ok(store
        .write_audited(ctx, now, move |tx| {
            let (before, after) = tx.set_cluster_freeze(&name, freeze.as_ref(), now)?;
            Ok((ClusterView::from(&after), updated(&before, &after)))
        })
        .await?)
}

/// Every cluster (retired ones too) with its readiness.
pub async fn list(store: &Store) -> Result<Vec<ClusterWithReadiness>, OpError> {
    Ok(store
        .reading(|r| {
            r.list_clusters()?
                .iter()
                .map(|c| Ok(with_readiness(c, r.readiness(c.id)?.as_ref())))
                .collect()
        })
        .await?)
}

/// Cluster `name` (retired too) with its readiness.
pub async fn get(store: &Store, name: String) -> Result<ClusterWithReadiness, OpError> {
    Ok(store
        .reading(move |r| {
            let c = r
                .get_cluster(&name)?
                .ok_or_else(|| crate::store::StoreError::NotFound(format!("cluster {name:?}")))?;
            Ok(with_readiness(&c, r.readiness(c.id)?.as_ref()))
        })
        .await?)
}
