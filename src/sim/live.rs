//! What changed in the demo world while it runs: the in-process cluster records the
//! resources a resize or a rollout gave a workload's containers, and the demo datasource
//! reads them back, so runs see the values now in force and the usage the containers
//! had under them (CPU throttled at a lower limit, OOM kills at a lower memory limit).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use super::catalogue::{Resources, WorkloadSpec};

/// One container of one workload of one cluster.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct LiveKey {
    pub cluster: String,
    pub namespace: String,
    pub workload: String,
    pub container: String,
}

/// Each container's changes, oldest first: (from when, the values).
type Changes = BTreeMap<LiveKey, Vec<(i64, Resources)>>;

/// The shared record of changes. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct Live(Arc<Mutex<Changes>>);

impl Live {
    fn lock(&self) -> std::sync::MutexGuard<'_, Changes> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Notes that from `at_ms` on the container runs with `r` (a repeat is ignored).
    pub fn record(&self, key: LiveKey, at_ms: i64, r: Resources) {
        let mut map = self.lock();
        let changes = map.entry(key).or_default();
        if changes.last().is_some_and(|(_, last)| *last == r) {
            return;
        }
        changes.push((at_ms, r));
    }

    /// Gives `spec`'s containers their recorded changes in `cluster`.
    pub fn apply(&self, cluster: &str, spec: &mut WorkloadSpec) {
        let map = self.lock();
        for c in &mut spec.containers {
            let key = LiveKey {
                cluster: cluster.into(),
                namespace: spec.namespace.into(),
                workload: spec.name.clone(),
                container: c.name.into(),
            };
            if let Some(changes) = map.get(&key) {
                c.changes = changes.clone();
            }
        }
    }
}
