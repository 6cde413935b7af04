//! Effective-policy resolution: which policies match a workload, in which precedence,
//! and which of them (or an override, or a default) supplied each field. Pure and
//! deterministic: the result does not depend on the order policies are given in.
//!
//! Precedence among matching policies: higher `priority`; on a tie the more specific
//! selector (see [`specificity`]); then the name; then the id. Each field comes from the
//! first policy in that order that sets it. An unexpired override beats every hub policy
//! for the fields it sets (mode per resource, excluded containers).
//!
//! A cluster's own RightsizingPolicy objects (`StoredPolicy::cluster`) select only that
//! cluster's workloads and come before every hub policy and before the override: what a
//! GitOps team sets in Git is what holds, and what it leaves unset the hub decides.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::glob::glob_match;
use super::model::{
    FreezeWindow, MaintenanceWindow, Mode, OverrideSpec, PolicySpec, Selector, Strategy,
};
use crate::workload::WorkloadKey;

/// The workload being resolved: its identity, and the cluster and labels selectors
/// also match.
#[derive(Debug, Clone, Default)]
pub struct WorkloadRef {
    pub cluster: String,
    pub workload: WorkloadKey,
    pub labels: BTreeMap<String, String>,
}

/// A stored, live (not soft-deleted) policy at its current version.
#[derive(Debug, Clone)]
pub struct StoredPolicy {
    pub id: i64,
    pub version: i64,
    pub spec: PolicySpec,
    /// `Some(cluster)`: a RightsizingPolicy object of that cluster (`id` its row among
    /// the cluster policies, `version` the generation in force). It selects only that
    /// cluster's workloads and precedes the hub's policies and the override.
    pub cluster: Option<String>,
}

impl StoredPolicy {
    /// A hub policy.
    pub fn hub(id: i64, version: i64, spec: PolicySpec) -> StoredPolicy {
        StoredPolicy {
            id,
            version,
            spec,
            cluster: None,
        }
    }
}

/// Where a field's value came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(tag = "source", rename_all = "kebab-case")]
pub enum Origin {
    Default,
    Policy {
        id: i64,
        name: String,
        version: i64,
    },
    /// A RightsizingPolicy object of the workload's cluster, at the generation in force.
    ClusterPolicy {
        id: i64,
        cluster: String,
        name: String,
        generation: i64,
    },
    Override,
}

