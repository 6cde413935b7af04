//! Workload guardrails read before a change is started, so that a change the API server
//! would refuse is never begun: `ResourceQuota` (the namespace's quotas have room for
//! the change, the new pods of a rollout included) and `LimitRange` (the new values
//! keep every rule of the namespace's limit ranges). Pure, over [`Ctx`].

use super::values::Proposal;
use super::{Ctx, Finding};
use crate::cluster::quantity::{format_cpu, format_memory};
use crate::cluster::{
    ContainerRole, CpuMemory, LimitKind, LimitRangeItem, QosClass, QuotaAmounts, QuotaResource,
    ResourceQuota, Resources,
};
use crate::policy::Strategy;
use crate::wire::Reason;

/// One pod of the workload before and after the change: what a quota counts of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PodTotals {
    pub before: QuotaAmounts,
    pub after: QuotaAmounts,
    /// The pod after the change has no request and no limit at all.
    pub best_effort: bool,
}

/// The role and values of every container of one pod, in template order.
pub type PodContainers = Vec<(ContainerRole, Resources)>;

/// The containers of a pod of the workload, before and after `changes`.
pub fn containers_after(c: &Ctx, changes: &Proposal) -> (PodContainers, PodContainers) {
    let live = &c.input.live.containers;
    let before: PodContainers = c
        .input
        .state
        .current(live)
        .iter()
        .map(|k| (k.role, k.resources))
        .collect();
    let after = live
        .iter()
        .zip(&before)
        .map(|(k, (role, now))| {
            let target = changes.containers.iter().find(|t| t.name == k.name);
            (*role, target.map_or(*now, |t| t.target))
        })
        .collect();
    (before, after)
}

/// What one pod counts against a quota, before and after the change.
pub fn pod_totals(c: &Ctx) -> PodTotals {
    let (before, after) = containers_after(c, &c.proposal.only(c.resources));
    PodTotals {
        before: QuotaAmounts::of_pod(before.iter().map(|(role, r)| (*role, r))),
        after: QuotaAmounts::of_pod(after.iter().map(|(role, r)| (*role, r))),
        best_effort: QosClass::of(&after.iter().map(|(_, r)| *r).collect::<Vec<_>>())
            == QosClass::BestEffort,
    }
}

/// True when `q` counts the workload's pods: its scopes are ones kerf can tell for a
/// workload's pod (`BestEffort`, `NotBestEffort`, `NotTerminating`). A quota narrowed
/// by others (`Terminating`, `PriorityClass`, `CrossNamespacePodAffinity`) is not
/// checked: the agent does not read what they select by.
fn counts(q: &ResourceQuota, best_effort: bool) -> bool {
    q.scopes.iter().all(|s| match s.as_str() {
        "BestEffort" => best_effort,
        "NotBestEffort" => !best_effort,
        "NotTerminating" => true,
        _ => false,
    })
}

fn show(r: QuotaResource, v: u64) -> String {
    match r {
        QuotaResource::RequestsCpu | QuotaResource::LimitsCpu => format_cpu(v),
        QuotaResource::RequestsMemory | QuotaResource::LimitsMemory => format_memory(v),
        QuotaResource::Pods => v.to_string(),
    }
}

/// `ResourceQuota`: for each amount a quota of the namespace limits, the change needs
/// its growth on every pod (replicas × (after − before), when it grows) plus, for a
/// rollout that surges, the surge pods at their new size (the most a rollout can hold
/// above the pods it replaces). More than the quota's room (hard − used) holds it.
pub fn resource_quota(c: &Ctx) -> Option<Finding> {
    let quotas = &c.input.admission.quotas;
    if quotas.is_empty() {
        return None;
    }
    let pod = pod_totals(c);
    let live = c.input.live;
    let replicas = (live.replicas.max(0) as u64).max(c.input.pods.len() as u64);
    let surge = match c.strategy {
        Strategy::InPlace => 0,
        _ => super::disruption::surge_pods(live),
    };
    for q in quotas.iter().filter(|q| counts(q, pod.best_effort)) {
        let Some(used) = q.used else { continue };
        for r in QuotaResource::ALL {
            let Some(hard) = q.hard.get(r) else { continue };
            let (before, after) = (
                pod.before.get(r).unwrap_or(0),
                pod.after.get(r).unwrap_or(0),
            );
            let growth = replicas * after.saturating_sub(before);
            let needed = growth + surge * after;
            let room = hard.saturating_sub(used.get(r).unwrap_or(0));
            if needed == 0 || needed <= room {
                continue;
            }
            let mut why = Vec::new();
            if growth > 0 {
                why.push(format!(
                    "{replicas} pod{} × {} more",
                    if replicas == 1 { "" } else { "s" },
                    show(r, after - before)
                ));
            }
            if surge > 0 && after > 0 {
                why.push(format!(
                    "{surge} new pod{} of {} during the rollout",
                    if surge == 1 { "" } else { "s" },
                    show(r, after)
                ));
            }
            let message = format!(
                "the ResourceQuota {} has {} of {} left and the change needs {} ({}); raise the quota or free room in it",
                q.name,
                show(r, room),
                r.as_str(),
                show(r, needed),
                why.join(" plus ")
            );
            return Some(
                Finding::new(Reason::ResourceQuota, message)
                    .detail("resourceQuota", &q.name)
                    .detail("resource", r.as_str())
                    .detail("needed", show(r, needed))
                    .detail("available", show(r, room)),
            );
        }
    }
    None
}

