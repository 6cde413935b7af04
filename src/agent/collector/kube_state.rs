//! The agent's watches as kube-state-metrics exports them, so the hub reads what the
//! agent collects with the same datasource mapping as a Prometheus fed by
//! kube-state-metrics (docs/contracts/datasource.md, "Inventory" and "Per group"): the
//! same metric names, label names and values, each sample stamped with the time the
//! snapshot was taken. Pods: owner, creation, labels, requests and limits (CPU in
//! cores, memory in bytes, `unit` as KSM writes it; sidecars and init containers as
//! `kube_pod_init_container_resource_*`, with `kube_pod_init_container_info` whose
//! `restart_policy` is `Always` for a sidecar), restarts and the last termination
//! (reason, and `finishedAt`). Deployments, StatefulSets, DaemonSets: creation, desired
//! replicas, labels; CronJobs: creation, labels. ReplicaSets: owner and creation (a
//! Deployment release's start). Jobs a CronJob runs: owner.
//! HPAs: target, utilization targets, bounds.
//!
//! Labels are exported as `--metric-labels-allowlist=*=[*]` would: every Kubernetes
//! label, named as KSM names it (`label_` + the name with characters outside
//! `[a-zA-Z0-9_]` turned into `_` and camelCase into snake_case; names that collide get
//! `_conflictN`). They cost no series: a pod or workload is one series either way.

use std::collections::BTreeMap;

use super::series::point;
use crate::cluster::{
    ContainerRole, Hpa, OwnerRef, Pod, ReplicaSet, Snapshot, Workload, WorkloadKind,
};
use crate::wire::remote_write::TimeSeries;

/// What KSM writes for an owner it does not have.
const NONE: &str = "<none>";

/// Whole seconds of a Unix-ms time, as KSM exports creation and termination times.
fn seconds(ms: i64) -> f64 {
    ms.div_euclid(1000) as f64
}

/// Every kube-state-metrics series of `snap` at `at_ms`.
pub fn series(snap: &Snapshot, at_ms: i64) -> Vec<TimeSeries> {
    let mut out = Vec::new();
    for p in &snap.pods {
        pod(p, at_ms, &mut out);
    }
    for w in &snap.workloads {
        workload(w, at_ms, &mut out);
    }
    for rs in &snap.replica_sets {
        replica_set(rs, at_ms, &mut out);
    }
    job_owners(snap, at_ms, &mut out);
    for h in &snap.hpas {
        hpa(h, at_ms, &mut out);
    }
    out
}

