//! `skipped NoSignificantChange` in words that match what happened: every recommended
//! value within the tolerance, or no recommended value at all (the engine's no-action
//! reason: `sparse-coverage`, `insufficient-history`, …), or some of each. A
//! recommendation without values is never reported as "within tolerance".

use std::collections::BTreeSet;

use super::Finding;
use crate::wire::summary::{ContainerSummary, ResourceSummary};
use crate::wire::{EventResource, Reason};

/// Why the engine suggested nothing for one resource of one container.
struct Unsuggested {
    container: String,
    resource: EventResource,
    /// The engine's `noActionReason`; `None` when the recommendation has no result.
    reason: Option<String>,
}

fn summary_of(c: &ContainerSummary, r: EventResource) -> Option<&ResourceSummary> {
    match r {
        EventResource::Cpu => c.cpu.as_ref(),
        EventResource::Memory => c.memory.as_ref(),
    }
}

fn resource_word(r: EventResource) -> &'static str {
    match r {
        EventResource::Cpu => "cpu",
        EventResource::Memory => "memory",
    }
}

/// The container × resource pairs of `resources` the recommendation suggests nothing
/// for, and whether it suggests anything at all for them.
fn unsuggested(
    containers: &[ContainerSummary],
    resources: &[EventResource],
    excluded: &[String],
) -> (Vec<Unsuggested>, bool) {
    let mut out = Vec::new();
    let mut any = false;
    for c in containers.iter().filter(|c| !excluded.contains(&c.name)) {
        for r in resources {
            let summary = summary_of(c, *r);
            if summary.is_some_and(|s| s.requests.is_some() || s.limits.is_some()) {
                any = true;
                continue;
            }
            out.push(Unsuggested {
                container: c.name.clone(),
                resource: *r,
                reason: summary.and_then(|s| s.no_action_reason.clone()),
            });
        }
    }
    (out, any)
}

/// The finding for a workload whose `resources` have no change beyond `tolerance`.
pub fn finding(
    containers: &[ContainerSummary],
    resources: &[EventResource],
    excluded: &[String],
    tolerance: f64,
) -> Finding {
    let (missing, any) = unsuggested(containers, resources, excluded);
    let within = format!(
        "every recommended value is within {:.0} % of the value in force",
        tolerance * 100.0
    );
    if missing.is_empty() {
        return Finding::new(Reason::NoSignificantChange, within);
    }
    let reasons: BTreeSet<&str> = missing
        .iter()
        .map(|m| m.reason.as_deref().unwrap_or("no-result"))
        .collect();
    let reasons = reasons.into_iter().collect::<Vec<_>>().join(", ");
    let pairs = missing
        .iter()
        .map(|m| format!("{} {}", m.container, resource_word(m.resource)))
        .collect::<Vec<_>>()
        .join(", ");
    let message = if any {
        format!("{within}; the engine suggests no value for {pairs} ({reasons})")
    } else {
        format!("the engine suggests no value ({reasons}), so there is nothing to apply")
    };
    Finding::new(Reason::NoSignificantChange, message)
        .detail("noActionReason", reasons)
        .detail("unsuggested", pairs)
}
