//! Unit tests of sizing: material change, guards and no-action selection as pinned by
//! the contract.

use super::*;
use crate::analysis::policy::default_policy;

fn bounds(abs: f64) -> Bounds {
    Bounds {
        minimum: 1.0,
        maximum: 1e12,
        minimum_absolute_change: abs,
        minimum_relative_change: 0.1,
    }
}

fn signal(value: f64) -> Signal {
    Signal {
        available: true,
        unset: false,
        value,
        timestamp: 1,
    }
}

fn input(b: &Bounds, usage: f64, request: f64, limit: f64) -> SizingInput<'_> {
    SizingInput {
        bounds: b,
        headroom: 1.0,
        ratio: 5.0,
        requests_only: false,
        baseline: usage,
        usage,
        usage_blocked: false,
        oom: None,
        request: signal(request),
        limit: signal(limit),
        limit_reason: None,
        blockers: Vec::new(),
        confidence: 90,
    }
}

#[test]
fn material_change_boundaries_match_the_legacy_table() {
    let cases = [
        (100.0, 109.0, 8.0, false),
        (100.0, 111.0, 8.0, true),
        (100.0, 149.0, 50.0, false),
        (100.0, 150.0, 50.0, true),
        (0.0, 20.0, 50.0, false),
        (0.0, 50.0, 50.0, true),
        (100.0, 100.0, 0.0001, false),
    ];
    for (current, candidate, abs, want) in cases {
        assert_eq!(
            is_material(current, candidate, false, &bounds(abs)),
            want,
            "{current}->{candidate}"
        );
    }
}

#[test]
fn an_unset_setting_bypasses_thresholds_but_numeric_zero_does_not() {
    assert!(is_material(0.0, 1.0, true, &bounds(50.0)));
    assert!(!is_material(0.0, 1.0, false, &bounds(50.0)));
}

#[test]
fn initializing_an_unset_request_is_traced_as_initialization() {
    let b = bounds(50.0);
    let mut i = input(&b, 10.0, 0.0, 0.0);
    i.request.unset = true;
    i.limit.unset = true;
    let s = size(&i).expect("finite");
    assert_eq!(s.recommendations.len(), 2);
    assert!(s.recommendations.iter().all(|r| r.current_unset));
    let last = s.settings[0].steps.last().expect("steps");
    assert_eq!(last.rule, rule::INITIALIZE_UNSET);
    assert_eq!(last.passed, None);
}

#[test]
fn requests_and_limits_are_judged_independently() {
    let b = default_policy().cpu.bounds;
    let s = size(&input(&b, 30.0, 30.0, 500.0)).expect("finite");
    assert_eq!(s.recommendations.len(), 1);
    assert_eq!(s.recommendations[0].setting, Setting::Limits);
    assert_eq!(s.recommendations[0].suggested_value, 150.0);
    assert_eq!(s.settings[0].reasons, vec![Reason::NoMaterialChange]);
}

#[test]
fn an_inventory_reason_is_the_no_action_reason_only_for_a_material_reduction() {
    let b = default_policy().cpu.bounds;
    for (current, want) in [
        (29.0, Reason::NoMaterialChange),
        (31.0, Reason::NoMaterialChange),
        (1000.0, Reason::UnknownInventory),
    ] {
        let mut i = input(&b, 10.0, current, 0.0);
        i.limit_reason = Some(Reason::MissingCurrentLimit);
        i.limit = Signal::default();
        i.blockers = vec![Reason::UnknownInventory];
        let s = size(&i).expect("finite");
        assert!(s.recommendations.is_empty());
        assert_eq!(s.no_action, Some(want), "current {current}");
    }
}

#[test]
fn bound_applied_is_the_no_action_reason_only_when_the_bound_removed_a_material_change() {
    let b = default_policy().cpu.bounds;
    for (current, want) in [
        (20.0, Reason::NoMaterialChange),
        (69.0, Reason::BoundApplied),
    ] {
        let mut i = input(&b, 3.0, current, 0.0);
        i.limit_reason = Some(Reason::StaleCurrentLimit);
        let s = size(&i).expect("finite");
        assert!(s.recommendations.is_empty());
        assert!(s.bound_applied);
        assert_eq!(s.no_action, Some(want), "current {current}");
    }
}

#[test]
fn a_blocked_request_reduction_makes_a_lower_limit_fail_the_retained_request_guard() {
    let b = default_policy().cpu.bounds;
    let mut i = input(&b, 10.0, 1000.0, 1200.0);
    i.blockers = vec![Reason::IncompleteInventory];
    let s = size(&i).expect("finite");
    assert!(s.recommendations.is_empty());
    assert_eq!(s.settings[1].reasons, vec![Reason::BoundApplied]);
    assert_eq!(s.no_action, Some(Reason::IncompleteInventory));
}

#[test]
fn oom_only_sizing_never_reduces_and_reports_the_raise_as_a_bound() {
    let mib = 1024.0 * 1024.0;
    let b = default_policy().memory.bounds;
    let mut i = input(&b, 0.0, 512.0 * mib, 0.0);
    i.usage_blocked = true;
    i.limit_reason = Some(Reason::MissingCurrentLimit);
    let floor = crate::analysis::oom::OomFloor {
        floor: 75.0 * mib,
        used_current_fallback: false,
        used_usage_fallback: false,
    };
    i.oom = Some((floor, 1.5));
    let s = size(&i).expect("finite");
    assert!(s.recommendations.is_empty());
    assert_eq!(s.no_action, Some(Reason::BoundApplied));
    assert_eq!(s.settings[0].steps[0].rule, rule::OOM_WITHOUT_USAGE);
}

#[test]
fn requests_only_never_computes_limits_even_with_a_huge_ratio() {
    let b = default_policy().cpu.bounds;
    let mut i = input(&b, 100.0, 1000.0, 4000.0);
    i.requests_only = true;
    i.ratio = f64::MAX;
    let s = size(&i).expect("no overflow");
    assert!(!s.bound_applied);
    assert_eq!(s.settings[1].disposition, Disposition::Disabled);
    i.requests_only = false;
    assert_eq!(size(&i).err().as_deref(), Some("suggested value overflow"));
}

#[test]
fn a_request_above_the_current_limit_is_retained_unless_the_limit_also_changes() {
    let b = default_policy().cpu.bounds;
    let mut i = input(&b, 600.0, 100.0, 500.0);
    i.requests_only = true;
    let s = size(&i).expect("finite");
    assert!(s.recommendations.is_empty());
    assert_eq!(s.settings[0].reasons, vec![Reason::BoundApplied]);
    assert_eq!(s.no_action, Some(Reason::BoundApplied));
    i.requests_only = false;
    assert_eq!(size(&i).expect("finite").recommendations.len(), 2);
}

#[test]
fn suggested_values_are_not_rounded() {
    let mib = 1024.0 * 1024.0;
    let b = default_policy().memory.bounds;
    let mut i = input(&b, 20.0 * mib, 256.0 * mib, 512.0 * mib);
    i.headroom = 1.2;
    i.baseline = 20.0 * mib * 1.2;
    let s = size(&i).expect("finite");
    assert_eq!(s.recommendations[0].suggested_value, 25165824.0);
}
