//! Emit only on change (events contract, "skipped and blocked are emitted only on
//! change"): a skip or block is reported once per (workload, type, reason, resources),
//! and again only when the proposed values move beyond the tolerance since it was
//! reported, or the workload's effective-policy identity changed. A finding that no
//! longer holds is forgotten, so it is reported again if it comes back. An apply,
//! rollback or release clears the memory (the caller starts from an empty list).
//!
//! The memory ([`Reported`]) is persisted in the workload's RightsizingRecommendation
//! status, so an agent restart does not repeat what was already reported.

use serde::{Deserialize, Serialize};

use super::values::{fields_of, moved, ProposedValue};
use super::Finding;
use crate::wire::{EventResource, Reason};

/// A finding as it was last reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Reported {
    pub reason: Reason,
    /// Empty: the whole workload.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<EventResource>,
    /// The proposed values when it was reported (of `resources` only, when given).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<ProposedValue>,
    /// The effective-policy identity when it was reported.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub policy_identity: String,
}

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
