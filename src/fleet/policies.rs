//! RightsizingPolicies as operations: create, replace, soft delete, revert, and the
//! reads (list, one, versions). Every write names the version it read and is refused
//! with `VersionConflict` when another write came first; every write lands whole with
//! its `config_changed` row (`Policy*`). Validation reports every bad field with its
//! JSON path in one `invalid_policy`.

use serde::Serialize;
use serde_json::Value;

use crate::events::config_change::{action, target, AuditContext, Change};
use crate::operation::OpError;
use crate::policy::{validate_policy, FieldError, PolicySpec};
use crate::store::policies::{Author, PolicyRecord, PolicyVersion};
use crate::store::{Store, StoreError};
use crate::timestamp::format_ms;

/// The API representation of a policy.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PolicyView {
    pub id: i64,
    pub name: String,
    /// Bumped by every write; send it back (If-Match or the body) to change the policy.
    pub version: i64,
    pub spec: PolicySpec,
    pub created_at: String,
    pub updated_at: String,
    /// Set once soft-deleted.
    pub deleted_at: Option<String>,
}

/// The API representation of one version of a policy.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PolicyVersionView {
    pub version: i64,
    /// `created`, `updated` or `reverted`.
    pub change: String,
    pub created_at: String,
    /// The audit actor of whoever wrote it.
    pub actor: Value,
    /// The reason typed with the change (`null`: none given).
    pub reason: Option<String>,
    pub spec: PolicySpec,
}

/// A revert's audit record: the policy and the version it went back to.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Reverted {
    #[serde(flatten)]
    policy: PolicyView,
    reverted_to: i64,
}

pub fn policy_json(p: &PolicyRecord) -> PolicyView {
    PolicyView {
        id: p.id,
        name: p.spec.name.clone(),
        version: p.version,
        spec: p.spec.clone(),
        created_at: format_ms(p.created_at),
        updated_at: format_ms(p.updated_at),
        deleted_at: p.deleted_at.map(format_ms),
    }
}

pub fn version_json(v: &PolicyVersion) -> PolicyVersionView {
    PolicyVersionView {
        version: v.version,
        change: v.change.clone(),
        created_at: format_ms(v.created_at),
        actor: serde_json::from_str::<Value>(&v.actor).unwrap_or(Value::Null),
        reason: v.reason.clone(),
        spec: v.spec.clone(),
    }
}

/// The one 400 listing every bad field of a policy document.
pub fn invalid(errors: Vec<FieldError>) -> OpError {
    let n = errors.len();
    OpError::rejected(
        "invalid_policy",
        format!("the policy has {n} invalid field(s)"),
        errors,
    )
}

fn validated(spec: &PolicySpec) -> Result<(), OpError> {
    let errors = validate_policy(spec);
    if errors.is_empty() {
        Ok(())
    } else {
        Err(invalid(errors))
    }
}

fn change(action: &'static str, p: &PolicyRecord) -> Change {
    Change::new(action, target::POLICY, p.id, Some(&p.spec.name))
}

/// Who writes a version under `ctx`, and why, as the store keeps it.
fn author(ctx: &AuditContext) -> Result<Author, OpError> {
    Ok(Author {
        actor: serde_json::to_string(&ctx.actor).map_err(OpError::internal)?,
        reason: ctx.reason.clone(),
    })
}

/// Every policy (soft-deleted ones only with `deleted`).
pub async fn list(store: &Store, deleted: bool) -> Result<Vec<PolicyRecord>, OpError> {
    Ok(store.reading(move |r| r.policies(deleted)).await?)
}

/// Policy `id` (soft-deleted ones too).
pub async fn get(store: &Store, id: i64) -> Result<PolicyRecord, OpError> {
    store
        .reading(move |r| r.policy(id))
        .await?
        .ok_or_else(|| OpError::NotFound(format!("policy {id} does not exist")))
}

/// The whole history of policy `id`, oldest first.
pub async fn versions(store: &Store, id: i64) -> Result<Vec<PolicyVersion>, OpError> {
    Ok(store.reading(move |r| r.policy_versions(id)).await?)
}

/// Version `version` of policy `id`.
pub async fn version(store: &Store, id: i64, version: i64) -> Result<PolicyVersion, OpError> {
    store
        .reading(move |r| r.policy_version(id, version))
        .await?
        .ok_or_else(|| OpError::NotFound(format!("policy {id} has no version {version}")))
}

/// `PolicyCreated`.
pub async fn create(
    store: &Store,
    now: i64,
    ctx: AuditContext,
    spec: PolicySpec,
) -> Result<PolicyRecord, OpError> {
    validated(&spec)?;
    let by = author(&ctx)?;
    Ok(store
        .write_audited(ctx, now, move |tx| {
            let p = tx.create_policy(&spec, &by, now)?;
            let c = change(action::POLICY_CREATED, &p).after(policy_json(&p));
            Ok((p, c))
        })
        .await?)
}

/// `PolicyUpdated`: the whole new document, over version `expected`.
pub async fn replace(
    store: &Store,
    now: i64,
    ctx: AuditContext,
    id: i64,
    expected: i64,
    spec: PolicySpec,
) -> Result<PolicyRecord, OpError> {
    validated(&spec)?;
    let by = author(&ctx)?;
    Ok(store
        .write_audited(ctx, now, move |tx| {
            let (before, after) = tx.update_policy(id, expected, &spec, &by, "updated", now)?;
            let c = change(action::POLICY_UPDATED, &after)
                .before(policy_json(&before))
                .after(policy_json(&after));
            Ok((after, c))
        })
        .await?)
}

/// `PolicyDeleted`: soft delete over version `expected`.
pub async fn delete(
    store: &Store,
    now: i64,
    ctx: AuditContext,
    id: i64,
    expected: i64,
) -> Result<(), OpError> {
    Ok(store
        .write_audited(ctx, now, move |tx| {
            let before = tx.delete_policy(id, expected, now)?;
            let after = tx.policy(id)?;
            let c = change(action::POLICY_DELETED, &before)
                .before(policy_json(&before))
                .after(after.as_ref().map(policy_json));
            Ok(((), c))
        })
        .await?)
}

/// `PolicyReverted`: appends a new version with the content of version `to`, over
/// version `expected`.
pub async fn revert(
    store: &Store,
    now: i64,
    ctx: AuditContext,
    id: i64,
    expected: i64,
    to: i64,
) -> Result<PolicyRecord, OpError> {
    let by = author(&ctx)?;
    Ok(store
        .write_audited(ctx, now, move |tx| {
            let old = tx
                .policy_version(id, to)?
                .ok_or_else(|| StoreError::NotFound(format!("version {to} of policy {id}")))?;
            let (before, after) =
                tx.update_policy(id, expected, &old.spec, &by, "reverted", now)?;
            let after_json = Reverted {
                policy: policy_json(&after),
                reverted_to: to,
            };
            let c = change(action::POLICY_REVERTED, &after)
                .before(policy_json(&before))
                .after(after_json);
            Ok((after, c))
        })
        .await?)
}
