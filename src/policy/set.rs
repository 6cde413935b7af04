//! The inputs of resolution for many workloads at once: the live policies, the overrides
//! by workload id and the default analysis policy, loaded once (per run, per request) and
//! resolved per workload. Pure: the store fills it, runs and the API use it.

use std::collections::{BTreeMap, HashMap};

use super::model::OverrideSpec;
use super::resolve::{resolve, Resolution, StoredPolicy, WorkloadRef};

/// A workload's override and its expiry (Unix ms).
pub type StoredOverride = (OverrideSpec, Option<i64>);

/// Everything resolution needs, for any number of workloads.
#[derive(Debug, Clone, Default)]
pub struct PolicySet {
    /// Live (not soft-deleted) policies at their current version.
    pub policies: Vec<StoredPolicy>,
    /// Overrides by workload id (expired ones included: resolution ignores them).
    pub overrides: HashMap<String, StoredOverride>,
    /// The recommender settings' analysis policy (JSON of the engine's `Policy`).
    pub default_analysis: serde_json::Value,
}

impl PolicySet {
    /// The effective policy of workload `id` (described by `w`) at `now_ms`.
    pub fn resolve(&self, id: &str, w: &WorkloadRef, now_ms: i64) -> Resolution {
        let o = self.overrides.get(id).map(|(spec, exp)| (spec, *exp));
        resolve(w, &self.policies, o, &self.default_analysis, now_ms)
    }
}

impl WorkloadRef {
    /// A workload reference from stored columns; `labels_json` is the stored label
    /// object (unreadable labels count as none, so label selectors do not match).
    pub fn from_columns(
        cluster: &str,
        namespace: &str,
        kind: &str,
        name: &str,
        labels_json: &str,
    ) -> WorkloadRef {
        WorkloadRef {
            cluster: cluster.to_string(),
            workload: crate::workload::WorkloadKey::new(namespace, kind.to_string(), name),
            labels: serde_json::from_str::<BTreeMap<String, String>>(labels_json)
                .unwrap_or_default(),
        }
    }
}
