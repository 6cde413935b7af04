//! The health watch in the agent: after a change it counts OOM kills, restarts and CPU
//! throttling of the workload's pods (`decide::watch`, pure) from what the watches see
//! and the kubelets' counters (`counters`), and when a threshold is crossed it starts
//! the rollback — written ahead to the record like any change, then carried out by the
//! same steps. This runs on every pass and between passes, whatever the hub says:
//! paused, frozen or unreachable, a rollback still happens, and it never waits for
//! event delivery.

use super::Actions;
use crate::agent::decide::watch::{self, Verdict};
use crate::agent::decide::{next_run, stall, Finding};
use crate::agent::state::{Phase, RollbackCause, Watch};
use crate::cluster::{Cluster, Pod, ReplicaSet, Snapshot, WorkloadKey, WorkloadKind};
use crate::wire::EventResource;
use crate::wire::Reason;

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
        let live = snap.workload(key).map(|x| &**x);
        let moved = watch::observe(&mut w, &pods, &counters) | stall::follow(&mut w, live, now);
        next_run::follow(&mut w, live, &pods, now);
        for p in stall::stuck_pods(&w, live, &pods) {
            match self.cluster.evict(&p.pod).await {
                Ok(()) => {
                    tracing::info!(workload = %key, pod = %p.pod.name, "replaced a pod of the template rolled back")
                }
                Err(e) => {
                    tracing::warn!(workload = %key, pod = %p.pod.name, error = %e, "cannot replace a pod of the template rolled back; retrying next pass")
                }
            }
        }
        // The evidence is gathered only for a rollout that stalled.
        let stalled = stall::due(&w, live, now).then(|| {
            let replica_sets: Vec<&ReplicaSet> = snap
                .replica_sets
                .iter()
                .filter(|r| r.namespace == key.namespace && key.kind == WorkloadKind::Deployment)
                .filter(|r| {
                    r.controller
                        .as_ref()
                        .is_some_and(|c| c.kind == "Deployment" && c.name == key.name)
                })
                .collect();
            stall::stalled(&w, live, &pods, &replica_sets, now)
        });
        let verdict = match stalled.flatten() {
            Some(cause) if w.undoing => {
                self.rollback_stalled(key, &w, cause, now);
                return false;
            }
            Some(cause) => Verdict::RollBack(cause),
            None => watch::judge(&w, now),
        };
        let Some(t) = self.memory.get_mut(key) else {
            return false;
        };
        match verdict {
            Verdict::Watching => {
                t.dirty |= moved;
                t.state.watch = Some(w);
                false
            }
            Verdict::Passed if w.undoing => {
                tracing::info!(workload = %key, "the previous values rolled out again");
                t.state.watch = None;
                t.dirty = true;
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

    /// The rollout of a rollback stalled: the previous values cannot come back either.
    /// Reported `failed RollbackError` with the stall's evidence, once; the watch ends
    /// (there is nothing further to restore) and the people who care are notified.
    fn rollback_stalled(&mut self, key: &WorkloadKey, w: &Watch, cause: RollbackCause, now: i64) {
        tracing::error!(workload = %key, message = %cause.message, "the rollback does not progress");
        let mut f = Finding::new(
            Reason::RollbackError,
            format!(
                "the rollback to the previous values does not progress: {}",
                cause.message
            ),
        );
        f.details = cause.details;
        let t = self.memory.entry(key);
        t.state.watch = None;
        t.state
            .set_phase(Phase::Failed, Reason::RollbackError, &f.message, now);
        t.dirty = true;
        let e = crate::agent::event::finding(now, key, &f, Some(&w.recommendation_id));
        self.emit(key, e);
    }
}
