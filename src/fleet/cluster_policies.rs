//! The RightsizingPolicy objects of a cluster, as its agent reports them
//! (`PUT /v1/clusters/{cluster}/policies`), judged and stored: a valid generation is in
//! force at once; an invalid one changes nothing (the last valid generation of the same
//! object stays in force, and a new object is not in force until it is valid); an object
//! the report leaves out was deleted. Each change is audited (`ClusterPolicy*`, actor
//! the cluster's agent as `system`) in the transaction that makes it. Reads serve the
//! hub's policies page.

use serde::Serialize;

use crate::events::config_change::{action, target, Actor, AuditContext, Change};
use crate::operation::OpError;
use crate::policy::from_cluster::document_of;
use crate::policy::{FieldError, PolicySpec};
use crate::store::cluster_policies::ClusterPolicyRecord;
use crate::store::Store;
use crate::timestamp::format_ms;
use crate::wire::cluster_policies::{
    ClusterPolicies, ClusterPolicyObject, ClusterPolicyVerdict, ClusterPolicyVerdicts,
    MAX_CLUSTER_POLICIES,
};

/// The API representation of a cluster's policy (read-only in the hub).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterPolicyView {
    pub id: i64,
    pub cluster: String,
    pub name: String,
    pub uid: String,
    /// The latest generation the agent saw.
    pub generation: i64,
    /// The generation in force (`null`: none was ever valid, so it changes nothing).
    pub accepted_generation: Option<i64>,
    /// The document in force (`null` with `acceptedGeneration`).
    pub spec: Option<PolicySpec>,
    /// What is wrong with `generation` (empty: it is the one in force).
    #[schema(value_type = Vec<Object>)]
    pub errors: Vec<FieldError>,
    pub created_at: String,
    pub updated_at: String,
}

pub fn view(p: &ClusterPolicyRecord) -> ClusterPolicyView {
    ClusterPolicyView {
        id: p.id,
        cluster: p.cluster.clone(),
        name: p.name.clone(),
        uid: p.uid.clone(),
        generation: p.generation,
        accepted_generation: p.accepted_generation,
        spec: p.spec.clone(),
        errors: p.errors.clone(),
        created_at: format_ms(p.created_at),
        updated_at: format_ms(p.updated_at),
    }
}

/// The cluster policies of `cluster` (or every cluster), by cluster and name.
pub async fn list(
    store: &Store,
    cluster: Option<String>,
) -> Result<Vec<ClusterPolicyRecord>, OpError> {
    Ok(store
        .reading(move |r| r.cluster_policies(cluster.as_deref()))
        .await?)
}

/// The audit actor of what a cluster's agent reports.
pub fn agent_actor(cluster: &str) -> AuditContext {
    AuditContext {
        actor: Actor::system(&format!("agent of cluster {cluster}")),
        reason: None,
    }
}

/// The row `o` makes of `before` (the stored row of the same name, if any) at `now`.
/// The same uid keeps the document in force through an invalid generation; another uid
/// is another object (deleted and created again) and starts over.
pub fn judge(
    before: Option<&ClusterPolicyRecord>,
    cluster: &str,
    o: &ClusterPolicyObject,
    now: i64,
) -> ClusterPolicyRecord {
    let same = before.filter(|b| b.uid == o.uid);
    let (accepted_generation, spec, errors) = match document_of(&o.name, &o.spec) {
        Ok(doc) => (Some(o.generation), Some(doc), Vec::new()),
        Err(errors) => (
            same.and_then(|b| b.accepted_generation),
            same.and_then(|b| b.spec.clone()),
            errors,
        ),
    };
    ClusterPolicyRecord {
        id: before.map_or(0, |b| b.id),
        cluster: cluster.to_string(),
        name: o.name.clone(),
        uid: o.uid.clone(),
        generation: o.generation,
        accepted_generation,
        spec,
        errors,
        created_at: same.map_or(now, |b| b.created_at),
        updated_at: now,
    }
}

/// True when `a` and `b` say the same (their times aside).
fn same_content(a: &ClusterPolicyRecord, b: &ClusterPolicyRecord) -> bool {
    (
        &a.uid,
        a.generation,
        a.accepted_generation,
        &a.spec,
        &a.errors,
    ) == (
        &b.uid,
        b.generation,
        b.accepted_generation,
        &b.spec,
        &b.errors,
    )
}

/// The audit action of a row going from `before` to `after`.
fn action_of(before: Option<&ClusterPolicyRecord>, after: &ClusterPolicyRecord) -> &'static str {
    if !after.errors.is_empty() {
        action::CLUSTER_POLICY_REJECTED
    } else if before.is_some_and(|b| b.uid == after.uid && b.spec.is_some()) {
        action::CLUSTER_POLICY_UPDATED
    } else {
        action::CLUSTER_POLICY_CREATED
    }
}

fn change(action: &'static str, p: &ClusterPolicyRecord) -> Change {
    let name = format!("{}/{}", p.cluster, p.name);
    Change::new(action, target::CLUSTER_POLICY, p.id, Some(&name))
}

