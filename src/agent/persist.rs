//! Writing the records that changed: the spec (server-side apply) when the record is
//! new or the recommendation moved, then the status; a record deleted under the agent
//! is created again. Then the pass's events go to the outbox, and its Kubernetes Events
//! are recorded about their records.

use super::hub::Hub;
use super::run::Agent;
use crate::cluster::{Cluster, WorkloadKey};

impl<C: Cluster, H: Hub> Agent<C, H> {
    /// Writes every changed record and records the pass's Kubernetes Events; returns
    /// how many records were written.
    pub(super) async fn persist(&mut self) -> usize {
        let dirty: Vec<WorkloadKey> = self
            .tracked
            .iter()
            .filter(|(_, t)| t.dirty)
            .map(|(k, _)| k.clone())
            .collect();
        let mut written = 0;
        for key in dirty {
            written += usize::from(self.persist_one(&key).await);
        }
        // Written down (or tried): now the hub may have them.
        for e in std::mem::take(&mut self.staged) {
            self.outbox.push(e);
        }
        for (key, e) in std::mem::take(&mut self.kube_events) {
            let Some(regarding) = self
                .tracked
                .get(&key)
                .and_then(|t| t.record.as_ref())
                .filter(|r| r.uid.is_some())
                .map(|r| r.object_ref())
            else {
                continue;
            };
            let event = super::event::kubernetes(&e, regarding);
            if let Err(err) = self.cluster.record_event(&event).await {
                tracing::warn!(workload = %key, reason = %e.reason.as_str(), error = %err, "cannot record the Kubernetes Event");
            }
        }
        written
    }

    /// Writes one workload's record (spec first when needed, then status); false when
    /// it could not be written.
    pub(super) async fn persist_one(&mut self, key: &WorkloadKey) -> bool {
        let Some(t) = self.tracked.get_mut(key) else {
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
