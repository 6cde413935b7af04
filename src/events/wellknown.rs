//! The event types and reasons of the events contract, listed once.
//! Adding a reason is a contract change: add it here and to docs/contracts/events.md.

/// The workload-event types agents may send. `config_changed` is the hub's own and is
/// deliberately absent.
pub const TYPES: &[(&str, &[&str])] = &[
    ("applied", &["RecommendationApplied", "ApprovedOnce"]),
    (
        "skipped",
        &[
            "ModeOff",
            "ModeAudit",
            "NoSignificantChange",
            "RecommendationStale",
        ],
    ),
    (
        "blocked",
        &[
            "LearningPeriod",
            "LowConfidence",
            "Cooldown",
            "HPACoupled",
            "Throttled",
            "OOMKilled",
            "FreezeWindow",
            "OutsideMaintenanceWindow",
            "UnsupportedNode",
            "RestartPolicyRequired",
            "JVMFixedHeap",
            "HubUnreachable",
            "SingleReplicaUnsafe",
            "PodDisruptionBudget",
            "Paused",
        ],
    ),
    ("fallback", &["ResizeInfeasible", "ResizeDeferredTimeout"]),
    ("rolled_back", &["OOMKills", "Restarts", "Throttling"]),
    ("released", &["ModeChanged"]),
    (
        "failed",
        &["ApplyError", "ResizeError", "RollbackError", "ReleaseError"],
    ),
];

/// The type the hub records configuration changes under; never accepted from agents.
pub const CONFIG_CHANGED: &str = "config_changed";

/// Types whose events must say which strategy was used.
pub const NEEDS_STRATEGY: &[&str] = &["applied", "fallback", "rolled_back", "released"];

/// Types whose events must list the changed containers.
pub const NEEDS_CONTAINERS: &[&str] = &["applied", "rolled_back"];

/// Apply strategies.
pub const STRATEGIES: &[&str] = &["in-place", "rollout", "deferred"];

/// Resources an event may be about.
pub const RESOURCES: &[&str] = &["cpu", "memory"];

/// Longest `message`, in characters.
pub const MAX_MESSAGE_CHARS: usize = 1024;

/// The reasons allowed for `event_type`, or `None` for an unknown type.
pub fn reasons_for(event_type: &str) -> Option<&'static [&'static str]> {
    TYPES
        .iter()
        .find(|(t, _)| *t == event_type)
        .map(|(_, reasons)| *reasons)
}

/// True when `event_type` is one an agent may send.
pub fn is_agent_type(event_type: &str) -> bool {
    reasons_for(event_type).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seven_types_and_no_reason_listed_twice() {
        assert_eq!(TYPES.len(), 7);
        let mut all: Vec<&str> = TYPES.iter().flat_map(|(_, r)| r.iter().copied()).collect();
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n);
        assert!(!is_agent_type(CONFIG_CHANGED));
    }
}
