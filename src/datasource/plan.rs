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

/// Usage series of one pod in one `query_range` query (2 containers assumed when
/// planning; queries 12 and 13 each select one metric).
const SERIES_PER_POD: u64 = 2;
/// Bounds of the pod budget of a group: few queries for short windows, progress for
/// long ones. Remote read groups always take the upper bound (their usage is streamed
/// per workload; the group only bounds the settings queries).
const MIN_GROUP_PODS: usize = 16;
pub const MAX_GROUP_PODS: usize = 400;

/// The load a run may put on one datasource per request (datasource settings
/// `maxSamplesPerQuery`, `maxSeriesPerQuery`; concurrency is `maxConcurrentQueries`).
/// `docs/contracts/datasource.md`, "Load budget".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Samples one request may ask the server to hold or send.
    pub samples_per_request: u64,
    /// Series one request may select.
    pub series_per_request: u64,
}

pub const DEFAULT_SAMPLES_PER_REQUEST: u64 = 500_000;
pub const DEFAULT_SERIES_PER_REQUEST: u64 = 2_000;

/// A range selector's answer is held whole by the server, as a matrix and then as JSON
/// (about 25 bytes a sample against remote read's streamed chunks at 5): such a request
/// asks for this share of the samples budget. Issue 29 measured it on a 1,000-workload
/// week: at the full budget Prometheus peaked at 921 MiB (240 MiB of heap), at a tenth
/// at 724–730 MiB, under what KRR's queries cost it on the same data (731 MiB).
const RANGE_SELECTOR_SHARE: u64 = 10;

impl Budget {
    /// The budget of one range-selector request.
    pub fn for_range_selectors(self) -> Budget {
        Budget {
            samples_per_request: (self.samples_per_request / RANGE_SELECTOR_SHARE).max(1),
            ..self
        }
    }
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            samples_per_request: DEFAULT_SAMPLES_PER_REQUEST,
            series_per_request: DEFAULT_SERIES_PER_REQUEST,
        }
    }
}

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

/// The pod budget of one `query_range` group for `window`: each range query (one
/// metric, at most 10,000 points per series) stays within the request budget.
pub fn group_pods(window: Window, budget: Budget) -> usize {
    let step_ms = i64::from(window.step_seconds.max(1)) * 1000;
    let points = ((window.end_ms - window.start_ms).max(0) / step_ms + 1) as u64;
    let per_pod = points.min(MAX_POINTS_PER_REQUEST) * SERIES_PER_POD;
    let pods = (budget.samples_per_request / per_pod.max(1))
        .min(budget.series_per_request / SERIES_PER_POD);
    (pods as usize).clamp(MIN_GROUP_PODS, MAX_GROUP_PODS)
}

/// Prometheus refuses range queries above 11,000 points per series; ranges are split
/// under this.
pub const MAX_POINTS_PER_REQUEST: u64 = 10_000;

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
        self.bytes += other.bytes;
        self.samples_decoded += other.samples_decoded;
        if self.protocol.is_empty() {
            self.protocol.clone_from(&other.protocol);
        }
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
