//! The simulated kubelet's decisions, shared by both faces: whether a resize fits the
//! node (accepted, `Deferred`, `Infeasible`), and what a running container does between
//! two moments (OOM kill when its memory reaches the limit, CFS throttling when it wants
//! more CPU than its limit), and what it serves of them at `/metrics/cadvisor`
//! (`cadvisor`). Pure: the faces own the time and the objects.

pub mod cadvisor;

use serde::{Deserialize, Serialize};

use super::shape::{moment, Cpu, Draws, Limits, Memory};
use crate::cluster::{
    total_requests, Node, QosClass, ResizePolicy, ResizeState, ResourceField, Resources,
    RestartPolicy, Termination,
};

/// What one container would use: its shapes and its share of them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    pub cpu: Cpu,
    pub memory: Memory,
    #[serde(default = "one")]
    pub scale: f64,
}

fn one() -> f64 {
    1.0
}

impl Default for Usage {
    fn default() -> Usage {
        Usage {
            cpu: Cpu::Idle(5.0),
            memory: Memory::Flat(32.0 * 1024.0 * 1024.0),
            scale: 1.0,
        }
    }
}

/// Pod annotation carrying each container's [`Usage`] as JSON (`{"app": {...}}`), how
/// tests tell the sim kubelet what a pod's containers use.
pub const USAGE_ANNOTATION: &str = "sim.getkerf.dev/usage";

/// Linux CFS period: 100 ms.
const CFS_PERIOD_MS: i64 = 100;

/// The kubelet's view of one running container.
#[derive(Debug, Clone, PartialEq)]
pub struct ContainerRun {
    pub name: String,
    /// Seeds the container's draws ([`Draws::at`]): `namespace/workload/container` in
    /// the demo (as its datasource draws), anything unique elsewhere.
    pub draw_key: String,
    pub usage: Usage,
    /// What it runs with now (`status...resources`).
    pub actual: Resources,
    pub resize_policy: ResizePolicy,
    pub restarts: i32,
    pub life_start_ms: i64,
    pub last_termination: Option<Termination>,
    pub cpu_seconds: f64,
    pub periods: u64,
    pub throttled_periods: u64,
    pub memory_bytes: f64,
    pub oom_kills: u32,
    /// Last simulated moment.
    pub at_ms: i64,
}

impl ContainerRun {
    pub fn start(
        name: &str,
        usage: Usage,
        resources: Resources,
        policy: ResizePolicy,
        now_ms: i64,
    ) -> ContainerRun {
        ContainerRun {
            name: name.into(),
            draw_key: name.into(),
            usage,
            actual: resources,
            resize_policy: policy,
            restarts: 0,
            life_start_ms: now_ms,
            last_termination: None,
            cpu_seconds: 0.0,
            periods: 0,
            throttled_periods: 0,
            memory_bytes: 0.0,
            oom_kills: 0,
            at_ms: now_ms,
        }
    }

    /// The same container with its draws seeded by `key` (see [`ContainerRun::draw_key`]).
    pub fn drawn_as(mut self, key: String) -> ContainerRun {
        self.draw_key = key;
        self
    }

    /// Simulates up to `now_ms` in one step (the faces tick often), by
    /// [`crate::sim::shape::moment`]. Returns whether the container was OOM-killed (and
    /// restarted) in this step.
    pub fn advance(&mut self, seed: u64, now_ms: i64) -> bool {
        if now_ms <= self.at_ms {
            return false;
        }
        let dt_ms = now_ms - self.at_ms;
        let d = Draws::at(seed, &self.draw_key, now_ms, self.usage.memory);
        let limits = Limits {
            cpu: self.actual.cpu_limit.map(|l| l as f64),
            memory: self.actual.memory_limit.map(|l| l as f64),
        };
        let m = moment(
            self.usage.cpu,
            self.usage.memory,
            self.usage.scale,
            now_ms,
            now_ms - self.life_start_ms,
            limits,
            &d,
        );
        let periods = (dt_ms / CFS_PERIOD_MS).max(1) as u64;
        if limits.cpu.is_some() {
            self.periods += periods;
            // Throttled in the share of periods where the quota ran out.
            self.throttled_periods += ((periods as f64) * m.throttled).ceil() as u64;
        }
        self.cpu_seconds += m.cpu / 1000.0 * dt_ms as f64 / 1000.0;
        self.at_ms = now_ms;
        if m.oom_killed {
            self.oom_kills += 1;
            self.kill("OOMKilled", 137, now_ms);
            return true;
        }
        self.memory_bytes = m.memory;
        false
    }