/// Everything the agent needs to decide for one workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EffectivePolicy {
    pub mode: EffectiveMode,
    /// The engine `Policy` (as given; the engine normalizes it).
    pub analysis: serde_json::Value,
    pub guardrails: EffectiveGuardrails,
    pub apply: EffectiveApply,
    pub hpa_coordination: bool,
    pub excluded_containers: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct EffectiveMode {
    pub cpu: Mode,
    pub memory: Mode,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EffectiveGuardrails {
    pub learning_period: String,
    pub min_confidence: u32,
    pub cooldown: String,
    pub change_tolerance: f64,
    pub rollback: EffectiveRollback,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EffectiveRollback {
    pub oom_kills: u32,
    pub restarts: u32,
    pub throttling_ratio: f64,
    pub watch_duration: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EffectiveApply {
    pub strategy: Strategy,
    pub fallback_after: String,
    #[serde(deserialize_with = "super::model::lenient::maintenance_windows")]
    pub maintenance_windows: Vec<MaintenanceWindow>,
    #[serde(deserialize_with = "super::model::lenient::freeze_windows")]
    pub freeze_windows: Vec<FreezeWindow>,
}

/// The resolution: the effective policy, its identity, and who contributed what.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Resolution {
    pub effective: EffectivePolicy,
    /// `v1:` + SHA-256 of the effective policy's canonical JSON.
    pub identity: String,
    /// Field path → origin, for every field.
    pub origins: BTreeMap<String, Origin>,
    /// Matching hub policies in precedence order (ids).
    pub matched: Vec<i64>,
    /// Matching cluster policies in precedence order (ids): all of them precede
    /// `matched`.
    pub matched_cluster: Vec<i64>,
}

/// Selector specificity: names, then labels, then namespaces, kinds, clusters; exact
/// entries count more than globs. Compared lexicographically.
pub fn specificity(s: &Selector) -> (u8, usize, u8, u8, u8, usize) {
    let exact = |v: &[String]| v.iter().filter(|x| !x.contains('*')).count();
    (
        u8::from(!s.names.is_empty()),
        s.labels.len(),
        u8::from(!s.namespaces.is_empty()),
        u8::from(!s.kinds.is_empty()),
        u8::from(!s.clusters.is_empty()),
        exact(&s.names) + exact(&s.namespaces) + exact(&s.clusters),
    )
}

/// True when `selector` selects `w`.
pub fn selects(selector: &Selector, w: &WorkloadRef) -> bool {
    let any = |patterns: &[String], value: &str| {
        patterns.is_empty() || patterns.iter().any(|p| glob_match(p, value))
    };
    let key = &w.workload;
    any(&selector.clusters, &w.cluster)
        && any(&selector.namespaces, &key.namespace)
        && (selector.kinds.is_empty() || selector.kinds.iter().any(|k| k == &key.kind))
        && any(&selector.names, &key.name)
        && selector
            .labels
            .iter()
            .all(|(k, v)| w.labels.get(k) == Some(v))
}

/// Resolves the effective policy of `w`. `default_analysis` is the recommender
/// settings' analysis policy; `overrides` apply unless expired at `now_ms`.
pub fn resolve(
    w: &WorkloadRef,
    policies: &[StoredPolicy],
    override_: Option<(&OverrideSpec, Option<i64>)>,
    default_analysis: &serde_json::Value,
    now_ms: i64,
) -> Resolution {
    let mut matching: Vec<&StoredPolicy> = policies
        .iter()
        .filter(|p| p.cluster.as_ref().is_none_or(|c| *c == w.cluster))
        .filter(|p| selects(&p.spec.selector, w))
        .collect();
    matching.sort_by(|a, b| {
        // The cluster's own policies first.
        b.cluster
            .is_some()
            .cmp(&a.cluster.is_some())
            .then_with(|| b.spec.priority.cmp(&a.spec.priority))
            .then_with(|| specificity(&b.spec.selector).cmp(&specificity(&a.spec.selector)))
            .then_with(|| a.spec.name.cmp(&b.spec.name))
            .then_with(|| a.id.cmp(&b.id))
    });
    let live_override = override_
        .filter(|(_, exp)| exp.is_none_or(|e| e > now_ms))
        .map(|(o, _)| o);
    let mut pick = Picker {
        matching: &matching,
        origins: BTreeMap::new(),
    };
    let effective = merge(&mut pick, live_override, default_analysis);
    let identity = identity_of(&effective);
    let ids = |cluster: bool| {
        matching
            .iter()
            .filter(|p| p.cluster.is_some() == cluster)
            .map(|p| p.id)
            .collect()
    };
    Resolution {
        effective,
        identity,
        origins: pick.origins,
        matched: ids(false),
        matched_cluster: ids(true),
    }
}

/// Takes each field from the first policy (in precedence order) that sets it, noting
/// where it came from.
struct Picker<'a> {
    matching: &'a [&'a StoredPolicy],
    origins: BTreeMap<String, Origin>,
}

impl Picker<'_> {
    fn get<T>(&mut self, path: &str, field: impl Fn(&PolicySpec) -> Option<T>, default: T) -> T {
        self.first(path, &field, |_| true).unwrap_or_else(|| {
            self.origins.insert(path.to_string(), Origin::Default);
            default
        })
    }

    /// The value of the first matching policy among those `among` keeps that sets it.
    fn first<T>(
        &mut self,
        path: &str,
        field: &impl Fn(&PolicySpec) -> Option<T>,
        among: impl Fn(&StoredPolicy) -> bool,
    ) -> Option<T> {
        let (p, v) = self
            .matching
            .iter()
            .filter(|p| among(p))
            .find_map(|p| field(&p.spec).map(|v| (p, v)))?;
        let origin = match &p.cluster {
            Some(cluster) => Origin::ClusterPolicy {
                id: p.id,
                cluster: cluster.clone(),
                name: p.spec.name.clone(),
                generation: p.version,
            },
            None => Origin::Policy {
                id: p.id,
                name: p.spec.name.clone(),
                version: p.version,
            },
        };
        self.origins.insert(path.to_string(), origin);
        Some(v)
    }

    /// A field the override may set: the cluster's policies, then the override, then
    /// the hub's policies, then the default.
    fn overridable<T>(
        &mut self,
        path: &str,
        field: impl Fn(&PolicySpec) -> Option<T>,
        overridden: Option<T>,
        default: T,
    ) -> T {
        if let Some(v) = self.first(path, &field, |p| p.cluster.is_some()) {
            return v;
        }
        if let Some(v) = overridden {
            self.origins.insert(path.to_string(), Origin::Override);
            return v;
        }
        self.get(path, field, default)
    }
}

