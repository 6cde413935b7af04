//! Where an in-place change stands, read from the workload's pods (pure): which pods
//! still need their `resize` patch, and the kubelet's verdict on the ones patched.
//! `Infeasible` anywhere → fall back to a rollout; `Deferred` for longer than
//! `apply.fallbackAfter` → fall back; an actuation error → `failed ResizeError`;
//! every pod running with the new values → applied.

use std::collections::BTreeMap;

use crate::cluster::{ContainerResources, Pod, PodPhase, PodRef, QosClass, ResizeState, Resources};

/// The kubelet's answer across the workload's pods.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Every running pod runs with the target values.
    Accepted,
    /// Waiting for the kubelet; `deferred` when some pod is `Deferred`.
    Waiting { deferred: bool },
    /// A pod's resize is `Infeasible`.
    Infeasible { pod: String, message: String },
    /// A pod's resize failed while being actuated.
    Error { pod: String, message: String },
}

/// A pod the change applies to: running on a node and not being deleted.
pub fn live(p: &Pod) -> bool {
    p.phase == PodPhase::Running && p.node.is_some() && !p.deleting
}

fn container_matches(p: &Pod, name: &str, target: &Resources, spec: bool) -> bool {
    if spec {
        p.container(name).is_none_or(|c| c.resources == *target)
    } else {
        p.status(name)
            .and_then(|s| s.resources)
            .is_none_or(|r| r == *target)
    }
}

/// Pods whose spec does not carry `targets` yet, with the patch each needs.
pub fn to_resize(
    pods: &[&Pod],
    targets: &BTreeMap<String, Resources>,
) -> Vec<(PodRef, Vec<ContainerResources>)> {
    pods.iter()
        .filter(|p| live(p))
        .filter_map(|p| {
            let changes: Vec<ContainerResources> = targets
                .iter()
                .filter(|(name, t)| !container_matches(p, name, t, true))
                .map(|(name, t)| {
                    let role = p.container(name).map(|c| c.role).unwrap_or_default();
                    ContainerResources::set(name, *t).in_role(role)
                })
                .collect();
            (!changes.is_empty()).then(|| (p.pod.clone(), changes))
        })
        .collect()
}

/// The kubelet's verdict over the live pods (pods not yet patched count as waiting).
pub fn verdict(pods: &[&Pod], targets: &BTreeMap<String, Resources>) -> Verdict {
    let mut waiting = false;
    let mut deferred = false;
    for p in pods.iter().filter(|p| live(p)) {
        let done = targets
            .iter()
            .all(|(name, t)| container_matches(p, name, t, false));
        match &p.resize {
            ResizeState::Infeasible { message } => {
                return Verdict::Infeasible {
                    pod: p.pod.name.clone(),
                    message: message.clone(),
                }
            }
            ResizeState::InProgress {
                error: Some(message),
            } => {
                return Verdict::Error {
                    pod: p.pod.name.clone(),
                    message: message.clone(),
                }
            }
            ResizeState::Deferred { .. } => {
                deferred = true;
                waiting = true;
            }
            _ if !done => waiting = true,
            _ => {}
        }
    }
    if waiting {
        Verdict::Waiting { deferred }
    } else {
        Verdict::Accepted
    }
}

/// True when giving `pod` the `targets` would change its QoS class, which a resize may
/// not do (the API server refuses it): such a change can only roll out.
pub fn changes_qos(pod: &Pod, targets: &BTreeMap<String, Resources>) -> bool {
    let before: Vec<Resources> = pod.containers.iter().map(|c| c.resources).collect();
    let after: Vec<Resources> = pod
        .containers
        .iter()
        .map(|c| targets.get(&c.name).copied().unwrap_or(c.resources))
        .collect();
    QosClass::of(&before) != QosClass::of(&after)
}