    /// The container ends and the kubelet starts it again at once.
    pub fn kill(&mut self, reason: &str, exit_code: i32, now_ms: i64) {
        self.restarts += 1;
        self.last_termination = Some(Termination {
            reason: reason.into(),
            exit_code,
            finished_at_ms: Some(now_ms),
        });
        self.life_start_ms = now_ms;
        self.memory_bytes = 0.0;
    }

    /// Applies an accepted resize; restarts the container when a changed resource's
    /// policy says `RestartContainer`.
    pub fn resize(&mut self, desired: Resources, now_ms: i64) {
        let changed = |fields: [ResourceField; 2]| {
            fields
                .iter()
                .any(|f| self.actual.get(*f) != desired.get(*f))
        };
        let restart = (changed([ResourceField::CpuRequest, ResourceField::CpuLimit])
            && self.resize_policy.cpu == RestartPolicy::RestartContainer)
            || (changed([ResourceField::MemoryRequest, ResourceField::MemoryLimit])
                && self.resize_policy.memory == RestartPolicy::RestartContainer);
        self.actual = desired;
        if restart {
            self.kill("Completed", 0, now_ms);
        }
    }
}

/// The kubelet's verdict on a resize: `Settled` means accepted.
///
/// `others` are the requests (millicores, bytes) already admitted on the node for every
/// other pod; `pod_requests` what this pod would need after the resize.
pub fn decide_resize(
    node: &Node,
    guaranteed: bool,
    memory_changes: bool,
    others: (u64, u64),
    pod_requests: (u64, u64),
) -> ResizeState {
    if node.managers.cpu_static && guaranteed {
        return ResizeState::Infeasible {
            message: "Resize is infeasible for Guaranteed Pods alongside CPU Manager static policy"
                .into(),
        };
    }
    if node.managers.memory_static && guaranteed {
        return ResizeState::Infeasible {
            message:
                "Resize is infeasible for Guaranteed Pods alongside Memory Manager static policy"
                    .into(),
        };
    }
    if node.swap_bytes > 0 && memory_changes {
        return ResizeState::Infeasible {
            message: "In-place resize of containers with swap is not supported".into(),
        };
    }
    let checks = [
        ("cpu", pod_requests.0, others.0, node.allocatable_cpu),
        ("memory", pod_requests.1, others.1, node.allocatable_memory),
    ];
    for (name, wanted, _, capacity) in checks {
        if wanted > capacity {
            return ResizeState::Infeasible {
                message: format!("Node didn't have enough capacity: {name}, requested: {wanted}, capacity: {capacity}"),
            };
        }
    }
    for (name, wanted, used, capacity) in checks {
        if wanted + used > capacity {
            return ResizeState::Deferred {
                message: format!("Node didn't have enough resource: {name}, requested: {wanted}, used: {used}, capacity: {capacity}"),
            };
        }
    }
    ResizeState::Settled
}

/// The verdict on resizing a pod's containers from `current` to `target` on `node`,
/// beside `others` (the requests admitted for the node's other pods).
pub fn judge(
    node: &Node,
    current: &[Resources],
    target: &[Resources],
    others: (u64, u64),
) -> ResizeState {
    let memory_changes = target
        .iter()
        .zip(current)
        .any(|(t, c)| t.memory_request != c.memory_request || t.memory_limit != c.memory_limit);
    let guaranteed = QosClass::of(current) == QosClass::Guaranteed;
    decide_resize(
        node,
        guaranteed,
        memory_changes,
        others,
        total_requests(target),
    )
}

#[cfg(test)]
mod tests;
