//! What the agent reports, on its way out: each event is kept in its workload's record
//! until the hub acknowledges it, staged for the outbox until the pass has written its
//! records (so an agent killed in between neither delivers an event it will decide
//! again nor loses one it wrote down), and recorded as a Kubernetes Event about its
//! record.

use std::collections::HashMap;

use super::memory::{Memory, Tracked};
use super::outbox::Outbox;
use crate::cluster::{Cluster, WorkloadKey};
use crate::wire::AgentEvent;

/// Unacknowledged events kept per record (older ones stay only in the buffer).
const KEEP: usize = 32;

/// The events on their way: the outbox, and what the agent must settle once they are
/// delivered.
pub struct Reports {
    outbox: Outbox,
    /// Unacknowledged event id → its workload.
    unsent: HashMap<String, WorkloadKey>,
    /// Events of this pass, handed to the outbox once its records are written.
    staged: Vec<AgentEvent>,
    /// Kubernetes Events to record once their record exists.
    kube_events: Vec<(WorkloadKey, AgentEvent)>,
}

impl Reports {
    pub fn new(outbox: Outbox) -> Reports {
        Reports {
            outbox,
            unsent: HashMap::new(),
            staged: Vec::new(),
            kube_events: Vec::new(),
        }
    }

    /// The shared event buffer.
    pub fn outbox(&self) -> &Outbox {
        &self.outbox
    }

    /// Buffers again, at start, the events `key`'s record says the hub never
    /// acknowledged.
    pub fn resend(&mut self, key: &WorkloadKey, unsent: &[AgentEvent]) {
        for e in unsent {
            self.unsent.insert(e.id.clone(), key.clone());
            self.outbox.push(e.clone());
        }
    }

    /// Keeps `e` in `t` (the entry of `key`) until the hub acknowledges it, stages it
    /// for the hub, and queues its Kubernetes Event.
    pub fn emit(&mut self, key: &WorkloadKey, t: &mut Tracked, e: AgentEvent) {
        t.state.unsent.push(e.clone());
        if t.state.unsent.len() > KEEP {
            let old = t.state.unsent.remove(0);
            self.unsent.remove(&old.id);
        }
        t.dirty = true;
        self.unsent.insert(e.id.clone(), key.clone());
        self.staged.push(e.clone());
        self.kube_events.push((key.clone(), e));
    }

    /// Forgets the events the hub acknowledged (or the buffer dropped).
    pub fn settle(&mut self, memory: &mut Memory) {
        for id in self.outbox.take_settled() {
            if let Some(key) = self.unsent.remove(&id) {
                if let Some(t) = memory.get_mut(&key) {
                    t.state.unsent.retain(|e| e.id != id);
                    t.dirty = true;
                }
            }
        }
    }

    /// Kubernetes Events queued so far (a pass counts the ones it adds).
    pub fn queued(&self) -> usize {
        self.kube_events.len()
    }

    /// The records are written (or tried): the staged events go to the outbox, and the
    /// Kubernetes Events are recorded about the records that exist.
    pub async fn hand_over<C: Cluster>(&mut self, cluster: &C, memory: &Memory) {
        for e in std::mem::take(&mut self.staged) {
            self.outbox.push(e);
        }
        for (key, e) in std::mem::take(&mut self.kube_events) {
            let Some(regarding) = memory
                .get(&key)
                .and_then(|t| t.record.as_ref())
                .filter(|r| r.uid.is_some())
                .map(|r| r.object_ref())
            else {
                continue;
            };
            let event = super::event::kubernetes(&e, regarding);
            if let Err(err) = cluster.record_event(&event).await {
                tracing::warn!(workload = %key, reason = %e.reason.as_str(), error = %err, "cannot record the Kubernetes Event");
            }
        }
    }
}
