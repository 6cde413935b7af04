//! CronJobs (`batch/v1`): converted to a workload of kind `CronJob` from
//! `spec.jobTemplate.spec.template`, and changed by server-side apply on that template.
//! A change takes effect at the next run: the CronJob controller copies the job template
//! into each Job it creates, and a running Job keeps the pods it has. So a CronJob has no
//! rollout to follow (`UpdateStrategy::NextRun`, its rollout done at once) and no pod to
//! disrupt.

use k8s_openapi::api::batch::v1::CronJob;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde_json::{json, Value};

use super::convert;
use crate::cluster::{RolloutStatus, UpdateStrategy, Workload, WorkloadKind};

/// A CronJob as a workload; `None` without a job template.
pub fn workload(c: &CronJob) -> Option<Workload> {
    let job = c.spec.as_ref()?.job_template.spec.as_ref()?;
    // The pods of a run carry the Job's own selector, made by the API server: a CronJob
    // selects nothing itself (its pods are found through its Jobs).
    let mut w = convert::workload_base(
        WorkloadKind::CronJob,
        &c.metadata,
        &LabelSelector::default(),
        &job.template,
    );
    // The pods of one run: what a run asks the scheduler and the quota for.
    w.replicas = job.parallelism.unwrap_or(1).max(1);
    w.ready_replicas = w.replicas;
    w.strategy = UpdateStrategy::NextRun;
    // Nothing rolls out: the template is what the next run uses once it is written.
    w.observed_generation = Some(w.generation);
    w.rollout = RolloutStatus {
        updated: w.replicas,
        total: w.replicas,
        available: w.replicas,
        deadline_exceeded: None,
    };
    Some(w)
}

/// The server-side apply body of `pod_spec` as a CronJob's job template's pod spec.
pub fn apply_body(namespace: &str, name: &str, pod_spec: Value) -> Value {
    json!({
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": { "name": name, "namespace": namespace },
        "spec": { "jobTemplate": { "spec": { "template": { "spec": pod_spec } } } },
    })
}
