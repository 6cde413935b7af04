//! A workload the agent tests create: one `app` container, its resources, what the sim
//! kubelet makes it use, and patches merged over the object or the container.

use kerf::cluster::{Resources, WorkloadKind};
use kerf::sim::kubelet::Usage;
use serde_json::Value;

use super::world::MIB;

pub fn res(cpu_req: u64, cpu_lim: u64, mem_req_mib: u64, mem_lim_mib: u64) -> Resources {
    Resources {
        cpu_request: Some(cpu_req),
        cpu_limit: Some(cpu_lim),
        memory_request: Some(mem_req_mib * MIB),
        memory_limit: Some(mem_lim_mib * MIB),
    }
}

/// A workload to create: one `app` container.
pub struct Spec {
    pub kind: WorkloadKind,
    pub name: &'static str,
    pub replicas: i32,
    pub resources: Resources,
    pub on_delete: bool,
    /// What the container uses (the sim kubelet's shapes).
    pub usage: Usage,
    /// Merged over the object (e.g. `spec.strategy`, `metadata.annotations`).
    pub patch: Value,
    /// Merged over the `app` container (image, env, command, resizePolicy).
    pub container: Value,
}

pub fn deployment(name: &'static str, replicas: i32, resources: Resources) -> Spec {
    Spec {
        kind: WorkloadKind::Deployment,
        name,
        replicas,
        resources,
        on_delete: false,
        usage: Usage::default(),
        patch: Value::Null,
        container: Value::Null,
    }
}

impl Spec {
    /// Its container uses `cpu` millicores steadily and `memory_mib` flat.
    pub fn using(mut self, cpu: f64, memory_mib: f64) -> Spec {
        self.usage = Usage {
            cpu: kerf::sim::shape::Cpu::Steady(cpu),
            memory: kerf::sim::shape::Memory::Flat(memory_mib * MIB as f64),
            scale: 1.0,
        };
        self
    }

    pub fn patch(mut self, patch: Value) -> Spec {
        merge(&mut self.patch, patch);
        self
    }

    pub fn container(mut self, patch: Value) -> Spec {
        merge(&mut self.container, patch);
        self
    }
}

pub fn merge(base: &mut Value, patch: Value) {
    match (base, patch) {
        (Value::Object(b), Value::Object(p)) => {
            for (k, v) in p {
                merge(b.entry(k).or_insert(Value::Null), v);
            }
        }
        (b, p) => *b = p,
    }
}
