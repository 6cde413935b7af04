//! Carrying out a change, one step per call, against the cluster: move the HPA's target
//! first when the change is coordinated with one; resize the pods in place and read the
//! kubelet's verdict; apply the template's resources as field manager `kerf` (forced:
//! kerf takes exactly those fields); evict the outdated pods of an `OnDelete`
//! StatefulSet, one at a time. Each call does what is due now and says
//! where the change stands; the caller persists the operation between calls, so a
//! change interrupted by a restart resumes where it was.

use std::collections::BTreeMap;

use super::decide::inplace::{changes_qos, live, to_resize, verdict, Verdict};
use super::decide::Finding;
use super::state::{HpaChange, Operation, Step};
use crate::cluster::{
    ApplyMode, Cluster, ClusterError, ContainerResources, ContainerRole, Resources, Snapshot,
    UpdateStrategy, WorkloadKey, WorkloadKind,
};
use crate::policy::Strategy;
use crate::wire::Reason;

/// Transient API failures tolerated per step before the change is reported `failed`.
const MAX_ATTEMPTS: u32 = 5;

/// Where a change stands after one step.
#[derive(Debug, Clone, PartialEq)]
pub enum Progress {
    /// Not there yet; call again.
    Pending,
    /// The change is live: report `applied`. The operation stays when pods are still
    /// to be evicted (`Step::Evicting`).
    Applied,
    /// The evictions are done.
    Done,
    /// Continue as a rollout, reporting `fallback` with this reason.
    Fallback {
        reason: Reason,
        message: String,
        details: BTreeMap<String, String>,
    },
    /// The change failed: report `failed`.
    Failed { reason: Reason, message: String },
    /// Held by something that may pass (a PodDisruptionBudget): report it on change.
    Held(Finding),
}

fn transient(e: &ClusterError) -> bool {
    match e {
        ClusterError::Transport(_) | ClusterError::Kubelet { .. } => true,
        ClusterError::Api(s) => s.code >= 500 || s.code == 429 || s.code == 409,
        ClusterError::Unexpected { .. } => false,
    }
}

/// A transient failure retried later, or the change failed with `reason`.
fn retry_or_fail(op: &mut Operation, e: ClusterError, reason: Reason) -> Progress {
    op.attempts += 1;
    if transient(&e) && op.attempts < MAX_ATTEMPTS {
        tracing::warn!(error = %e, attempt = op.attempts, "API call failed; retrying");
        return Progress::Pending;
    }
    Progress::Failed {
        reason,
        message: e.to_string(),
    }
}

/// `reason`, or `RollbackError` when `op` is a rollback.
fn failed_as(op: &Operation, reason: Reason) -> Reason {
    match op.rollback {
        Some(_) => Reason::RollbackError,
        None => reason,
    }
}

