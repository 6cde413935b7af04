//! Who a pod belongs to: its controller, or through the ReplicaSet (the Job) that runs
//! it, the Deployment or Argo Rollout (the CronJob) that owns that.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::convert::{controller, controller_ref};
use crate::cluster::model::{Pod, WorkloadKind};

/// (`"ReplicaSet"` or `"Job"`, name) → the workload that controls it (a Deployment or
/// an Argo Rollout; a CronJob), in one namespace.
pub type PodOwners = BTreeMap<(&'static str, String), (WorkloadKind, String)>;

/// One entry of [`PodOwners`].
pub type OwnerEntry = ((&'static str, String), (WorkloadKind, String));

/// The controller of a ReplicaSet when it is a Deployment or an Argo Rollout, for
/// resolving pod owners: (("ReplicaSet", its name), (kind, name)).
pub fn replicaset_owner(rs: &ReplicaSet) -> Option<OwnerEntry> {
    let (kind, name) = controller(&rs.metadata)?;
    let kind = match kind.as_str() {
        "Deployment" => WorkloadKind::Deployment,
        "Rollout" => WorkloadKind::Rollout,
        _ => return None,
    };
    let rs_name = rs.metadata.name.clone().unwrap_or_default();
    Some((("ReplicaSet", rs_name), (kind, name)))
}

/// The CronJob that made a Job (one of its runs): (("Job", its name), (CronJob, name)).
pub fn job_owner(job: &Job) -> Option<OwnerEntry> {
    let (kind, name) = controller(&job.metadata)?;
    (kind == "CronJob").then(|| {
        let job_name = job.metadata.name.clone().unwrap_or_default();
        (("Job", job_name), (WorkloadKind::CronJob, name))
    })
}

/// The workload a pod belongs to, as kind and name in its namespace: its controller, or
/// for a pod of a ReplicaSet (a Job) the Deployment or Rollout (the CronJob) that owns
/// it (`rs_owners`: the pod itself does not say).
pub(super) fn pod_owner<'a>(
    meta: &'a ObjectMeta,
    rs_owners: &'a PodOwners,
) -> Option<(WorkloadKind, &'a str)> {
    let o = controller_ref(meta)?;
    match o.kind.as_str() {
        kind @ ("ReplicaSet" | "Job") => rs_owners
            .get(&(kind, o.name.clone()))
            .map(|(k, n)| (*k, n.as_str())),
        // A Rollout is reached through its ReplicaSets only, a CronJob through its Jobs.
        "Rollout" | "CronJob" => None,
        other => WorkloadKind::parse(other).map(|k| (k, o.name.as_str())),
    }
}

/// Whether `cached`, converted from an earlier read of `p` at the same resource version,
/// still names the owner `p` resolves to through `rs_owners` now.
pub fn same_pod_owner(p: &core::Pod, cached: &Pod, rs_owners: &PodOwners) -> bool {
    let was = cached.owner.as_ref().map(|k| (k.kind, k.name.as_str()));
    pod_owner(&p.metadata, rs_owners) == was
}
