//! What the in-process cluster holds pods to beyond its kubelet: ResourceQuotas (their
//! hard amounts; `used` counted from the pods, as the quota controller counts them) and,
//! for the demo, workloads whose pods start only with enough CPU (a readiness probe
//! that times out below a CPU limit), which the Deployment controller's progress
//! deadline then gives up on (`ProgressDeadlineExceeded`).

use std::collections::BTreeMap;

use super::{SimCluster, State};
use crate::cluster::{
    NamespaceAdmission, PodPhase, QuotaAmounts, ResourceQuota, Resources, WorkloadKey,
};

/// The Deployment controller's default `progressDeadlineSeconds`, in ms.
pub const PROGRESS_DEADLINE_MS: i64 = 600_000;

/// Pods of a workload become Ready only with every container's CPU limit at least
/// `ready_from_cpu_limit` millicores; its rollouts give up after `progress_deadline_ms`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Startup {
    pub ready_from_cpu_limit: u64,
    pub progress_deadline_ms: i64,
}

impl SimCluster {
    /// Creates a ResourceQuota limiting `hard` in `namespace`.
    pub fn create_quota(&self, namespace: &str, name: &str, hard: QuotaAmounts) {
        let mut w = self.world();
        w.quotas.push(ResourceQuota {
            namespace: namespace.into(),
            name: name.into(),
            hard,
            used: None,
            scopes: Vec::new(),
        });
    }

    /// Gives `key`'s pods a startup that needs CPU (see [`Startup`]).
    pub fn set_startup(&self, key: &WorkloadKey, startup: Startup) {
        self.world().startups.insert(key.clone(), startup);
    }
}

impl State {
    /// True when a pod of `key` with `containers`' values becomes Ready.
    pub(super) fn starts(&self, key: &WorkloadKey, containers: &[Resources]) -> bool {
        self.startups.get(key).is_none_or(|s| {
            containers
                .iter()
                .all(|r| r.cpu_limit.is_some_and(|l| l >= s.ready_from_cpu_limit))
        })
    }

    /// The quotas of the namespaces `inside` says, each with what its namespace's pods
    /// use now (pods not finished and not being deleted).
    pub(super) fn admission(
        &self,
        inside: impl Fn(&str) -> bool,
    ) -> BTreeMap<String, NamespaceAdmission> {
        let mut out: BTreeMap<String, NamespaceAdmission> = BTreeMap::new();
        for q in self.quotas.iter().filter(|q| inside(&q.namespace)) {
            let used = self
                .pods
                .values()
                .map(|p| &p.pod)
                .filter(|p| {
                    p.pod.namespace == q.namespace
                        && !p.deleting
                        && !matches!(p.phase, PodPhase::Succeeded | PodPhase::Failed)
                })
                .map(|p| QuotaAmounts::of_pod(p.containers.iter().map(|c| (c.role, &c.resources))))
                .fold(QuotaAmounts::default(), QuotaAmounts::plus);
            let mut q = q.clone();
            q.used = Some(used);
            out.entry(q.namespace.clone()).or_default().quotas.push(q);
        }
        out
    }
}
