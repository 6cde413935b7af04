//! One pass's view of a cluster ([`Snapshot`]) and the indexes a pass builds over it once
//! (each workload's pods, what each node's pods request), so that asking per workload
//! does not scan every pod.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::model::*;

/// What the agent reads in one pass: the namespaces in scope and the nodes. Workloads
/// and pods are shared with the view that made the snapshot, so that a pass over a
/// steady cluster copies pointers, not every object (a deep copy each pass was most of
/// a pass's time at 5,000 workloads).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    pub workloads: Vec<Arc<Workload>>,
    pub pods: Vec<Arc<Pod>>,
    pub nodes: Vec<Node>,
    pub hpas: Vec<Hpa>,
    pub pdbs: Vec<Pdb>,
    /// The Deployments' ReplicaSets (old ones included: the controller keeps a history).
    #[serde(default)]
    pub replica_sets: Vec<ReplicaSet>,
    /// Each namespace's ResourceQuotas and LimitRanges (namespaces with neither are
    /// absent).
    #[serde(default)]
    pub admission: BTreeMap<String, NamespaceAdmission>,
    /// The cluster's RightsizingPolicy objects (none when the agent may not read them).
    #[serde(default)]
    pub policies: Vec<super::PolicyObject>,
    /// The VerticalPodAutoscalers in scope (none when the cluster has no VPA CRD or the
    /// agent may not read them).
    #[serde(default)]
    pub vpas: Vec<super::Vpa>,
    /// Each owner's pods (indexes into `pods`), built by the first [`Snapshot::pods_of`]:
    /// a pass asks for every workload's pods several times, and scanning all pods each
    /// time is quadratic in the cluster's size.
    #[serde(skip)]
    pub owners: PodsByOwner,
    /// What the pods on each node request, built by the first [`Snapshot::requests_by_node`].
    #[serde(skip)]
    pub on_nodes: RequestsByNode,
    /// Each workload's position in `workloads`, built by the first [`Snapshot::workload`].
    #[serde(skip)]
    pub by_key: WorkloadsByKey,
}

/// The index behind [`Snapshot::workload`]: positions in `workloads` by a hash of the
/// key (answers are checked against the key itself), for the `workloads` it was built
/// over. A cache like [`PodsByOwner`].
#[derive(Debug, Clone, Default)]
pub struct WorkloadsByKey(std::sync::OnceLock<(usize, HashMap<u64, Vec<usize>>)>);

