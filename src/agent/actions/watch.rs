//! The health watch in the agent: after a change it counts OOM kills, restarts and CPU
//! throttling of the workload's pods (`decide::watch`, pure) from what the watches see
//! and the kubelets' counters (`counters`), and when a threshold is crossed it starts
//! the rollback — written ahead to the record like any change, then carried out by the
//! same steps. This runs on every pass and between passes, whatever the hub says:
//! paused, frozen or unreachable, a rollback still happens, and it never waits for
//! event delivery.

use super::Actions;
use crate::agent::decide::watch::{self, Verdict};
use crate::agent::state::Phase;
use crate::cluster::{Cluster, Pod, Snapshot, WorkloadKey};
use crate::wire::EventResource;

impl<C: Cluster> Actions<'_, C> {
    /// Looks at every watched workload; starts the rollbacks that are due, and returns
    /// their workloads (the snapshot no longer shows them as they are).
    pub async fn watch_all(&mut self, snap: &Snapshot, now: i64) -> Vec<WorkloadKey> {
        let keys = self.memory.watched();
        let mut rolled = Vec::new();
        for key in keys {
            if self.watch_one(&key, snap, now).await {
                rolled.push(key);
            }
        }
        rolled
    }

    /// True when a rollback started.
    async fn watch_one(&mut self, key: &WorkloadKey, snap: &Snapshot, now: i64) -> bool {
        let Some(mut w) = self.memory.get(key).and_then(|t| t.state.watch.clone()) else {
            return false;
        };
        let pods: Vec<&Pod> = snap.pods_of(key).collect();
        let cpu_changed = w.containers.iter().any(|c| {
            crate::agent::decide::values::fields_of(EventResource::Cpu)
                .iter()
                .any(|f| c.from.get(*f) != c.to.get(*f))
        });
        let counters = if cpu_changed && w.thresholds.throttling_ratio > 0.0 {
            self.counters
                .read(self.cluster, self.clock, snap, &pods)
                .await
        } else {
            Vec::new()
        };
        let moved = watch::observe(&mut w, &pods, &counters);
        let verdict = watch::judge(&w, now);
        let Some(t) = self.memory.get_mut(key) else {
            return false;
        };
        match verdict {
            Verdict::Watching => {
                t.dirty |= moved;
                t.state.watch = Some(w);
                false
            }
            Verdict::Passed => {
                tracing::info!(workload = %key, "the health watch passed");
                t.state.watch = None;
                t.dirty = true;
                false
            }
            Verdict::RollBack(cause) => {
                tracing::warn!(workload = %key, reason = cause.reason.as_str(), message = %cause.message, "rolling back");
                let reason = cause.reason;
                let op = watch::rollback(&w, cause, crate::agent::event::new_id(now), now);
                t.state.watch = None;
                t.state.operation = Some(op);
                t.state
                    .set_phase(Phase::Applying, reason, "rolling back", now);
                t.dirty = true;
                // Written ahead: a restart finishes the rollback (same event id).
                if !self.persist_one(key).await {
                    tracing::warn!(workload = %key, "the rollback could not be written ahead; it goes on and is written next pass");
                }
                self.advance(key, snap, now).await;
                true
            }
        }
    }
}
