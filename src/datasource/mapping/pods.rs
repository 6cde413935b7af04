//! The pod index: which workload and release every pod seen in the window belonged to,
//! which pods are alive at the end, and each workload's identity and desired replicas,
//! resolved from kube-state-metrics (pod → ReplicaSet → Deployment or Argo Rollout,
//! pod → Job → CronJob, a bare Job, StatefulSet, DaemonSet).
//!
//! kube-state-metrics exports no Rollout series of its own: a Rollout's desired replicas
//! come from Argo's controller (`rollout_info_replicas_desired`) when Prometheus scrapes
//! it; without them its inventory reads unavailable (so the engine does not shrink it)
//! and its savings carry no estimate. Its identity (creation) is never known.
//!
//! Batch work ([`is_batch`]): a CronJob's Jobs are its runs, all of one release (the
//! CronJob's name) so that usage pools across them; a Job without a CronJob is a
//! workload of its own. Its pods rarely run at the window end, so the pods of its
//! latest run stand for "alive" (at their creation until their usage says later).

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::analysis::Sample;
use crate::datasource::raw::{label, metric, Labels, RawInventory, RawSeries};

/// Release of StatefulSet/DaemonSet pods whose `controller-revision-hash` label is not
/// exported by kube-state-metrics (its `--metric-labels-allowlist`).
pub const UNKNOWN_REVISION: &str = "unknown-revision";

pub use crate::workload::WorkloadKey;

/// One pod lifetime (one pod UID).
#[derive(Debug, Clone, PartialEq)]
pub struct PodMeta {
    pub uid: String,
    /// The pod's name.
    pub name: String,
    pub workload: WorkloadKey,
    pub release: String,
    /// Creation time (Unix ms), 0 when unknown.
    pub created_ms: i64,
    /// The Job that ran it (batch work), else empty.
    pub run: String,
}

/// A CronJob or a bare Job: work that runs to completion, not a set of replicas.
pub fn is_batch(kind: &str) -> bool {
    matches!(kind, "CronJob" | "Job")
}

/// Everything the mapping needs to attribute a usage series to a workload release.
#[derive(Debug, Default)]
pub struct PodIndex {
    /// False when kube-state-metrics returned nothing: identity is then unknown.
    pub ksm_present: bool,
    pods: HashMap<String, PodMeta>,
    by_name: HashMap<(String, String), Vec<String>>,
    /// Pod UID → latest raw sample time at the window end.
    alive: HashMap<String, i64>,
    workload_uids: HashMap<WorkloadKey, String>,
    replicas: HashMap<WorkloadKey, Sample>,
    labels: HashMap<WorkloadKey, Labels>,
    /// (workload, release) → when the release began (Unix ms).
    release_starts: HashMap<(WorkloadKey, String), i64>,
    hpas: HashMap<WorkloadKey, crate::datasource::Hpa>,
    /// Pods of batch work's latest runs that kube-state-metrics does not see running
    /// at the end (their settings are read over the window).
    finished: HashSet<String>,
}

