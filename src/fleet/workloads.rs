//! What operators do to one workload: set or clear its override (mode per resource,
//! excluded containers, optional expiry), approve its latest recommendation once, and
//! read its effective policy. The caller has found the workload inside the caller's
//! scope; each change is one audited transaction (`OverrideSet`, `OverrideCleared`,
//! `WorkloadApproved`).

use serde::Serialize;
use serde_json::{json, Value};

use super::effective::workload_ref;
use crate::events::config_change::{action, target, AuditContext, Change};
use crate::operation::OpError;
use crate::policy::{validate_override, Mode, OverrideSpec, Resolution};
use crate::runs::Runs;
use crate::store::approvals::ApprovalRecord;
use crate::store::overrides::OverrideRecord;
use crate::store::{Store, StoreError, WorkloadRow};
use crate::timestamp::format_ms;

/// The API representation of an override; `active` is false once it expired.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OverrideView {
    pub workload_id: String,
    pub spec: OverrideSpec,
    pub expires_at: Option<String>,
    pub active: bool,
    pub set_at: String,
    /// The audit actor of whoever set it.
    pub set_by: Value,
}

pub fn override_json(o: &OverrideRecord, now: i64) -> OverrideView {
    OverrideView {
        workload_id: o.workload_id.clone(),
        spec: o.spec.clone(),
        expires_at: o.expires_at.map(format_ms),
        active: o.expires_at.is_none_or(|e| e > now),
        set_at: format_ms(o.created_at),
        set_by: serde_json::from_str::<Value>(&o.actor).unwrap_or(Value::Null),
    }
}

/// The API representation of an approval.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApprovalView {
    pub id: String,
    pub workload_id: String,
    pub recommendation_id: String,
    /// The approver's name.
    pub approved_by: Value,
    pub approved_at: String,
    /// Set once the agent applied it (`ApprovedOnce`).
    pub consumed_at: Option<String>,
    pub consumed_by_event: Option<String>,
    /// `pending` (the agent will apply it), `applied` or `lapsed`.
    pub state: &'static str,
    /// When a run last carried it over to a new recommendation asking for the same
    /// values (within the workload's change tolerance).
    pub carried_at: Option<String>,
    /// When a run superseded its recommendation with other values.
    pub lapsed_at: Option<String>,
    /// Why it lapsed, in words.
    pub lapse_reason: Option<String>,
}

pub fn approval_json(a: &ApprovalRecord) -> ApprovalView {
    let actor = serde_json::from_str::<Value>(&a.actor).unwrap_or(Value::Null);
    ApprovalView {
        id: a.id.clone(),
        workload_id: a.workload_id.clone(),
        recommendation_id: a.recommendation_id.clone(),
        approved_by: actor["name"].clone(),
        approved_at: format_ms(a.created_at),
        consumed_at: a.consumed_at.map(format_ms),
        consumed_by_event: a.consumed_by_event.clone(),
        state: match (a.consumed_at, &a.lapsed) {
            (Some(_), _) => "applied",
            (None, Some(_)) => "lapsed",
            (None, None) => "pending",
        },
        carried_at: a.carried_at.map(format_ms),
        lapsed_at: a.lapsed.as_ref().map(|(at, _)| format_ms(*at)),
        lapse_reason: a.lapsed.as_ref().map(|(_, why)| why.clone()),
    }
}

/// `cluster/namespace/kind/name`: how audit rows name a workload.
fn display_name(w: &WorkloadRow) -> String {
    let s = &w.seen;
    format!("{}/{}/{}/{}", s.cluster, s.namespace, s.kind, s.name)
}

/// `OverrideSet`: the whole override, which beats every policy for the fields it sets
/// until it expires.
pub async fn set_override(
    store: &Store,
    now: i64,
    ctx: AuditContext,
    w: &WorkloadRow,
    spec: OverrideSpec,
) -> Result<OverrideView, OpError> {
    let errors = validate_override(&spec);
    if !errors.is_empty() {
        let n = errors.len();
        return Err(OpError::rejected(
            "invalid_override",
            format!("the override has {n} invalid field(s)"),
            errors,
        ));
    }
    let rec = OverrideRecord {
        workload_id: w.seen.id.clone(),
        expires_at: spec
            .expires_at
            .as_deref()
            .and_then(crate::timestamp::parse_ms),
        spec,
        created_at: now,
        actor: serde_json::to_string(&ctx.actor).map_err(OpError::internal)?,
    };
    let (id, name) = (w.seen.id.clone(), display_name(w));
    Ok(store
        .write_audited(ctx, now, move |tx| {
            let before = tx.set_override(&rec)?;
            let after = override_json(&rec, now);
            let c = Change::new(
                action::OVERRIDE_SET,
                target::WORKLOAD_OVERRIDE,
                &id,
                Some(&name),
            )
            .before(before.map(|b| override_json(&b, now)))
            .after(&after);
            Ok((after, c))
        })
        .await?)
}