impl PartialEq for WorkloadsByKey {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for WorkloadsByKey {}

/// The index behind [`Snapshot::requests_by_node`]: the summed effective requests
/// (millicores, bytes) of the pods bound to each node and not finished, for the `pods`
/// it was built over. A cache like [`PodsByOwner`].
#[derive(Debug, Clone, Default)]
pub struct RequestsByNode(std::sync::OnceLock<(usize, NodeRequests)>);

/// Millicores and bytes requested on each node, by node name.
pub type NodeRequests = HashMap<String, (u64, u64)>;

/// What the pods bound to a node request (millicores, bytes), asked only when a check
/// needs it: a snapshot builds its index on the first question, so a pass that asks
/// none builds none.
pub trait RequestedOn: std::fmt::Debug + Sync {
    fn requested_on(&self, node: &str) -> (u64, u64);
}

impl RequestedOn for NodeRequests {
    fn requested_on(&self, node: &str) -> (u64, u64) {
        self.get(node).copied().unwrap_or_default()
    }
}

impl RequestedOn for Snapshot {
    fn requested_on(&self, node: &str) -> (u64, u64) {
        self.requests_by_node().requested_on(node)
    }
}

impl PartialEq for RequestsByNode {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for RequestsByNode {}

/// The summed effective requests of `pods` per node they are bound to, finished pods
/// (`Succeeded`, `Failed`) left out as the scheduler leaves them out.
fn requests_by_node<'a>(pods: impl Iterator<Item = &'a Pod>) -> HashMap<String, (u64, u64)> {
    let mut out: HashMap<String, (u64, u64)> = HashMap::new();
    for p in pods {
        let Some(node) = &p.node else { continue };
        if matches!(p.phase, PodPhase::Succeeded | PodPhase::Failed) {
            continue;
        }
        let (cpu, memory) = p.requests();
        let e = out.entry(node.clone()).or_default();
        e.0 += cpu;
        e.1 += memory;
    }
    out
}

/// The index behind [`Snapshot::pods_of`], for the `pods` it was built over: pod
/// positions by a hash of their owner, so that building it copies no key (answers are
/// checked against the owner itself, so a collision costs a comparison, never a wrong
/// pod). A cache: two snapshots are equal whether or not either built it.
#[derive(Debug, Clone, Default)]
pub struct PodsByOwner(std::sync::OnceLock<(usize, HashMap<u64, Vec<usize>>)>);

impl PartialEq for PodsByOwner {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for PodsByOwner {}

/// The hash [`PodsByOwner`] files a pod under (fixed keys: only this process reads it).
fn owner_hash(key: &WorkloadKey) -> u64 {
    use std::hash::BuildHasher;
    std::hash::BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default()
        .hash_one(key)
}

impl Snapshot {
    /// The workload named `key`, if the snapshot has it (the health watches and the
    /// changes in flight ask per workload; a scan each time would be quadratic).
    pub fn workload(&self, key: &WorkloadKey) -> Option<&Arc<Workload>> {
        let (built_over, index) = self.by_key.0.get_or_init(|| {
            let mut index: HashMap<u64, Vec<usize>> = HashMap::new();
            for (i, w) in self.workloads.iter().enumerate() {
                index.entry(owner_hash(&w.key)).or_default().push(i);
            }
            (self.workloads.len(), index)
        });
        if *built_over != self.workloads.len() {
            // Workloads pushed after the index was built: scan, never wrongly.
            return self.workloads.iter().find(|w| &w.key == key);
        }
        index
            .get(&owner_hash(key))?
            .iter()
            .map(|&i| &self.workloads[i])
            .find(|w| &w.key == key)
    }

    /// What the pods on each node request (millicores, bytes), by node name.
    pub fn requests_by_node(&self) -> Cow<'_, HashMap<String, (u64, u64)>> {
        let (built_over, index) = self.on_nodes.0.get_or_init(|| {
            (
                self.pods.len(),
                requests_by_node(self.pods.iter().map(|p| &**p)),
            )
        });
        if *built_over == self.pods.len() {
            return Cow::Borrowed(index);
        }
        // Pods pushed after the index was built: count afresh, never wrongly.
        Cow::Owned(requests_by_node(self.pods.iter().map(|p| &**p)))
    }

    /// `namespace`'s quotas and limit ranges.
    pub fn admission_of(&self, namespace: &str) -> &NamespaceAdmission {
        self.admission
            .get(namespace)
            .unwrap_or(NamespaceAdmission::NONE)
    }

    /// The pods `key` owns, in `pods` order.
    pub fn pods_of<'a>(&'a self, key: &'a WorkloadKey) -> impl Iterator<Item = &'a Pod> + 'a {
        let (built_over, index) = self.owners.0.get_or_init(|| {
            let mut index: HashMap<u64, Vec<usize>> = HashMap::new();
            for (i, p) in self.pods.iter().enumerate() {
                if let Some(owner) = &p.owner {
                    index.entry(owner_hash(owner)).or_default().push(i);
                }
            }
            (self.pods.len(), index)
        });
        // Pods pushed after the index was built: answer by scanning, never wrongly.
        let indexed = (*built_over == self.pods.len()).then(|| index.get(&owner_hash(key)));
        let (hits, scan) = match indexed {
            Some(hits) => (hits.map(Vec::as_slice).unwrap_or_default(), None),
            None => (&[][..], Some(self.pods.iter())),
        };
        hits.iter()
            .map(|&i| &self.pods[i])
            .chain(scan.into_iter().flatten())
            .map(|p| &**p)
            .filter(move |p| p.owner.as_ref() == Some(key))
    }
}