impl PodIndex {
    /// Builds the index from the inventory answers.
    pub fn build(inv: &RawInventory) -> PodIndex {
        let mut idx = PodIndex {
            ksm_present: !inv.pod_owner.is_empty(),
            ..PodIndex::default()
        };
        let owners = owners(&inv.replicaset_owner);
        let revisions: HashMap<&str, &str> = inv
            .pod_revision
            .iter()
            .map(|s| (s.label(label::UID), s.label(label::REVISION)))
            .filter(|(u, r)| !u.is_empty() && !r.is_empty())
            .collect();
        let created: HashMap<&str, i64> = inv
            .pod_created
            .iter()
            .filter_map(|s| Some((s.label(label::UID), (s.last()?.value * 1000.0) as i64)))
            .collect();
        for series in controller_owners(&inv.pod_owner) {
            let (ns, uid) = (series.label(label::NAMESPACE), series.label(label::UID));
            let owner = series.label(label::OWNER_NAME);
            let owner_kind = series.label(label::OWNER_KIND);
            let (kind, name, release) = match owner_kind {
                // An Argo Rollout's revisions are its ReplicaSets, like a Deployment's.
                "ReplicaSet" => match owners.get(&(owner_kind, ns, owner)) {
                    Some((kind @ ("Deployment" | "Rollout"), name)) => (*kind, *name, owner),
                    _ => ("ReplicaSet", owner, owner),
                },
                // A CronJob's runs pool as one release; a bare Job is its own.
                "Job" => match owners.get(&(owner_kind, ns, owner)) {
                    Some((kind @ "CronJob", name)) => (*kind, *name, *name),
                    _ => ("Job", owner, owner),
                },
                kind @ ("StatefulSet" | "DaemonSet") => (
                    kind,
                    owner,
                    revisions.get(uid).copied().unwrap_or(UNKNOWN_REVISION),
                ),
                // Static pods and bare pods are not rightsized.
                _ => continue,
            };
            if uid.is_empty() || owner.is_empty() {
                continue;
            }
            let meta = PodMeta {
                uid: uid.to_string(),
                name: series.label(label::POD).to_string(),
                workload: WorkloadKey {
                    namespace: ns.to_string(),
                    kind: kind.to_string(),
                    name: name.to_string(),
                },
                release: release.to_string(),
                created_ms: created.get(uid).copied().unwrap_or(0),
                run: if owner_kind == "Job" {
                    owner.to_string()
                } else {
                    String::new()
                },
            };
            idx.by_name
                .entry((ns.to_string(), series.label(label::POD).to_string()))
                .or_default()
                .push(uid.to_string());
            idx.pods.insert(uid.to_string(), meta);
        }
        for series in &inv.pod_alive {
            if let Some(last) = series.last() {
                let t = idx.alive.entry(series.label(label::UID).to_string());
                let slot = t.or_insert(last.timestamp);
                *slot = (*slot).max(last.timestamp);
            }
        }
        idx.mark_latest_runs();
        idx.workload_uids = workload_uids(&inv.workload_created);
        idx.replicas = desired_replicas(&inv.replicas);
        idx.labels = super::labels::workload_labels(&inv.labels, &idx.pods);
        idx.release_starts = release_starts(&inv.replicaset_created, &idx.pods);
        idx.hpas = super::hpa::hpas(&inv.hpa);
        idx
    }

    /// Batch work: the pods of each workload's latest run (the Job of its newest pod)
    /// count as alive, at their creation, unless kube-state-metrics says they run now.
    fn mark_latest_runs(&mut self) {
        let mut latest: HashMap<&WorkloadKey, (i64, &str)> = HashMap::new();
        for m in self.pods.values().filter(|m| is_batch(&m.workload.kind)) {
            let slot = latest.entry(&m.workload).or_insert((m.created_ms, &m.run));
            if (m.created_ms, m.run.as_str()) > (slot.0, slot.1) {
                *slot = (m.created_ms, &m.run);
            }
        }
        let marked: Vec<(String, i64)> = self
            .pods
            .values()
            .filter(|m| {
                latest
                    .get(&m.workload)
                    .is_some_and(|(_, run)| *run == m.run)
            })
            .map(|m| (m.uid.clone(), m.created_ms))
            .collect();
        for (uid, created) in marked {
            if !self.alive.contains_key(&uid) {
                self.alive.insert(uid.clone(), created);
                self.finished.insert(uid);
            }
        }
    }

    /// The pods of `group` in latest runs of batch work that finished before the window
    /// end, as a group (its namespaces and their names); empty when there are none.
    pub fn finished_runs(&self, group: &crate::datasource::Group) -> crate::datasource::Group {
        Self::in_group(group, self.finished.iter().filter_map(|u| self.pods.get(u)))
    }

    /// The pods of `group` of every run of batch work in the window, as a group.
    pub fn batch_pods(&self, group: &crate::datasource::Group) -> crate::datasource::Group {
        let batch = self.pods.values().filter(|m| is_batch(&m.workload.kind));
        Self::in_group(group, batch)
    }