/// Refuses a report that cannot be judged as a whole: too many objects, a name twice,
/// an object without name or uid, a generation below 1.
fn check(report: &ClusterPolicies) -> Result<(), OpError> {
    if report.policies.len() > MAX_CLUSTER_POLICIES {
        return Err(OpError::invalid(
            "policies",
            format!("at most {MAX_CLUSTER_POLICIES} objects per cluster"),
        ));
    }
    let mut names = std::collections::HashSet::new();
    for (i, o) in report.policies.iter().enumerate() {
        if o.name.is_empty() || o.name.len() > 253 {
            return Err(OpError::invalid(
                &format!("policies[{i}].name"),
                "must be 1-253 characters",
            ));
        }
        if o.uid.is_empty() || o.uid.len() > 128 {
            return Err(OpError::invalid(
                &format!("policies[{i}].uid"),
                "must be 1-128 characters",
            ));
        }
        if o.generation < 1 {
            return Err(OpError::invalid(
                &format!("policies[{i}].generation"),
                "must be at least 1",
            ));
        }
        if !names.insert(o.name.as_str()) {
            return Err(OpError::invalid(
                &format!("policies[{i}].name"),
                format!("{:?} is reported twice", o.name),
            ));
        }
    }
    Ok(())
}

/// Stores what the agent of `cluster` reports: the whole set of its objects.
pub async fn report(
    store: &Store,
    now: i64,
    cluster: &str,
    report: ClusterPolicies,
) -> Result<ClusterPolicyVerdicts, OpError> {
    check(&report)?;
    let cluster = cluster.to_string();
    let ctx = agent_actor(&cluster);
    Ok(store
        .writing(move |tx| {
            let stored = tx.cluster_policies(Some(&cluster))?;
            let mut verdicts = Vec::new();
            for o in &report.policies {
                let before = stored.iter().find(|b| b.name == o.name);
                let mut after = judge(before, &cluster, o, now);
                verdicts.push(ClusterPolicyVerdict {
                    name: after.name.clone(),
                    generation: after.generation,
                    accepted_generation: after.accepted_generation,
                    errors: after.errors.clone(),
                });
                if before.is_some_and(|b| same_content(b, &after)) {
                    continue;
                }
                after.id = tx.put_cluster_policy(&after)?;
                let mut c = change(action_of(before, &after), &after).after(view(&after));
                if let Some(b) = before {
                    c = c.before(view(b));
                }
                tx.record_change(&ctx, now, &c)?;
            }
            for gone in stored
                .iter()
                .filter(|b| !report.policies.iter().any(|o| o.name == b.name))
            {
                tx.delete_cluster_policy(gone.id)?;
                let c = change(action::CLUSTER_POLICY_DELETED, gone).before(view(gone));
                tx.record_change(&ctx, now, &c)?;
            }
            Ok(ClusterPolicyVerdicts { policies: verdicts })
        })
        .await?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(uid: &str, generation: i64, spec: serde_json::Value) -> ClusterPolicyObject {
        ClusterPolicyObject {
            name: "web".into(),
            uid: uid.into(),
            generation,
            spec,
        }
    }

    #[test]
    fn an_invalid_generation_keeps_the_valid_one_in_force_until_the_object_is_replaced() {
        let valid = judge(None, "prod", &object("u1", 1, json!({"priority": 3})), 10);
        assert_eq!(valid.accepted_generation, Some(1));
        assert_eq!(valid.spec.as_ref().map(|s| s.priority), Some(3));
        assert_eq!(action_of(None, &valid), action::CLUSTER_POLICY_CREATED);
        let bad = object(
            "u1",
            2,
            json!({"priority": 3, "mode": {"cpu": "sometimes"}}),
        );
        let kept = judge(Some(&valid), "prod", &bad, 20);
        assert_eq!((kept.generation, kept.accepted_generation), (2, Some(1)));
        assert_eq!(
            kept.spec, valid.spec,
            "the last valid generation stays in force"
        );
        assert_eq!(kept.errors[0].path, "spec.mode.cpu");
        assert_eq!(kept.created_at, 10);
        assert_eq!(
            action_of(Some(&valid), &kept),
            action::CLUSTER_POLICY_REJECTED
        );
        let fixed = judge(
            Some(&kept),
            "prod",
            &object("u1", 3, json!({"priority": 4})),
            30,
        );
        assert_eq!(
            action_of(Some(&kept), &fixed),
            action::CLUSTER_POLICY_UPDATED
        );
        // Deleted and created again under the name: a new object, nothing carried over.
        let reborn = judge(Some(&valid), "prod", &bad_with_uid("u2"), 40);
        assert_eq!(
            (reborn.accepted_generation, reborn.spec.is_none()),
            (None, true)
        );
        assert_eq!(reborn.created_at, 40);
        assert!(!same_content(&valid, &kept));
        assert!(same_content(&kept, &judge(Some(&kept), "prod", &bad, 50)));
    }

    fn bad_with_uid(uid: &str) -> ClusterPolicyObject {
        object(uid, 1, json!({"guardrails": {"cooldown": "later"}}))
    }

    #[test]
    fn a_report_that_cannot_be_judged_whole_is_refused() {
        let twice = ClusterPolicies {
            policies: vec![object("a", 1, json!({})), object("b", 1, json!({}))],
        };
        assert!(
            matches!(check(&twice), Err(OpError::Invalid { field, .. }) if field == "policies[1].name")
        );
        let zero = ClusterPolicies {
            policies: vec![object("a", 0, json!({}))],
        };
        assert!(check(&zero).is_err());
        assert!(check(&ClusterPolicies::default()).is_ok());
    }
}
