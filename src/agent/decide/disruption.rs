//! Single-replica safety (pure): a workload that cannot lose a Ready pod — a Deployment
//! or StatefulSet with `replicas: 1`, or one whose PodDisruptionBudget allows no
//! disruption now — is not changed in a way that leaves it without one:
//! - an in-place resize that restarts a container (`resizePolicy: RestartContainer` on
//!   a resource that changes);
//! - a rollout without surge: only a RollingUpdate with `maxSurge` ≥ 1 and
//!   `maxUnavailable` 0 starts the new pod before the old one goes (`Recreate`,
//!   StatefulSets and `OnDelete` never do).
//!
//! The annotation `kerf.getkerf.dev/allow-disruption: "true"` on the workload opts in.

use super::values::{fields_of, Proposal};
use super::Finding;
use crate::cluster::{Pdb, Pod, RestartPolicy, Snapshot, UpdateStrategy, Workload, WorkloadKind};
use crate::policy::Strategy;
use crate::wire::{EventResource, Reason};

/// The annotation that lets kerf disrupt a workload that has no Ready pod to spare.
pub const ALLOW_DISRUPTION: &str = "kerf.getkerf.dev/allow-disruption";

/// The PodDisruptionBudgets of `live`'s namespace that select its pods (or, with no
/// pod yet, whose selector its own selector satisfies).
pub fn pdbs_of<'a>(snap: &'a Snapshot, live: &Workload, pods: &[&Pod]) -> Vec<&'a Pdb> {
    let selects = |sel: &std::collections::BTreeMap<String, String>,
                   labels: &std::collections::BTreeMap<String, String>| {
        !sel.is_empty() && sel.iter().all(|(k, v)| labels.get(k) == Some(v))
    };
    snap.pdbs
        .iter()
        .filter(|p| p.namespace == live.key.namespace)
        .filter(|p| {
            if pods.is_empty() {
                selects(&p.selector, &live.selector)
            } else {
                pods.iter().any(|pod| selects(&p.selector, &pod.labels))
            }
        })
        .collect()
}

/// `"25%"` or `"1"` of `replicas`, rounded up (surge) or down (unavailable), as the
/// Deployment controller resolves them.
fn resolve(v: Option<&str>, default: &str, replicas: i32, up: bool) -> i64 {
    let v = v.unwrap_or(default).trim();
    match v.strip_suffix('%') {
        Some(pct) => {
            let share = pct.trim().parse::<f64>().unwrap_or(0.0) / 100.0 * f64::from(replicas);
            if up {
                share.ceil() as i64
            } else {
                share.floor() as i64
            }
        }
        None => v.parse().unwrap_or(0),
    }
}

/// A rolling update's surge and unavailable pods, resolved against `w`'s replicas
/// (`None`: `w` does not roll its pods that way).
fn rolling(w: &Workload) -> Option<(i64, i64)> {
    let defaults = match w.key.kind {
        // Argo's canary defaults are a Deployment's.
        WorkloadKind::Deployment | WorkloadKind::Rollout => ("25%", "25%"),
        WorkloadKind::DaemonSet => ("0", "1"),
        WorkloadKind::StatefulSet | WorkloadKind::CronJob => return None,
    };
    match &w.strategy {
        UpdateStrategy::RollingUpdate {
            max_surge,
            max_unavailable,
        } => {
            let replicas = w.replicas.max(1);
            let surge = resolve(max_surge.as_deref(), defaults.0, replicas, true);
            let unavailable = resolve(max_unavailable.as_deref(), defaults.1, replicas, false);
            Some((surge, unavailable))
        }
        UpdateStrategy::Recreate | UpdateStrategy::OnDelete | UpdateStrategy::NextRun => None,
    }
}

/// True when a rollout of `w` brings up the new pod before it takes an old one down.
pub fn rollout_surges(w: &Workload) -> bool {
    // The controller raises a zero surge with zero unavailable to one unavailable.
    rolling(w).is_some_and(|(surge, unavailable)| surge >= 1 && unavailable == 0)
}