/// `OverrideCleared`; `NotFound` when the workload has no override.
pub async fn clear_override(
    store: &Store,
    now: i64,
    ctx: AuditContext,
    w: &WorkloadRow,
) -> Result<(), OpError> {
    let (id, name) = (w.seen.id.clone(), display_name(w));
    Ok(store
        .write_audited(ctx, now, move |tx| {
            let before = tx
                .clear_override(&id)?
                .ok_or_else(|| StoreError::NotFound(format!("an override of workload {id}")))?;
            let c = Change::new(
                action::OVERRIDE_CLEARED,
                target::WORKLOAD_OVERRIDE,
                &id,
                Some(&name),
            )
            .before(override_json(&before, now));
            Ok(((), c))
        })
        .await?)
}

/// The effective policy of `w` at `now`, and the policy set it was resolved from.
pub async fn resolve(
    runs: &Runs,
    now: i64,
    w: &WorkloadRow,
) -> Result<(Resolution, crate::policy::PolicySet), OpError> {
    let settings = runs.recommender().await.map_err(OpError::internal)?;
    let set = runs
        .policy_set(Some(&w.seen.cluster), &settings)
        .await
        .map_err(OpError::internal)?;
    Ok((set.resolve(&w.seen.id, &workload_ref(w), now), set))
}

/// A policy that selects a workload, as its effective policy lists it.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct MatchedPolicy {
    /// `hub` (a policy of `/v1/policies`) or `cluster` (a RightsizingPolicy object of
    /// the workload's cluster, `/v1/cluster-policies`: `version` is its generation in
    /// force).
    pub source: &'static str,
    pub id: i64,
    pub name: String,
    pub version: i64,
    pub priority: i32,
    /// The cluster of a `cluster` policy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
}

impl MatchedPolicy {
    /// The matching policies of `r` in precedence order: the cluster's own first.
    pub fn all_of(r: &Resolution, set: &crate::policy::PolicySet) -> Vec<MatchedPolicy> {
        let find = |id: i64, cluster: bool| {
            set.policies
                .iter()
                .find(|p| p.id == id && p.cluster.is_some() == cluster)
        };
        let cluster = r.matched_cluster.iter().filter_map(|id| find(*id, true));
        let hub = r.matched.iter().filter_map(|id| find(*id, false));
        cluster
            .chain(hub)
            .map(|p| MatchedPolicy {
                source: if p.cluster.is_some() {
                    "cluster"
                } else {
                    "hub"
                },
                id: p.id,
                name: p.spec.name.clone(),
                version: p.version,
                priority: p.spec.priority,
                cluster: p.cluster.clone(),
            })
            .collect()
    }
}

/// `WorkloadApproved`: approves recommendation `recommendation_id` of `w` once. Only the
/// latest recommendation made under the current effective policy of a workload in
/// `audit` mode (for at least one resource) can be approved; one approval per
/// recommendation, ever.
pub async fn approve(
    store: &Store,
    runs: &Runs,
    now: i64,
    ctx: AuditContext,
    w: &WorkloadRow,
    recommendation_id: String,
) -> Result<ApprovalView, OpError> {
    let id = &w.seen.id;
    let (r, _) = resolve(runs, now, w).await?;
    let mode = &r.effective.mode;
    if mode.cpu != Mode::Audit && mode.memory != Mode::Audit {
        return Err(OpError::conflict(
            "not_audit_mode",
            format!("workload {id} is not in audit mode for any resource; nothing to approve"),
        ));
    }
    let wanted = recommendation_id.clone();
    let rec = store
        .reading(move |r| r.recommendation(&wanted))
        .await?
        .filter(|rec| rec.workload_id == *id)
        .ok_or_else(|| {
            OpError::NotFound(format!(
                "workload {id} has no recommendation {recommendation_id}"
            ))
        })?;
    if w.latest_rec_id.as_deref() != Some(rec.id.as_str()) {
        return Err(OpError::conflict(
            "recommendation_superseded",
            format!(
                "recommendation {recommendation_id} is superseded by a newer one; approve the latest"
            ),
        )
        .with_details(json!({ "latestRecommendationId": w.latest_rec_id })));
    }
    if rec.settings_identity != r.identity || w.stale {
        return Err(OpError::conflict(
            "recommendation_stale",
            format!(
                "recommendation {recommendation_id} was made under another policy (or the workload is stale); \
                 wait for the next run"
            ),
        )
        .with_details(json!({
            "recommendationIdentity": rec.settings_identity,
            "currentIdentity": r.identity,
        })));
    }
    let a = ApprovalRecord {
        id: uuid::Uuid::new_v4().to_string(),
        workload_id: id.clone(),
        recommendation_id: rec.id.clone(),
        actor: serde_json::to_string(&ctx.actor).map_err(OpError::internal)?,
        created_at: now,
        consumed_at: None,
        consumed_by_event: None,
        carried_at: None,
        lapsed: None,
    };
    let name = display_name(w);
    store
        .write_audited(ctx, now, move |tx| {
            tx.insert_approval(&a)?;
            let after = approval_json(&a);
            let c = Change::new(action::WORKLOAD_APPROVED, target::APPROVAL, &a.id, Some(&name))
                .after(&after);
            Ok((after, c))
        })
        .await
        .map_err(|e| match e {
            StoreError::Conflict(_) => OpError::conflict(
                "already_approved",
                format!(
                    "recommendation {recommendation_id} was already approved; an approval is usable once"
                ),
            ),
            e => e.into(),
        })
}
