//! Runs in progress, in memory: at most one per cluster (this is what keeps a cluster's
//! runs from overlapping), each with its phase and workloads done out of total. The same
//! figures are written to the run's row after every chunk.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::Serialize;

use super::Phase;
use crate::store::RunRecord;

/// What a running run has done so far.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Progress {
    pub run_id: String,
    pub cluster: String,
    pub phase: Phase,
    pub workloads_done: i64,
    pub workloads_total: i64,
}

/// A cluster's slot is taken: by the run named.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("run {run_id} is in progress")]
pub struct Taken {
    pub run_id: String,
}

/// Every cluster's run in progress.
#[derive(Debug, Default, Clone)]
pub struct ActiveRuns {
    by_cluster: Arc<Mutex<HashMap<String, Progress>>>,
}

impl ActiveRuns {
    /// Reserves `cluster` for run `run_id`; on `Err` names the run already in progress
    /// there.
    pub fn reserve(&self, cluster: &str, run_id: &str) -> Result<ProgressSlot, Taken> {
        let mut map = self.by_cluster.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(p) = map.get(cluster) {
            return Err(Taken {
                run_id: p.run_id.clone(),
            });
        }
        map.insert(
            cluster.to_string(),
            Progress {
                run_id: run_id.to_string(),
                cluster: cluster.to_string(),
                phase: Phase::Collect,
                workloads_done: 0,
                workloads_total: 0,
            },
        );
        Ok(ProgressSlot {
            runs: self.clone(),
            cluster: cluster.to_string(),
        })
    }

    /// The progress of run `run_id`, if it is running.
    pub fn of_run(&self, run_id: &str) -> Option<Progress> {
        let map = self.by_cluster.lock().unwrap_or_else(|p| p.into_inner());
        map.values().find(|p| p.run_id == run_id).cloned()
    }

    /// Every run in progress, by cluster.
    pub fn all(&self) -> Vec<Progress> {
        let map = self.by_cluster.lock().unwrap_or_else(|p| p.into_inner());
        let mut v: Vec<Progress> = map.values().cloned().collect();
        v.sort_by(|a, b| a.cluster.cmp(&b.cluster));
        v
    }
}

/// A reserved cluster; dropping it (however the run ends) frees the cluster.
#[derive(Debug)]
pub struct ProgressSlot {
    runs: ActiveRuns,
    cluster: String,
}

impl ProgressSlot {
    /// Copies the run's phase and counts into the in-memory progress.
    pub fn update(&self, run: &RunRecord) {
        let mut map = self
            .runs
            .by_cluster
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some(p) = map.get_mut(&self.cluster) {
            p.phase = run.phase;
            p.workloads_done = run.workloads_done;
            p.workloads_total = run.workloads_total;
        }
    }

    /// Marks the run done (the slot is freed on drop).
    pub fn finish(&self, run: &RunRecord) {
        self.update(run);
    }
}

impl Drop for ProgressSlot {
    fn drop(&mut self) {
        let mut map = self
            .runs
            .by_cluster
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        map.remove(&self.cluster);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cluster_holds_one_run_at_a_time_until_the_slot_drops() {
        let active = ActiveRuns::default();
        let slot = active.reserve("prod", "r1").unwrap();
        assert_eq!(active.reserve("prod", "r2").unwrap_err().run_id, "r1");
        let other = active.reserve("stage", "r3").unwrap();
        assert_eq!(active.all().len(), 2);
        drop(slot);
        assert!(active.of_run("r1").is_none());
        active.reserve("prod", "r4").unwrap();
        drop(other);
    }
}
