//! What the agent keeps about each workload between passes: its state (what was
//! decided, the change in flight, the watch), its record as last applied, and what of
//! it still needs writing. The records in the cluster are its durable copy; this is
//! read back from them at start.

use std::collections::{BTreeMap, BTreeSet};

use super::decide::values::ProposedValue;
use super::state::{Step, WorkloadState};
use crate::cluster::{ObjectRef, Record, Workload, WorkloadKey};
use crate::wire::WorkloadConfig;

/// What the agent keeps about one workload (plain data: the parts that act on it set
/// what they changed and mark it dirty).
#[derive(Debug, Default)]
pub struct Tracked {
    pub state: WorkloadState,
    /// The record as last applied (spec; its status is not kept), once it exists.
    pub record: Option<Record>,
    /// The status needs writing.
    pub dirty: bool,
    /// The spec (or labels) need applying first.
    pub spec_dirty: bool,
    /// Pods kerf resized since an in-place change (not counted twice).
    pub patched: BTreeSet<String>,
}

/// Every workload the agent keeps, by key.
#[derive(Debug, Default)]
pub struct Memory {
    tracked: BTreeMap<WorkloadKey, Tracked>,
}

impl Memory {
    /// Takes `record` back as `key`'s memory (at start).
    pub fn recall(&mut self, key: WorkloadKey, state: WorkloadState, record: Record) {
        let t = Tracked {
            state,
            record: Some(record),
            ..Tracked::default()
        };
        self.tracked.insert(key, t);
    }

    pub fn len(&self) -> usize {
        self.tracked.len()
    }

    pub fn get(&self, key: &WorkloadKey) -> Option<&Tracked> {
        self.tracked.get(key)
    }

    pub fn get_mut(&mut self, key: &WorkloadKey) -> Option<&mut Tracked> {
        self.tracked.get_mut(key)
    }

    /// `key`'s entry, empty when the agent knew nothing of it.
    pub fn entry(&mut self, key: &WorkloadKey) -> &mut Tracked {
        self.tracked.entry(key.clone()).or_default()
    }

    /// Every workload's state.
    pub fn states(&self) -> impl Iterator<Item = (&WorkloadKey, &WorkloadState)> {
        self.tracked.iter().map(|(k, t)| (k, &t.state))
    }

    /// True while some change is in flight.
    pub fn busy(&self) -> bool {
        self.tracked.values().any(|t| t.state.operation.is_some())
    }

    /// True while some change is watched.
    pub fn watching(&self) -> bool {
        self.tracked.values().any(|t| t.state.watch.is_some())
    }

    /// The workloads with a change in flight.
    pub fn in_flight(&self) -> Vec<WorkloadKey> {
        self.keys(|t| t.state.operation.is_some())
    }

    /// The workloads whose record needs writing.
    pub fn dirty(&self) -> Vec<WorkloadKey> {
        self.keys(|t| t.dirty)
    }

    /// The workloads whose health watch runs now: watched, and no change in flight but
    /// the evictions that finish one.
    pub fn watched(&self) -> Vec<WorkloadKey> {
        self.keys(|t| {
            t.state.watch.is_some()
                && t.state
                    .operation
                    .as_ref()
                    .is_none_or(|op| matches!(op.step, Step::Evicting { .. }))
        })
    }

    fn keys(&self, pick: impl Fn(&Tracked) -> bool) -> Vec<WorkloadKey> {
        self.tracked
            .iter()
            .filter(|(_, t)| pick(t))
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// The entry of `live`, its spec kept in step with the recommendation.
    pub fn track(
        &mut self,
        live: &Workload,
        rec_id: Option<&str>,
        values: &[ProposedValue],
        config: Option<&WorkloadConfig>,
    ) -> &mut Tracked {
        let key = &live.key;
        let t = self.entry(key);
        if rec_id.is_some() && t.state.recommendation_id.as_deref() != rec_id {
            t.state.recommendation_id = rec_id.map(str::to_string);
            t.dirty = true;
        }
        if let Some(c) = config {
            if t.state.mode.as_ref() != Some(&c.mode) {
                t.state.mode = Some(c.mode.clone());
                t.dirty = true;
            }
        }
        let stale_spec = t.record.as_ref().is_none_or(|r| {
            r.spec.get("recommendationID").and_then(|v| v.as_str())
                != t.state.recommendation_id.as_deref()
        });
        if stale_spec {
            let mut fresh = super::record::new(key, t.state.recommendation_id.as_deref(), values);
            fresh.uid = t.record.as_ref().and_then(|r| r.uid.clone());
            fresh.owner = Some(ObjectRef {
                api_version: "apps/v1".into(),
                kind: key.kind.as_str().into(),
                namespace: key.namespace.clone(),
                name: key.name.clone(),
                uid: Some(live.uid.clone()).filter(|u| !u.is_empty()),
            });
            t.record = Some(fresh);
            t.spec_dirty = true;
            t.dirty = true;
        }
        t
    }
}
