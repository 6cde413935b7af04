//! From a recommendation to the values a change would set, and whether they matter.
//!
//! Rounding (documented in docs/contracts/agent.md): CPU is rounded **up** to whole
//! millicores and memory **up** to whole MiB, so an applied value is never below the
//! recommendation; a limit is never set below its request. kerf changes only values a
//! container sets today: it never adds a request or limit the workload leaves unset, and
//! never removes one (adding a limit changes the pod's QoS class or behaviour in ways a
//! recommendation should not decide alone).

pub use crate::agent::state::ProposedValue;
use crate::cluster::{Container, ContainerRole, ResourceField, Resources};
use crate::wire::{ContainerSummary, EventResource};

/// One container's values now and what the recommendation would set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerTarget {
    pub name: String,
    pub role: ContainerRole,
    pub current: Resources,
    pub target: Resources,
}

/// Every container the recommendation covers, in template order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Proposal {
    pub containers: Vec<ContainerTarget>,
}

/// The resource a field belongs to.
pub fn resource_of(field: ResourceField) -> EventResource {
    match field {
        ResourceField::CpuRequest | ResourceField::CpuLimit => EventResource::Cpu,
        ResourceField::MemoryRequest | ResourceField::MemoryLimit => EventResource::Memory,
    }
}

/// The fields of one resource.
pub fn fields_of(resource: EventResource) -> [ResourceField; 2] {
    match resource {
        EventResource::Cpu => [ResourceField::CpuRequest, ResourceField::CpuLimit],
        EventResource::Memory => [ResourceField::MemoryRequest, ResourceField::MemoryLimit],
    }
}

/// CPU rounded up to whole millicores (at least 1m): `wire::applied`.
pub fn round_cpu(millis: f64) -> u64 {
    crate::wire::applied::cpu_millis(millis)
}

/// Memory rounded up to whole MiB (at least 1 MiB): `wire::applied`.
pub fn round_memory(bytes: f64) -> u64 {
    crate::wire::applied::memory_bytes(bytes)
}

fn suggested(summary: &ContainerSummary, field: ResourceField) -> Option<f64> {
    let resource = match resource_of(field) {
        EventResource::Cpu => summary.cpu.as_ref()?,
        EventResource::Memory => summary.memory.as_ref()?,
    };
    let setting = match field {
        ResourceField::CpuRequest | ResourceField::MemoryRequest => resource.requests.as_ref()?,
        ResourceField::CpuLimit | ResourceField::MemoryLimit => resource.limits.as_ref()?,
    };
    (setting.suggested.is_finite() && setting.suggested > 0.0).then_some(setting.suggested)
}

/// What `summaries` would set on `current` (the values in force, by container). A
/// container the recommendation does not name, or that is excluded, is left out.
pub fn propose(
    current: &[Container],
    summaries: &[ContainerSummary],
    excluded: &[String],
) -> Proposal {
    let mut containers = Vec::new();
    for c in current {
        if excluded.contains(&c.name) {
            continue;
        }
        let Some(summary) = summaries.iter().find(|s| s.name == c.name) else {
            continue;
        };
        let mut target = c.resources;
        for field in ResourceField::ALL {
            if c.resources.get(field).is_none() {
                continue;
            }
            if let Some(v) = suggested(summary, field) {
                let rounded = match resource_of(field) {
                    EventResource::Cpu => round_cpu(v),
                    EventResource::Memory => round_memory(v),
                };
                target.set(field, Some(rounded));
            }
        }
        keep_limits_above_requests(&mut target);
        containers.push(ContainerTarget {
            name: c.name.clone(),
            role: c.role,
            current: c.resources,
            target,
        });
    }
    Proposal { containers }
}

fn keep_limits_above_requests(r: &mut Resources) {
    if let (Some(req), Some(lim)) = (r.cpu_request, r.cpu_limit) {
        r.cpu_limit = Some(lim.max(req));
    }
    if let (Some(req), Some(lim)) = (r.memory_request, r.memory_limit) {
        r.memory_limit = Some(lim.max(req));
    }
}

/// True when `to` differs from `from` by more than `tolerance` (a fraction of `from`).
pub fn beyond(from: u64, to: u64, tolerance: f64) -> bool {
    if from == to {
        return false;
    }
    if from == 0 {
        return true;
    }
    (to as f64 - from as f64).abs() / from as f64 > tolerance
}

impl Proposal {
    /// True when some value of `resource` moves beyond `tolerance`.
    pub fn significant(&self, resource: EventResource, tolerance: f64) -> bool {
        self.containers.iter().any(|c| {
            fields_of(resource)
                .iter()
                .any(|f| match (c.current.get(*f), c.target.get(*f)) {
                    (Some(from), Some(to)) => beyond(from, to, tolerance),
                    _ => false,
                })
        })
    }

    /// The same proposal changing only `resources` (the others keep their values).
    pub fn only(&self, resources: &[EventResource]) -> Proposal {
        let containers = self
            .containers
            .iter()
            .map(|c| {
                let mut target = c.current;
                for r in resources {
                    for f in fields_of(*r) {
                        target.set(f, c.target.get(f));
                    }
                }
                ContainerTarget {
                    target,
                    ..c.clone()
                }
            })
            .filter(|c| c.target != c.current)
            .collect();
        Proposal { containers }
    }

    /// Every proposed value, flattened (what emission compares across loops).
    pub fn values(&self) -> Vec<ProposedValue> {
        self.containers
            .iter()
            .flat_map(|c| {
                ResourceField::ALL.into_iter().filter_map(move |f| {
                    c.target.get(f).map(|value| ProposedValue {
                        container: c.name.clone(),
                        field: f,
                        value,
                    })
                })
            })
            .collect()
    }
}

/// True when `now` moved beyond `tolerance` from `then` (a value appeared, vanished or
/// changed by more than the fraction).
pub fn moved(then: &[ProposedValue], now: &[ProposedValue], tolerance: f64) -> bool {
    let key = |v: &ProposedValue| (v.container.clone(), v.field);
    if then.len() != now.len() {
        return true;
    }
    now.iter()
        .any(|n| match then.iter().find(|t| key(t) == key(n)) {
            Some(t) => beyond(t.value, n.value, tolerance),
            None => true,
        })
}