/// How many pods a rollout of `w` may run above its replicas (`maxSurge`).
pub fn surge_pods(w: &Workload) -> u64 {
    rolling(w).map_or(0, |(surge, _)| surge.max(0) as u64)
}

/// Why `w` has no Ready pod to spare (`None` when it has, or opted in).
fn single(w: &Workload, pdbs: &[&Pdb]) -> Option<(String, Finding)> {
    // A CronJob's change reaches its next run: no pod is taken down.
    if w.strategy == UpdateStrategy::NextRun {
        return None;
    }
    if w.annotations.get(ALLOW_DISRUPTION).map(String::as_str) == Some("true") {
        return None;
    }
    let one = matches!(
        w.key.kind,
        WorkloadKind::Deployment | WorkloadKind::StatefulSet
    ) && w.replicas == 1;
    if one {
        let f = Finding::new(Reason::SingleReplicaUnsafe, String::new()).detail("replicas", "1");
        return Some(("it runs a single replica".into(), f));
    }
    let pdb = pdbs.iter().find(|p| p.disruptions_allowed == 0)?;
    let f = Finding::new(Reason::SingleReplicaUnsafe, String::new())
        .detail("replicas", w.replicas.to_string())
        .detail("podDisruptionBudget", &pdb.name);
    Some((
        format!(
            "its PodDisruptionBudget {} allows no disruption now",
            pdb.name
        ),
        f,
    ))
}

fn with_message(mut f: Finding, message: String) -> Finding {
    f.message = message;
    f
}

const OPT_IN: &str = "annotate it kerf.getkerf.dev/allow-disruption: \"true\" to allow it";

/// A rollout of `w` would leave it without a Ready pod.
pub fn unsafe_rollout(w: &Workload, pdbs: &[&Pdb]) -> Option<Finding> {
    let (why, f) = single(w, pdbs)?;
    if rollout_surges(w) {
        return None;
    }
    let how = match (&w.strategy, w.key.kind) {
        (_, WorkloadKind::StatefulSet) => {
            "a StatefulSet replaces its pod before starting the new one"
        }
        (UpdateStrategy::Recreate, _) => {
            "its Recreate strategy stops the pod before starting the new one"
        }
        _ => "its rollout has no surge (needs maxSurge ≥ 1 and maxUnavailable 0)",
    };
    Some(with_message(
        f.detail("cause", "rollout without surge"),
        format!("{why} and {how}; {OPT_IN}"),
    ))
}

/// The `SingleReplicaUnsafe` finding for a change of `resources` by `strategy`.
pub fn check(
    w: &Workload,
    pdbs: &[&Pdb],
    proposal: &Proposal,
    resources: &[EventResource],
    strategy: Strategy,
) -> Option<Finding> {
    if strategy != Strategy::InPlace {
        return unsafe_rollout(w, pdbs);
    }
    let (why, f) = single(w, pdbs)?;
    let restarts = proposal.containers.iter().find_map(|c| {
        let spec = w.containers.iter().find(|x| x.name == c.name)?;
        resources.iter().find_map(|r| {
            let policy = match r {
                EventResource::Cpu => spec.resize_policy.cpu,
                EventResource::Memory => spec.resize_policy.memory,
            };
            let moves = fields_of(*r)
                .iter()
                .any(|f| c.current.get(*f) != c.target.get(*f));
            (moves && policy == RestartPolicy::RestartContainer).then(|| (c.name.clone(), *r))
        })
    });
    let (container, r) = restarts?;
    let r = match r {
        EventResource::Cpu => "cpu",
        EventResource::Memory => "memory",
    };
    Some(with_message(
        f.detail("cause", "restart")
            .detail("container", &container),
        format!(
            "{why} and resizing {r} in place restarts container {container} (resizePolicy RestartContainer); {OPT_IN}"
        ),
    ))
}
