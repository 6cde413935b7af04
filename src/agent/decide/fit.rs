//! `NoFittingNode`, a workload guardrail read before a change that grows a pod's
//! requests: some ready node the scheduler may use must have room for one pod of the
//! new size (its allocatable minus what the pods bound to it request), else the new
//! pods would stay `Pending` and the change is not started. Pure, over [`Ctx`].
//!
//! - A rollout needs one node with that room; a pod it replaces before starting the new
//!   one (no surge) frees its requests on its node first.
//! - In place, a pod's own node also counts its current requests as room (the kubelet
//!   resizes it there); when no node has room the resize would be refused and its
//!   rollout fallback would find none either.
//! - A DaemonSet's pod has one node: every node running one must have room.
//!
//! What the requests on a node add up to is what the agent sees: a namespace-scoped
//! agent does not see other namespaces' pods, so it may find room that is not there
//! (the check then lets the change through, as before it existed). A node counts if it
//! is ready, not cordoned and carries the labels of the template's `nodeSelector`;
//! taints and affinities are not read.

use super::admission::containers_after;
use super::{Ctx, Finding};
use crate::cluster::quantity::{format_cpu, format_memory};
use crate::cluster::{pod_requests, ContainerRole, Node, Resources, WorkloadKind};
use crate::policy::Strategy;
use crate::wire::Reason;

/// Room on `node` (millicores, bytes) for a pod, counting `back` as freed.
fn room(c: &Ctx, node: &Node, back: (u64, u64)) -> (u64, u64) {
    let used = c.input.node_requests.requested_on(&node.name);
    (
        node.allocatable_cpu.saturating_sub(used.0) + back.0.min(used.0),
        node.allocatable_memory.saturating_sub(used.1) + back.1.min(used.1),
    )
}

fn fits(room: (u64, u64), pod: (u64, u64)) -> bool {
    room.0 >= pod.0 && room.1 >= pod.1
}

pub fn no_fitting_node(c: &Ctx) -> Option<Finding> {
    let changes = c.proposal.only(c.resources);
    // Only a pod that grows needs room; most changes shrink (decided before any copy).
    let grows = changes.containers.iter().any(|t| {
        let (from, to) = (
            t.current.effective_requests(),
            t.target.effective_requests(),
        );
        to.0 > from.0 || to.1 > from.1
    });
    if !grows {
        return None;
    }
    let (before, after) = containers_after(c, &changes);
    let pod =
        |all: &[(ContainerRole, Resources)]| pod_requests(all.iter().map(|(role, r)| (*role, r)));
    let (old, new) = (pod(&before), pod(&after));
    if new.0 <= old.0 && new.1 <= old.1 {
        return None;
    }
    let usable: Vec<&Node> = c
        .input
        .nodes
        .iter()
        .filter(|n| n.ready && !n.unschedulable)
        .filter(|n| {
            let selector = &c.input.live.node_selector;
            selector.iter().all(|(k, v)| n.labels.get(k) == Some(v))
        })
        .collect();
    if usable.is_empty() {
        return None; // nothing known to judge by
    }
    let own_on = |n: &Node| {
        c.input
            .pods
            .iter()
            .any(|p| p.node.as_deref() == Some(&n.name))
    };
    let refuse = |message: String| {
        Finding::new(Reason::NoFittingNode, message).detail(
            "podRequests",
            format!("{} CPU, {}", format_cpu(new.0), format_memory(new.1)),
        )
    };
    if c.input.live.key.kind == WorkloadKind::DaemonSet {
        let full = usable
            .iter()
            .filter(|n| own_on(n))
            .find(|n| !fits(room(c, n, old), new))?;
        let r = room(c, full, old);
        return Some(
            refuse(format!(
                "node {} has room for {} CPU and {} but its pod of the DaemonSet would request {} CPU and {}",
                full.name,
                format_cpu(r.0),
                format_memory(r.1),
                format_cpu(new.0),
                format_memory(new.1)
            ))
            .detail("node", &full.name),
        );
    }
    // In place, or a rollout that takes an old pod down before its new one starts,
    // frees the old pod's requests on its node.
    let replaces = match c.strategy {
        Strategy::InPlace => true,
        _ => super::disruption::surge_pods(c.input.live) == 0,
    };
    let back = |n: &Node| if replaces && own_on(n) { old } else { (0, 0) };
    if usable.iter().any(|n| fits(room(c, n, back(n)), new)) {
        return None;
    }
    let most_cpu = usable.iter().max_by_key(|n| room(c, n, back(n)).0)?;
    let most_memory = usable.iter().max_by_key(|n| room(c, n, back(n)).1)?;
    Some(
        refuse(format!(
            "no ready node it may use has room for a pod requesting {} CPU and {}: the most room on one node is {} CPU ({}) and {} ({})",
            format_cpu(new.0),
            format_memory(new.1),
            format_cpu(room(c, most_cpu, back(most_cpu)).0),
            most_cpu.name,
            format_memory(room(c, most_memory, back(most_memory)).1),
            most_memory.name
        ))
        .detail(
            "largestFree",
            format!(
                "{} CPU on {}, {} on {}",
                format_cpu(room(c, most_cpu, back(most_cpu)).0),
                most_cpu.name,
                format_memory(room(c, most_memory, back(most_memory)).1),
                most_memory.name
            ),
        ),
    )
}