/// `owner_kind`, `owner_name`, `owner_is_controller` of an object's controller.
fn owner(o: Option<&OwnerRef>) -> [(&'static str, String); 3] {
    match o {
        Some(o) => [
            ("owner_kind", o.kind.clone()),
            ("owner_name", o.name.clone()),
            ("owner_is_controller", "true".into()),
        ],
        None => [
            ("owner_kind", NONE.into()),
            ("owner_name", NONE.into()),
            ("owner_is_controller", NONE.into()),
        ],
    }
}

fn pod(p: &Pod, at: i64, out: &mut Vec<TimeSeries>) {
    let base = [
        ("namespace", p.pod.namespace.clone()),
        ("pod", p.pod.name.clone()),
        ("uid", p.uid.clone()),
    ];
    let with = |extra: &[(&str, String)]| -> Vec<(String, String)> {
        base.iter()
            .chain(extra)
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    };
    out.push(point(
        "kube_pod_owner",
        with(&owner(p.controller.as_ref())),
        1.0,
        at,
    ));
    if let Some(created) = p.created_ms {
        out.push(point("kube_pod_created", with(&[]), seconds(created), at));
    }
    let mut labels = with(&[]);
    labels.extend(label_names(&p.labels));
    out.push(point("kube_pod_labels", labels, 1.0, at));
    let node = p.node.clone().unwrap_or_default();
    for c in &p.containers {
        let r = &c.resources;
        // Sidecars and init containers as kube-state-metrics exports them: their own
        // series, and an info series whose `restart_policy` tells a sidecar.
        let (requests, limits) = if c.role.in_init_list() {
            let policy = match c.role {
                ContainerRole::Sidecar => "Always",
                _ => "",
            };
            let info = [
                ("container", c.name.clone()),
                ("restart_policy", policy.to_string()),
            ];
            out.push(point("kube_pod_init_container_info", with(&info), 1.0, at));
            (
                "kube_pod_init_container_resource_requests",
                "kube_pod_init_container_resource_limits",
            )
        } else {
            (
                "kube_pod_container_resource_requests",
                "kube_pod_container_resource_limits",
            )
        };
        let settings = [
            (requests, "cpu", r.cpu_request),
            (requests, "memory", r.memory_request),
            (limits, "cpu", r.cpu_limit),
            (limits, "memory", r.memory_limit),
        ];
        for (name, resource, value) in settings {
            let Some(v) = value else { continue };
            let (unit, value) = match resource {
                "cpu" => ("core", v as f64 / 1000.0),
                _ => ("byte", v as f64),
            };
            let labels = with(&[
                ("container", c.name.clone()),
                ("node", node.clone()),
                ("resource", resource.into()),
                ("unit", unit.into()),
            ]);
            out.push(point(name, labels, value, at));
        }
    }
    for s in &p.statuses {
        let container = [("container", s.name.clone())];
        out.push(point(
            "kube_pod_container_status_restarts_total",
            with(&container),
            f64::from(s.restart_count),
            at,
        ));
        let Some(t) = &s.last_termination else {
            continue;
        };
        let reason = [("container", s.name.clone()), ("reason", t.reason.clone())];
        out.push(point(
            "kube_pod_container_status_last_terminated_reason",
            with(&reason),
            1.0,
            at,
        ));
        if let Some(finished) = t.finished_at_ms {
            out.push(point(
                "kube_pod_container_status_last_terminated_timestamp",
                with(&container),
                seconds(finished),
                at,
            ));
        }
    }
}

fn workload(w: &Workload, at: i64, out: &mut Vec<TimeSeries>) {
    let (kind, replicas) = match w.key.kind {
        WorkloadKind::Deployment => ("deployment", Some("kube_deployment_spec_replicas")),
        WorkloadKind::StatefulSet => ("statefulset", Some("kube_statefulset_replicas")),
        WorkloadKind::DaemonSet => (
            "daemonset",
            Some("kube_daemonset_status_desired_number_scheduled"),
        ),
        // A CronJob wants no replicas: its runs are its Jobs (`kube_job_owner`).
        WorkloadKind::CronJob => ("cronjob", None),
        // kube-state-metrics has no Rollout series: its desired replicas as Argo's own
        // controller exports them; its ReplicaSets' owner says the rest.
        WorkloadKind::Rollout => {
            let labels = vec![
                ("namespace".to_string(), w.key.namespace.clone()),
                ("name".to_string(), w.key.name.clone()),
            ];
            let replicas = f64::from(w.replicas);
            out.push(point("rollout_info_replicas_desired", labels, replicas, at));
            return;
        }
    };
    let base = || {
        vec![
            ("namespace".to_string(), w.key.namespace.clone()),
            (kind.to_string(), w.key.name.clone()),
        ]
    };
    if let Some(created) = w.created_ms {
        let name = format!("kube_{kind}_created");
        out.push(point(&name, base(), seconds(created), at));
    }
    if let Some(replicas) = replicas {
        out.push(point(replicas, base(), f64::from(w.replicas), at));
    }
    let mut labels = base();
    labels.extend(label_names(&w.labels));
    out.push(point(&format!("kube_{kind}_labels"), labels, 1.0, at));
}

fn replica_set(rs: &ReplicaSet, at: i64, out: &mut Vec<TimeSeries>) {
    let base = [
        ("namespace", rs.namespace.clone()),
        ("replicaset", rs.name.clone()),
    ];
    let owner = owner(rs.controller.as_ref());
    out.push(point(
        "kube_replicaset_owner",
        base.iter().chain(&owner).cloned(),
        1.0,
        at,
    ));
    if let Some(created) = rs.created_ms {
        out.push(point(
            "kube_replicaset_created",
            base.iter().cloned(),
            seconds(created),
            at,
        ));
    }
}

/// `kube_job_owner` of each Job a pod runs for a CronJob (the agent watches Jobs only
/// for that: a Job's owner is what its pods' owner resolves to).
fn job_owners(snap: &Snapshot, at: i64, out: &mut Vec<TimeSeries>) {
    let mut jobs = std::collections::BTreeSet::new();
    for p in &snap.pods {
        let (Some(job), Some(owner)) = (&p.controller, &p.owner) else {
            continue;
        };
        if job.kind == "Job" && owner.kind == WorkloadKind::CronJob {
            jobs.insert((&owner.namespace, &job.name, &owner.name));
        }
    }
    for (namespace, job, cronjob) in jobs {
        let labels = [
            ("namespace", namespace.clone()),
            ("job_name", job.clone()),
            ("owner_kind", "CronJob".to_string()),
            ("owner_name", cronjob.clone()),
            ("owner_is_controller", "true".to_string()),
        ];
        out.push(point("kube_job_owner", labels, 1.0, at));
    }
}

fn hpa(h: &Hpa, at: i64, out: &mut Vec<TimeSeries>) {
    let base = [
        ("namespace", h.namespace.clone()),
        ("horizontalpodautoscaler", h.name.clone()),
    ];
    if let Some(target) = &h.target {
        let info = [
            ("scaletargetref_api_version", "apps/v1".to_string()),
            ("scaletargetref_kind", target.kind.as_str().to_string()),
            ("scaletargetref_name", target.name.clone()),
        ];
        out.push(point(
            "kube_horizontalpodautoscaler_info",
            base.iter().chain(&info).cloned(),
            1.0,
            at,
        ));
    }
    // Only utilization targets are in the model: the ones kerf coordinates with.
    for (resource, target) in h.metrics.iter().filter_map(|m| m.utilization()) {
        let metric = [
            ("metric_name", resource.to_string()),
            ("metric_target_type", "utilization".to_string()),
        ];
        out.push(point(
            "kube_horizontalpodautoscaler_spec_target_metric",
            base.iter().chain(&metric).cloned(),
            f64::from(target),
            at,
        ));
    }
    for (name, value) in [
        (
            "kube_horizontalpodautoscaler_spec_min_replicas",
            h.min_replicas,
        ),
        (
            "kube_horizontalpodautoscaler_spec_max_replicas",
            h.max_replicas,
        ),
    ] {
        out.push(point(name, base.iter().cloned(), f64::from(value), at));
    }
}

/// KSM's name for a Kubernetes label name (without the `label_` prefix).
fn ksm_name(name: &str) -> String {
    let sanitized: Vec<char> = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut out = String::with_capacity(sanitized.len() + 4);
    for (i, c) in sanitized.iter().enumerate() {
        let after_lower =
            i > 0 && (sanitized[i - 1].is_ascii_lowercase() || sanitized[i - 1].is_ascii_digit());
        if c.is_ascii_uppercase() && after_lower {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// Kubernetes labels as KSM's `label_*` labels, in the order of their names, colliding
/// names suffixed `_conflict1`, `_conflict2`, ... as KSM does.
pub fn label_names(labels: &BTreeMap<String, String>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::with_capacity(labels.len());
    // Name → (how many so far, where the first one is).
    let mut seen: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for (k, v) in labels {
        let name = format!("label_{}", ksm_name(k));
        let name = match seen.get_mut(&name) {
            Some((count, first)) => {
                if *count == 1 {
                    out[*first].0 = format!("{name}_conflict1");
                }
                *count += 1;
                format!("{name}_conflict{count}")
            }
            None => {
                seen.insert(name.clone(), (1, out.len()));
                name
            }
        };
        out.push((name, v.clone()));
    }
    out
}

#[cfg(test)]
#[path = "kube_state_tests.rs"]
mod tests;
