//! Freshness and the per-resource checks of contract §5 steps 1, 6 and 8: identity,
//! current settings and inventory. Each returns the first matching reason.

use super::input::{CurrentIdentity, Inventory, Signal, Target};
use super::reason::Reason;

/// Stale: not positive, in the future, or older than `freshness_seconds` (exactly that
/// old is still fresh).
pub(crate) fn is_stale(timestamp: i64, evaluation_time: i64, freshness_seconds: i64) -> bool {
    timestamp <= 0
        || timestamp > evaluation_time
        || evaluation_time - timestamp > freshness_seconds.saturating_mul(1000)
}

/// Identity reasons; any of them blocks sizing.
pub(crate) fn identity_reasons(
    identity: &CurrentIdentity,
    target: &Target,
    evaluation_time: i64,
    freshness_seconds: i64,
) -> Vec<Reason> {
    let mut reasons = Vec::new();
    let first = if identity.ambiguous {
        Some(Reason::AmbiguousIdentity)
    } else if !identity.available || identity.workload_uid.is_empty() || identity.release.is_empty()
    {
        Some(Reason::MissingIdentity)
    } else if identity.workload_uid != target.workload_uid || identity.release != target.release {
        Some(Reason::AmbiguousIdentity)
    } else if is_stale(identity.timestamp, evaluation_time, freshness_seconds)
        || identity.timestamp < identity.release_started_at
    {
        Some(Reason::StaleIdentity)
    } else {
        None
    };
    reasons.extend(first);
    if identity.release_started_at <= 0 || identity.release_started_at > evaluation_time {
        reasons.push(Reason::UnknownReleaseStart);
    }
    reasons
}

/// Missing or stale current setting.
pub(crate) fn signal_reason(
    signal: &Signal,
    release_started_at: i64,
    evaluation_time: i64,
    freshness_seconds: i64,
    [missing, stale]: [Reason; 2],
) -> Option<Reason> {
    if !signal.available {
        Some(missing)
    } else if is_stale(signal.timestamp, evaluation_time, freshness_seconds)
        || signal.timestamp < release_started_at
    {
        Some(stale)
    } else {
        None
    }
}

/// Inventory problems; they block only reductions and the introduction of a limit.
pub(crate) fn inventory_reason(
    inventory: &Inventory,
    fresh_pods: usize,
    release_started_at: i64,
    evaluation_time: i64,
    freshness_seconds: i64,
) -> Option<Reason> {
    if !inventory.available {
        Some(Reason::UnknownInventory)
    } else if is_stale(inventory.timestamp, evaluation_time, freshness_seconds)
        || inventory.timestamp < release_started_at
    {
        Some(Reason::StaleInventory)
    } else if inventory.excluded > 0 {
        Some(Reason::ExcludedContainers)
    } else if inventory.eligible <= 0
        || inventory.observed != inventory.eligible
        || i64::try_from(fresh_pods).ok() != Some(inventory.eligible)
    {
        Some(Reason::IncompleteInventory)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exactly_freshness_seconds_old_is_still_fresh() {
        assert!(!is_stale(700_000, 1_000_000, 300));
        assert!(is_stale(699_999, 1_000_000, 300));
        assert!(is_stale(1_000_001, 1_000_000, 300));
        assert!(is_stale(0, 1_000_000, 300));
    }

    #[test]
    fn evidence_exactly_at_release_start_is_valid_and_one_ms_earlier_is_stale() {
        let signal = Signal {
            available: true,
            unset: false,
            value: 1.0,
            timestamp: 1000,
        };
        let pair = [Reason::MissingCurrentRequest, Reason::StaleCurrentRequest];
        assert_eq!(signal_reason(&signal, 1000, 1000, 300, pair), None);
        assert_eq!(
            signal_reason(&signal, 1001, 1001, 300, pair),
            Some(Reason::StaleCurrentRequest)
        );
    }

    #[test]
    fn inventory_needs_every_eligible_pod_freshly_observed() {
        let inv = Inventory {
            available: true,
            timestamp: 1000,
            eligible: 2,
            observed: 2,
            excluded: 0,
        };
        assert_eq!(inventory_reason(&inv, 2, 0, 1000, 300), None);
        assert_eq!(
            inventory_reason(&inv, 1, 0, 1000, 300),
            Some(Reason::IncompleteInventory)
        );
        let excluded = Inventory {
            excluded: 1,
            ..inv.clone()
        };
        assert_eq!(
            inventory_reason(&excluded, 2, 0, 1000, 300),
            Some(Reason::ExcludedContainers)
        );
        let unknown = Inventory {
            available: false,
            ..inv
        };
        assert_eq!(
            inventory_reason(&unknown, 2, 0, 1000, 300),
            Some(Reason::UnknownInventory)
        );
    }

    #[test]
    fn identity_reports_one_identity_reason_plus_unknown_release_start() {
        let target = Target {
            workload_uid: "uid".into(),
            release: "A".into(),
            ..Target::default()
        };
        let identity = CurrentIdentity {
            available: true,
            workload_uid: "uid".into(),
            release: "B".into(),
            timestamp: 1000,
            ..CurrentIdentity::default()
        };
        assert_eq!(
            identity_reasons(&identity, &target, 1000, 300),
            vec![Reason::AmbiguousIdentity, Reason::UnknownReleaseStart]
        );
    }
}