/// One resource of a container (or pod) as a limit range reads it.
struct Side {
    name: &'static str,
    request: Option<u64>,
    limit: Option<u64>,
    show: fn(u64) -> String,
    pick: fn(&CpuMemory) -> Option<u64>,
}

/// What a rule refuses: the field, the value and the bound it breaks.
type Broken = (String, String, String);

/// What one rule refuses of `side`.
fn broken_side(item: &LimitRangeItem, s: &Side) -> Option<Broken> {
    let (name, show) = (s.name, s.show);
    for (field, v) in [("requests", s.request), ("limits", s.limit)] {
        let Some(v) = v else { continue };
        if let Some(min) = (s.pick)(&item.min).filter(|m| v < *m) {
            return Some((
                format!("{field}.{name}"),
                show(v),
                format!("min {}", show(min)),
            ));
        }
        if let Some(max) = (s.pick)(&item.max).filter(|m| v > *m) {
            return Some((
                format!("{field}.{name}"),
                show(v),
                format!("max {}", show(max)),
            ));
        }
    }
    let ratio = (s.pick)(&item.max_ratio_milli)?;
    let (request, limit) = (s.request?, s.limit?);
    (request > 0 && u128::from(limit) * 1000 > u128::from(ratio) * u128::from(request)).then(|| {
        (
            format!("limits.{name}/requests.{name}"),
            format!("{} / {}", show(limit), show(request)),
            format!("maxLimitRequestRatio {}", ratio as f64 / 1000.0),
        )
    })
}

/// What one rule refuses of `r` (a container's values, or a pod's sums).
fn broken(item: &LimitRangeItem, r: &Resources) -> Option<Broken> {
    let sides = [
        Side {
            name: "cpu",
            request: r.cpu_request,
            limit: r.cpu_limit,
            show: format_cpu,
            pick: |m| m.cpu,
        },
        Side {
            name: "memory",
            request: r.memory_request,
            limit: r.memory_limit,
            show: format_memory,
            pick: |m| m.memory,
        },
    ];
    sides.iter().find_map(|s| broken_side(item, s))
}

/// `LimitRange`: the changed containers' new values (and a pod's new sums) keep every
/// `Container` and `Pod` rule of the namespace's limit ranges.
pub fn limit_range(c: &Ctx) -> Option<Finding> {
    let ranges = &c.input.admission.limit_ranges;
    if ranges.is_empty() {
        return None;
    }
    let changes = c.proposal.only(c.resources);
    let (_, after) = containers_after(c, &changes);
    let pod = Resources::of_pod(after.iter().map(|(role, r)| (*role, r)));
    for range in ranges.iter() {
        for item in &range.items {
            let hit = match item.kind {
                LimitKind::Container => changes.containers.iter().find_map(|t| {
                    broken(item, &t.target).map(|b| (format!("container {}", t.name), b))
                }),
                LimitKind::Pod => broken(item, &pod).map(|b| ("the pod".to_string(), b)),
            };
            let Some((whose, (field, value, bound))) = hit else {
                continue;
            };
            return Some(
                Finding::new(
                    Reason::LimitRange,
                    format!(
                        "the LimitRange {} refuses {whose}'s new {field} {value} ({bound})",
                        range.name
                    ),
                )
                .detail("limitRange", &range.name)
                .detail("resource", field)
                .detail("value", value)
                .detail("limit", bound),
            );
        }
    }
    None
}