fn merge(
    p: &mut Picker<'_>,
    o: Option<&OverrideSpec>,
    default_analysis: &serde_json::Value,
) -> EffectivePolicy {
    use super::defaults as d;
    let o_mode = |f: fn(&super::model::ModeSpec) -> Option<Mode>| {
        o.and_then(|o| o.mode.as_ref()).and_then(f)
    };
    let cpu = p.overridable(
        "mode.cpu",
        |s| s.mode.as_ref()?.cpu,
        o_mode(|m| m.cpu),
        d::MODE,
    );
    let memory = p.overridable(
        "mode.memory",
        |s| s.mode.as_ref()?.memory,
        o_mode(|m| m.memory),
        d::MODE,
    );
    let g = |s: &PolicySpec| s.guardrails.clone();
    let r = |s: &PolicySpec| s.guardrails.as_ref()?.rollback.clone();
    let a = |s: &PolicySpec| s.apply.clone();
    let excluded = o
        .map(|o| o.excluded_containers.clone())
        .filter(|v| !v.is_empty());
    // No policy sets it: only the override, else none.
    let excluded_containers = p.overridable("excludedContainers", |_| None, excluded, Vec::new());
    EffectivePolicy {
        mode: EffectiveMode { cpu, memory },
        analysis: p.get("analysis", |s| s.analysis.clone(), default_analysis.clone()),
        guardrails: EffectiveGuardrails {
            learning_period: p.get(
                "guardrails.learningPeriod",
                |s| g(s)?.learning_period,
                d::LEARNING_PERIOD.into(),
            ),
            min_confidence: p.get(
                "guardrails.minConfidence",
                |s| g(s)?.min_confidence,
                d::MIN_CONFIDENCE,
            ),
            cooldown: p.get(
                "guardrails.cooldown",
                |s| g(s)?.cooldown,
                d::COOLDOWN.into(),
            ),
            change_tolerance: p.get(
                "guardrails.changeTolerance",
                |s| g(s)?.change_tolerance,
                d::CHANGE_TOLERANCE,
            ),
            rollback: EffectiveRollback {
                oom_kills: p.get(
                    "guardrails.rollback.oomKills",
                    |s| r(s)?.oom_kills,
                    d::ROLLBACK_OOM_KILLS,
                ),
                restarts: p.get(
                    "guardrails.rollback.restarts",
                    |s| r(s)?.restarts,
                    d::ROLLBACK_RESTARTS,
                ),
                throttling_ratio: p.get(
                    "guardrails.rollback.throttlingRatio",
                    |s| r(s)?.throttling_ratio,
                    d::ROLLBACK_THROTTLING,
                ),
                watch_duration: p.get(
                    "guardrails.rollback.watchDuration",
                    |s| r(s)?.watch_duration,
                    d::WATCH_DURATION.into(),
                ),
            },
        },
        apply: EffectiveApply {
            strategy: p.get("apply.strategy", |s| a(s)?.strategy, d::STRATEGY),
            fallback_after: p.get(
                "apply.fallbackAfter",
                |s| a(s)?.fallback_after,
                d::FALLBACK_AFTER.into(),
            ),
            maintenance_windows: p.get(
                "apply.maintenanceWindows",
                |s| a(s)?.maintenance_windows,
                Vec::new(),
            ),
            freeze_windows: p.get("apply.freezeWindows", |s| a(s)?.freeze_windows, Vec::new()),
        },
        hpa_coordination: p.get(
            "hpaCoordination",
            |s| s.hpa_coordination,
            d::HPA_COORDINATION,
        ),
        excluded_containers,
    }
}

/// `v1:` + SHA-256 of the canonical JSON of an effective policy.
pub fn identity_of(effective: &EffectivePolicy) -> String {
    let json = serde_json::to_vec(effective).unwrap_or_default();
    format!("v1:{}", hex::encode(Sha256::digest(&json)))
}

#[cfg(test)]
#[path = "resolve_tests.rs"]
mod tests;