    /// Those of `pods` in `group`, as a group of their namespaces and names.
    fn in_group<'a>(
        group: &crate::datasource::Group,
        pods: impl Iterator<Item = &'a PodMeta>,
    ) -> crate::datasource::Group {
        let mut namespaces = std::collections::BTreeSet::new();
        let mut names = std::collections::BTreeSet::new();
        for m in pods {
            let ns = &m.workload.namespace;
            let in_group = (group.namespaces.is_empty() || group.namespaces.contains(ns))
                && (group.pods.is_empty() || group.pods.contains(&m.name));
            if in_group {
                namespaces.insert(ns.clone());
                names.insert(m.name.clone());
            }
        }
        crate::datasource::Group {
            namespaces: namespaces.into_iter().collect(),
            pods: names.into_iter().collect(),
            ..crate::datasource::Group::default()
        }
    }

    /// When `release` of `key` began (Unix ms): its ReplicaSet's creation for a
    /// Deployment, else the creation of its first pod seen in the window. 0 when
    /// unknown (also for StatefulSets and DaemonSets whose revision is not exported):
    /// the engine then infers it.
    pub fn release_started(&self, key: &WorkloadKey, release: &str) -> i64 {
        self.release_starts
            .get(&(key.clone(), release.to_string()))
            .copied()
            .unwrap_or(0)
    }

    /// The HPA scaling `key`, if any.
    pub fn hpa(&self, key: &WorkloadKey) -> Option<crate::datasource::Hpa> {
        self.hpas.get(key).cloned()
    }

    /// The pod named `pod` in `namespace` that was running at `at_ms`: the latest created
    /// at or before it (pod names are reused by StatefulSets).
    pub fn resolve(&self, namespace: &str, pod: &str, at_ms: i64) -> Option<&PodMeta> {
        let uids = self
            .by_name
            .get(&(namespace.to_string(), pod.to_string()))?;
        let mut best: Option<&PodMeta> = None;
        for meta in uids.iter().filter_map(|u| self.pods.get(u)) {
            let fits = meta.created_ms <= at_ms + 60_000;
            best = match best {
                None => Some(meta),
                Some(b) => {
                    let b_fits = b.created_ms <= at_ms + 60_000;
                    match (fits, b_fits) {
                        (true, false) => Some(meta),
                        (false, true) => Some(b),
                        (true, true) if meta.created_ms > b.created_ms => Some(meta),
                        (false, false) if meta.created_ms < b.created_ms => Some(meta),
                        _ => Some(b),
                    }
                }
            };
        }
        best
    }

    pub fn pod(&self, uid: &str) -> Option<&PodMeta> {
        self.pods.get(uid)
    }

    /// Latest raw sample time of a pod alive at the window end.
    pub fn alive_at(&self, uid: &str) -> Option<i64> {
        self.alive.get(uid).copied()
    }

    /// The workload UID kerf uses: kube-state-metrics exposes no workload UID, so the
    /// creation time tells a deleted-and-recreated workload apart.
    pub fn workload_uid(&self, key: &WorkloadKey) -> String {
        let base = format!("{}/{}/{}", key.namespace, key.kind, key.name);
        match self.workload_uids.get(key) {
            Some(created) => format!("{base}@{created}"),
            None => base,
        }
    }

    pub fn replicas(&self, key: &WorkloadKey) -> Option<Sample> {
        self.replicas.get(key).copied()
    }

    /// The workload's labels (policy selectors), empty when unknown.
    pub fn labels(&self, key: &WorkloadKey) -> Labels {
        self.labels.get(key).cloned().unwrap_or_default()
    }

    /// Pods of `key` alive at the end, as (uid, release, last seen).
    pub fn alive_pods(&self, key: &WorkloadKey) -> Vec<(&PodMeta, i64)> {
        let mut out: Vec<(&PodMeta, i64)> = self
            .pods
            .values()
            .filter(|m| &m.workload == key)
            .filter_map(|m| Some((m, self.alive_at(&m.uid)?)))
            .collect();
        out.sort_by(|a, b| a.0.uid.cmp(&b.0.uid));
        out
    }

    /// Every workload with its pods seen in the window (names, sorted) and whether one is
    /// alive at the end, by namespace (group planning).
    pub fn workloads_by_namespace(
        &self,
    ) -> BTreeMap<String, BTreeMap<WorkloadKey, crate::datasource::plan::WorkloadPods>> {
        let mut out: BTreeMap<String, BTreeMap<WorkloadKey, _>> = BTreeMap::new();
        for ((namespace, pod), uids) in &self.by_name {
            for meta in uids.iter().filter_map(|u| self.pods.get(u)) {
                let entry: &mut crate::datasource::plan::WorkloadPods = out
                    .entry(namespace.clone())
                    .or_default()
                    .entry(meta.workload.clone())
                    .or_default();
                if !entry.pods.contains(pod) {
                    entry.pods.push(pod.clone());
                }
                entry.alive |= self.alive.contains_key(&meta.uid);
            }
        }
        for w in out.values_mut().flat_map(|ws| ws.values_mut()) {
            w.pods.sort();
        }
        out
    }

    /// Namespaces with the number of pods seen in each (batch planning).
    pub fn namespaces(&self) -> BTreeMap<String, usize> {
        let mut out = BTreeMap::new();
        for meta in self.pods.values() {
            *out.entry(meta.workload.namespace.clone()).or_insert(0) += 1;
        }
        out
    }
}

