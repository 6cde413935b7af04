//! Emit only on change (events contract, "skipped and blocked are emitted only on
//! change"): a skip or block is reported once per (workload, type, reason, resources),
//! and again only when the proposed values move beyond the tolerance since it was
//! reported, or the workload's effective-policy identity changed. A finding that no
//! longer holds is forgotten, so it is reported again if it comes back. An apply,
//! rollback or release clears the memory (the caller starts from an empty list).
//!
//! The memory ([`Reported`]) is persisted in the workload's RightsizingRecommendation
//! status, so an agent restart does not repeat what was already reported.

use super::values::{fields_of, moved, ProposedValue};
use super::Finding;
pub use crate::agent::state::Reported;
use crate::wire::EventResource;

/// What to report now, and the memory to keep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    /// Indexes into the findings, in their order.
    pub emit: Vec<usize>,
    pub next: Vec<Reported>,
}

fn scoped(values: &[ProposedValue], resources: &[EventResource]) -> Vec<ProposedValue> {
    if resources.is_empty() {
        return values.to_vec();
    }
    values
        .iter()
        .filter(|v| resources.iter().any(|r| fields_of(*r).contains(&v.field)))
        .cloned()
        .collect()
}

/// Which of `findings` to report, given what was `reported` before, the proposal's
/// `values`, the effective-policy `identity` and the `tolerance`.
pub fn select(
    reported: &[Reported],
    findings: &[Finding],
    values: &[ProposedValue],
    identity: &str,
    tolerance: f64,
) -> Selection {
    let mut emit = Vec::new();
    let mut next = Vec::new();
    for (i, f) in findings.iter().enumerate() {
        let now_values = scoped(values, &f.resources);
        let before = reported
            .iter()
            .find(|r| r.reason == f.reason && r.resources == f.resources);
        let unchanged = before.is_some_and(|r| {
            r.policy_identity == identity && !moved(&r.values, &now_values, tolerance)
        });
        match (unchanged, before) {
            // Keep the values it was reported with: slow drift adds up until it counts.
            (true, Some(r)) => next.push(r.clone()),
            _ => {
                emit.push(i);
                next.push(Reported {
                    reason: f.reason,
                    resources: f.resources.clone(),
                    values: now_values,
                    policy_identity: identity.to_string(),
                });
            }
        }
    }
    Selection { emit, next }
}
