//! The agent's actions on the cluster, over the parts it owns (borrowed for one pass or
//! one round of changes in flight): deciding and starting changes (`decision`),
//! carrying them forward and keeping in-place values (`progress`), releasing workloads
//! to GitOps (`release`), the health watch and its rollbacks (`watch`), and here
//! reporting and writing the records that changed: the spec (server-side apply) when
//! the record is new or the recommendation moved, then the status; a record deleted
//! under the agent is created again. Then the pass's events go to the outbox, and its
//! Kubernetes Events are recorded about their records.

mod decision;
mod progress;
mod release;
mod watch;

use super::counters::Counters;
use super::memory::Memory;
use super::reports::Reports;
use crate::clock::Clock;
use crate::cluster::{Cluster, WorkloadKey};
use crate::wire::AgentEvent;

/// The cluster, the clock and the agent's parts, lent for a round of actions.
pub struct Actions<'a, C: Cluster> {
    cluster: &'a C,
    clock: &'a dyn Clock,
    memory: &'a mut Memory,
    reports: &'a mut Reports,
    counters: &'a mut Counters,
}

impl<'a, C: Cluster> Actions<'a, C> {
    pub fn new(
        cluster: &'a C,
        clock: &'a dyn Clock,
        memory: &'a mut Memory,
        reports: &'a mut Reports,
        counters: &'a mut Counters,
    ) -> Actions<'a, C> {
        Actions {
            cluster,
            clock,
            memory,
            reports,
            counters,
        }
    }

    /// True while `key` has a change in flight.
    pub fn changing(&self, key: &WorkloadKey) -> bool {
        self.memory
            .get(key)
            .is_some_and(|t| t.state.operation.is_some())
    }

    /// The workloads with a change in flight.
    pub fn in_flight(&self) -> Vec<WorkloadKey> {
        self.memory.in_flight()
    }

    /// Kubernetes Events queued so far (a pass counts the ones it adds).
    pub fn queued_events(&self) -> usize {
        self.reports.queued()
    }

    /// Reports `e` about `key` (kept in its record until acknowledged).
    fn emit(&mut self, key: &WorkloadKey, e: AgentEvent) {
        let t = self.memory.entry(key);
        self.reports.emit(key, t, e);
    }

    /// Writes every changed record and records the pass's Kubernetes Events; returns
    /// how many records were written.
    pub async fn persist(&mut self) -> usize {
        let mut written = 0;
        for key in self.memory.dirty() {
            written += usize::from(self.persist_one(&key).await);
        }
        // Written down (or tried): now the hub may have them.
        self.reports.hand_over(self.cluster, self.memory).await;
        written
    }

    /// Writes one workload's record (spec first when needed, then status); false when
    /// it could not be written.
    async fn persist_one(&mut self, key: &WorkloadKey) -> bool {
        let Some(t) = self.memory.get_mut(key) else {
            return false;
        };
        let mut record = t
            .record
            .clone()
            .unwrap_or_else(|| super::record::new(key, t.state.recommendation_id.as_deref(), &[]));
        record.status = super::record::status(&t.state);
        for attempt in 0..2 {
            if t.spec_dirty || record.uid.is_none() || attempt == 1 {
                match self.cluster.apply_record(&record).await {
                    Ok(stored) => {
                        record.uid = stored.uid;
                        t.spec_dirty = false;
                    }
                    Err(e) => {
                        tracing::warn!(workload = %key, error = %e, "cannot write the RightsizingRecommendation");
                        return false;
                    }
                }
            }
            match self.cluster.apply_record_status(&record).await {
                Ok(()) => {
                    // The status is written afresh from the state each time: keeping
                    // its JSON would hold every workload's memory twice.
                    record.status = serde_json::Value::Null;
                    t.record = Some(record);
                    t.dirty = false;
                    return true;
                }
                // Deleted under us: create it again.
                Err(e) if e.is_not_found() && attempt == 0 => continue,
                Err(e) => {
                    tracing::warn!(workload = %key, error = %e, "cannot write the RightsizingRecommendation's status");
                    return false;
                }
            }
        }
        false
    }
}