fn details(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Advances `op` on `key` by one step at `now_ms`.
pub async fn advance<C: Cluster>(
    cluster: &C,
    snap: &Snapshot,
    key: &WorkloadKey,
    op: &mut Operation,
    now_ms: i64,
) -> Progress {
    if op.retry_at_ms.is_some_and(|t| now_ms < t) {
        return Progress::Pending;
    }
    // A rollback of a workload that is gone has nothing left to restore.
    if op.rollback.is_some() && !snap.workloads.iter().any(|w| &w.key == key) {
        return Progress::Done;
    }
    if let Some(h) = op.hpa.clone().filter(|_| !op.hpa_done) {
        if let Err(e) = set_hpa(cluster, &h, false).await {
            let reason = match op.rollback {
                Some(_) => Reason::RollbackError,
                None => Reason::ApplyError,
            };
            return retry_or_fail(op, e, reason);
        }
        op.hpa_done = true;
    }
    match op.step.clone() {
        Step::InPlace { .. } => in_place(cluster, snap, key, op, now_ms).await,
        Step::Rollout => rollout(cluster, key, op).await,
        Step::Evicting { generation, .. } => evict(cluster, snap, key, op, generation).await,
    }
}

/// Gives `h`'s HPA its new target (`back`: its old one again): on the HPA, or on the
/// trigger of the KEDA ScaledObject that makes it.
pub async fn set_hpa<C: Cluster>(
    cluster: &C,
    h: &HpaChange,
    back: bool,
) -> Result<(), ClusterError> {
    match &h.scaled_object {
        Some(so) => {
            let targets = if back {
                (h.target_to, h.target_from)
            } else {
                (h.target_from, h.target_to)
            };
            cluster
                .set_scaled_object_target(&h.namespace, so, &h.resource, targets)
                .await
        }
        None => {
            let metrics = if back { &h.from } else { &h.to };
            cluster
                .apply_hpa_metrics(&h.namespace, &h.name, metrics)
                .await
                .map(|_| ())
        }
    }
}

/// The values `op` sets, by container.
pub fn targets(op: &Operation) -> BTreeMap<String, Resources> {
    op.containers
        .iter()
        .map(|c| (c.name.clone(), c.to))
        .collect()
}

async fn in_place<C: Cluster>(
    cluster: &C,
    snap: &Snapshot,
    key: &WorkloadKey,
    op: &mut Operation,
    now_ms: i64,
) -> Progress {
    let targets = targets(op);
    let pods: Vec<_> = snap.pods_of(key).collect();
    // Pods that should run but do not yet: wait for them (a change with no pod to
    // resize is not live). A workload scaled to zero keeps the values for its next pods.
    let desired = snap.workload(key).map_or(0, |w| w.replicas);
    if desired > 0 && !pods.iter().any(|p| live(p)) {
        return Progress::Pending;
    }
    // An init container has run by the time a resize could reach it: only new pods
    // take its new values (the API server refuses to resize one in place).
    if let Some(c) = op.containers.iter().find(|c| c.role == ContainerRole::Init) {
        return Progress::Fallback {
            reason: Reason::ResizeInfeasible,
            message: format!(
                "container {} is an init container, which cannot be resized in place; only new pods take its values",
                c.name
            ),
            details: details(&[("resizeStatus", "Infeasible"), ("container", &c.name)]),
        };
    }
    if let Some(p) = pods.iter().find(|p| live(p) && changes_qos(p, &targets)) {
        return Progress::Fallback {
            reason: Reason::ResizeInfeasible,
            message: format!(
                "the new values would change the QoS class of pod {}, which a resize cannot do",
                p.pod.name
            ),
            details: details(&[("resizeStatus", "Infeasible"), ("pod", &p.pod.name)]),
        };
    }
    for (pod, changes) in to_resize(&pods, &targets) {
        match cluster.resize_pod(&pod, &changes).await {
            Ok(_) => {}
            // Gone meanwhile: its replacement is judged on the next step.
            Err(e) if e.is_not_found() => {}
            // Since v1.35 the API server refuses what the node can never fit.
            Err(e) if e.is_node_capacity() => {
                return Progress::Fallback {
                    reason: Reason::ResizeInfeasible,
                    message: e.to_string(),
                    details: details(&[("resizeStatus", "Infeasible"), ("pod", &pod.name)]),
                }
            }
            Err(e) => {
                let reason = failed_as(op, Reason::ResizeError);
                return retry_or_fail(op, e, reason);
            }
        }
    }
    match verdict(&pods, &targets) {
        Verdict::Accepted => Progress::Applied,
        Verdict::Infeasible { pod, message } => Progress::Fallback {
            reason: Reason::ResizeInfeasible,
            message: format!("the kubelet cannot resize pod {pod}: {message}"),
            details: details(&[("resizeStatus", "Infeasible"), ("pod", &pod)]),
        },
        Verdict::Error { pod, message } => Progress::Failed {
            reason: failed_as(op, Reason::ResizeError),
            message: format!("resizing pod {pod} failed: {message}"),
        },
        Verdict::Waiting { deferred: true } => {
            let since = match &mut op.step {
                Step::InPlace { deferred_since_ms } => *deferred_since_ms.get_or_insert(now_ms),
                _ => now_ms,
            };
            if now_ms - since >= op.fallback_after_ms {
                let waited = super::decide::human((now_ms - since).max(0) as u64 / 1000);
                Progress::Fallback {
                    reason: Reason::ResizeDeferredTimeout,
                    message: format!(
                        "the resize stayed Deferred for {waited}, longer than apply.fallbackAfter"
                    ),
                    details: details(&[("resizeStatus", "Deferred")]),
                }
            } else {
                Progress::Pending
            }
        }
        Verdict::Waiting { deferred: false } => Progress::Pending,
    }
}

async fn rollout<C: Cluster>(cluster: &C, key: &WorkloadKey, op: &mut Operation) -> Progress {
    let changes: Vec<ContainerResources> = op
        .containers
        .iter()
        .map(|c| ContainerResources::set(&c.name, c.to).in_role(c.role))
        .collect();
    let mode = ApplyMode {
        force: true,
        dry_run: false,
    };
    match cluster.apply_template_resources(key, &changes, mode).await {
        Ok(w) => {
            op.strategy = Strategy::Rollout;
            op.attempts = 0;
            op.template_generation = Some(w.generation);
            if key.kind == WorkloadKind::StatefulSet && w.strategy == UpdateStrategy::OnDelete {
                let announced = op.rollback.is_some();
                op.step = Step::Evicting {
                    generation: w.generation,
                    announced,
                };
                // The pods change only when kerf evicts them: applied at the first.
                if !announced {
                    return Progress::Pending;
                }
            }
            Progress::Applied
        }
        Err(e) => {
            let reason = failed_as(op, Reason::ApplyError);
            retry_or_fail(op, e, reason)
        }
    }
}

async fn evict<C: Cluster>(
    cluster: &C,
    snap: &Snapshot,
    key: &WorkloadKey,
    op: &mut Operation,
    generation: i64,
) -> Progress {
    let Some(w) = snap.workload(key) else {
        return Progress::Done;
    };
    // The controller has not seen the new template yet: its update revision is stale.
    if w.observed_generation.is_none_or(|g| g < generation) {
        return Progress::Pending;
    }
    let pods: Vec<_> = snap.pods_of(key).collect();
    // One at a time: wait for the last replacement to be Ready.
    if pods.iter().any(|p| p.deleting || !p.ready) || (pods.len() as i32) < w.replicas {
        return Progress::Pending;
    }
    let Some(outdated) = pods.iter().find(|p| p.revision != w.update_revision) else {
        // Every pod already runs the new template (replaced by something else).
        return announce(op).unwrap_or(Progress::Done);
    };
    match cluster.evict(&outdated.pod).await {
        Ok(()) => announce(op).unwrap_or(Progress::Pending),
        Err(e) if e.is_not_found() => Progress::Pending,
        Err(e) if e.is_disruption_budget() => Progress::Held(
            Finding::new(
                Reason::PodDisruptionBudget,
                format!(
                    "a PodDisruptionBudget refuses the eviction of outdated pod {}; retrying",
                    outdated.pod.name
                ),
            )
            .detail("pod", &outdated.pod.name),
        ),
        Err(e) => retry_or_fail(op, e, Reason::ApplyError),
    }
}

/// `Applied` the first time the pods of an evicting change start to move (the rollout
/// has begun); `None` once that was reported.
fn announce(op: &mut Operation) -> Option<Progress> {
    match &mut op.step {
        Step::Evicting { announced, .. } if !*announced => {
            *announced = true;
            Some(Progress::Applied)
        }
        _ => None,
    }
}