/// `kube_pod_owner` can list several owners; the controller wins.
fn controller_owners(series: &[RawSeries]) -> Vec<&RawSeries> {
    let mut by_uid: BTreeMap<&str, &RawSeries> = BTreeMap::new();
    for s in series {
        let controller = s.label("owner_is_controller") != "false";
        match by_uid.get(s.label(label::UID)) {
            Some(prev) if prev.label("owner_is_controller") != "false" || !controller => {}
            _ => {
                by_uid.insert(s.label(label::UID), s);
            }
        }
    }
    by_uid.into_values().collect()
}

/// (`ReplicaSet` or `Job`, namespace, name) → its owner's (kind, name).
type Owners<'a> = HashMap<(&'a str, &'a str, &'a str), (&'a str, &'a str)>;

fn owners(series: &[RawSeries]) -> Owners<'_> {
    series
        .iter()
        .map(|s| {
            let (kind, name) = match s.label(label::JOB_NAME) {
                "" => ("ReplicaSet", s.label(label::REPLICASET)),
                job => ("Job", job),
            };
            (
                (kind, s.label(label::NAMESPACE), name),
                (s.label(label::OWNER_KIND), s.label(label::OWNER_NAME)),
            )
        })
        .collect()
}

/// Which workload a `kube_{deployment,statefulset,daemonset,cronjob}_*` series is about.
pub(super) fn workload_of(s: &RawSeries) -> Option<WorkloadKey> {
    let (kind, name) = [
        ("Deployment", label::DEPLOYMENT),
        ("StatefulSet", label::STATEFULSET),
        ("DaemonSet", label::DAEMONSET),
        ("CronJob", label::CRONJOB),
    ]
    .into_iter()
    .find_map(|(kind, l)| Some((kind, s.labels.get(l)?.clone())))?;
    Some(WorkloadKey {
        namespace: s.label(label::NAMESPACE).to_string(),
        kind: kind.to_string(),
        name,
    })
}

fn workload_uids(series: &[RawSeries]) -> HashMap<WorkloadKey, String> {
    series
        .iter()
        .filter_map(|s| Some((workload_of(s)?, format!("{}", s.last()?.value as i64))))
        .collect()
}

/// Release starts: ReplicaSet creation for Deployment and Argo Rollout releases, else the
/// earliest pod creation of the release (StatefulSet and DaemonSet revisions, a
/// Deployment whose ReplicaSet creation is not exported).
fn release_starts(
    rs_created: &[RawSeries],
    pods: &HashMap<String, PodMeta>,
) -> HashMap<(WorkloadKey, String), i64> {
    let created: HashMap<(&str, &str), i64> = rs_created
        .iter()
        .filter_map(|s| {
            let v = s.last()?.value;
            (v.is_finite() && v > 0.0).then_some((
                (s.label(label::NAMESPACE), s.label(label::REPLICASET)),
                (v * 1000.0) as i64,
            ))
        })
        .collect();
    let mut out: HashMap<(WorkloadKey, String), i64> = HashMap::new();
    for meta in pods.values() {
        if meta.release == UNKNOWN_REVISION || meta.created_ms <= 0 {
            continue;
        }
        let key = (meta.workload.clone(), meta.release.clone());
        let slot = out.entry(key).or_insert(meta.created_ms);
        *slot = (*slot).min(meta.created_ms);
    }
    for ((workload, release), start) in out.iter_mut() {
        if workload.kind == "Deployment" || workload.kind == "Rollout" {
            if let Some(rs) = created.get(&(workload.namespace.as_str(), release.as_str())) {
                *start = *rs;
            }
        }
    }
    out
}

fn desired_replicas(series: &[RawSeries]) -> HashMap<WorkloadKey, Sample> {
    series
        .iter()
        .filter_map(|s| Some((workload_of(s).or_else(|| rollout_of(s))?, s.last()?)))
        .collect()
}

/// The Argo Rollout an Argo controller series (`rollout_info_*`) is about.
fn rollout_of(s: &RawSeries) -> Option<WorkloadKey> {
    if s.label(label::NAME) != metric::ROLLOUT_REPLICAS || s.label("name").is_empty() {
        return None;
    }
    Some(WorkloadKey {
        namespace: s.label(label::NAMESPACE).to_string(),
        kind: "Rollout".to_string(),
        name: s.label("name").to_string(),
    })
}
