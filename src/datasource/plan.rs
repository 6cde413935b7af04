//! Grouped collection: a cluster is collected one group of workloads at a time, so a
//! run holds the samples of one or two groups, never of the whole cluster. The plan
//! comes from the inventory (kube-state-metrics, a handful of instant queries): whole
//! namespaces are packed into a group up to a pod budget, and a namespace above the
//! budget is split by workload (its pods named in the selector). A workload is never
//! split, so every group maps into complete workloads.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::analysis::{Input, INPUT_SCHEMA_VERSION};
use crate::datasource::mapping::PodIndex;
use crate::datasource::{ClusterScope, CollectStats, Collection, Window};

/// Samples one group may hold (16 bytes each: 3.2 M ≈ 50 MiB). The pod budget of a group
/// follows from it and the window's points per series.
pub const GROUP_SAMPLES: u64 = 3_200_000;
/// Usage series a pod is assumed to have when planning (2 containers × CPU and memory).
const SERIES_PER_POD: u64 = 4;
/// Bounds of the pod budget: few queries for short windows, progress for long ones.
const MIN_GROUP_PODS: usize = 16;
const MAX_GROUP_PODS: usize = 400;

/// One group: whole namespaces, or some workloads of one namespace.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Group {
    /// Namespaces selected; empty means every namespace (no inventory to plan with).
    pub namespaces: Vec<String>,
    /// When not empty, only these pods of the single namespace in `namespaces`.
    pub pods: Vec<String>,
    /// Pods seen in the window (planning weight).
    pub pod_count: usize,
    /// Workloads with a pod alive at the window end (progress estimate).
    pub workloads: usize,
}

/// A planned collection of one cluster over one window.
#[derive(Debug, Clone)]
pub struct CollectPlan {
    pub scope: ClusterScope,
    pub window: Window,
    pub groups: Vec<Group>,
    /// The inventory every group is mapped with.
    pub pods: Arc<PodIndex>,
    /// What planning cost (the inventory queries).
    pub stats: CollectStats,
}

impl CollectPlan {
    /// Workloads expected (the run's progress total before groups are collected).
    pub fn workloads(&self) -> usize {
        self.groups.iter().map(|g| g.workloads).sum()
    }
}

/// The pod budget of one group for `window`.
pub fn group_pods(window: Window) -> usize {
    let step_ms = i64::from(window.step_seconds.max(1)) * 1000;
    let points = ((window.end_ms - window.start_ms).max(0) / step_ms + 1) as u64;
    let pods = GROUP_SAMPLES / (points * SERIES_PER_POD).max(1);
    (pods as usize).clamp(MIN_GROUP_PODS, MAX_GROUP_PODS)
}

/// Groups of at most `budget` pods (a workload above the budget is a group alone).
/// Without kube-state-metrics nothing is known: one group of everything.
pub fn plan_groups(pods: &PodIndex, budget: usize) -> Vec<Group> {
    if !pods.ksm_present {
        return vec![Group::default()];
    }
    let mut groups: Vec<Group> = Vec::new();
    let mut packed = Group::default();
    for (namespace, workloads) in pods.workloads_by_namespace() {
        let count: usize = workloads.values().map(|w| w.pods.len()).sum();
        let alive = workloads.values().filter(|w| w.alive).count();
        if count > budget {
            groups.extend(split_namespace(&namespace, workloads.into_values(), budget));
            continue;
        }
        if !packed.namespaces.is_empty() && packed.pod_count + count > budget {
            groups.push(std::mem::take(&mut packed));
        }
        packed.namespaces.push(namespace);
        packed.pod_count += count;
        packed.workloads += alive;
    }
    if !packed.namespaces.is_empty() {
        groups.push(packed);
    }
    groups
}

/// Pods of one workload, as planning sees them.
#[derive(Debug, Clone, Default)]
pub struct WorkloadPods {
    pub pods: Vec<String>,
    /// A pod of it is alive at the window end.
    pub alive: bool,
}

fn split_namespace(
    namespace: &str,
    workloads: impl Iterator<Item = WorkloadPods>,
    budget: usize,
) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::new();
    let mut current = Group::default();
    for w in workloads {
        if !current.pods.is_empty() && current.pods.len() + w.pods.len() > budget {
            out.push(std::mem::take(&mut current));
        }
        current.namespaces = vec![namespace.to_string()];
        current.pod_count += w.pods.len();
        current.workloads += usize::from(w.alive);
        current.pods.extend(w.pods);
    }
    if !current.pods.is_empty() {
        out.push(current);
    }
    out
}

impl Collection {
    /// An empty collection of `window` (groups are absorbed into it).
    pub fn empty(window: Window) -> Collection {
        Collection {
            input: Input {
                schema_version: INPUT_SCHEMA_VERSION.to_string(),
                evaluation_time: window.end_ms,
                window_start: window.start_ms,
                containers: Vec::new(),
            },
            workloads: Vec::new(),
            stats: CollectStats::default(),
        }
    }

    /// Moves `other`'s containers, workloads and counters into this one.
    pub fn absorb(&mut self, other: Collection) {
        self.input.containers.extend(other.input.containers);
        self.workloads.extend(other.workloads);
        self.stats.add(&other.stats);
    }

    /// Containers and workloads in (namespace, kind, name[, container]) order.
    pub fn sort(&mut self) {
        self.input.containers.sort_by(|a, b| {
            let (a, b) = (&a.target, &b.target);
            (&a.namespace, &a.kind, &a.name, &a.container).cmp(&(
                &b.namespace,
                &b.kind,
                &b.name,
                &b.container,
            ))
        });
        self.workloads.sort_by(|a, b| {
            (&a.namespace, &a.kind, &a.name).cmp(&(&b.namespace, &b.kind, &b.name))
        });
    }
}

impl CollectStats {
    /// Adds `other`'s counters and phase times (phases summed by name, order kept).
    pub fn add(&mut self, other: &CollectStats) {
        self.queries += other.queries;
        self.series += other.series;
        self.samples += other.samples;
        for (name, ms) in &other.phase_ms {
            match self.phase_ms.iter_mut().find(|(n, _)| n == name) {
                Some((_, total)) => *total += ms,
                None => self.phase_ms.push((name.clone(), *ms)),
            }
        }
    }

    /// Phase times as a map (run records).
    pub fn phases(&self) -> BTreeMap<String, u64> {
        self.phase_ms.iter().cloned().collect()
    }
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
