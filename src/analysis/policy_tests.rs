//! Unit tests of policy normalization and identity (contract §3).

use super::json::to_vec_compact;
use super::leak::MemoryLeakPolicy;
use super::policy::*;
use sha2::{Digest, Sha256};

fn golden_policy() -> Policy {
    let mut p = Policy::default();
    p.cpu.percentile = 50.0;
    p.evidence.minimum_history_seconds = 600;
    p.evidence.minimum_samples = 10;
    p
}

fn hash_text(text: &str) -> String {
    format!("v2:{}", hex::encode(Sha256::digest(text.as_bytes())))
}

fn compact(p: &Policy) -> String {
    let normalized = normalize_policy(p).expect("valid");
    String::from_utf8(to_vec_compact(&normalized).expect("encodes")).expect("utf8")
}

#[test]
fn golden_policy_has_the_reference_version() {
    assert_eq!(
        policy_version(&golden_policy()).expect("valid"),
        "v2:05fcc132cfc77a9510dabdd15412df2f86e5ee8b8c8c703ea3f3738423463a51"
    );
}

#[test]
fn zero_policy_has_the_derived_default_version() {
    assert_eq!(
        policy_version(&Policy::default()).expect("valid"),
        "v2:ac4f3f6d0675a78cc08e5ca54d80e42e3a385d2f77151549c93e5ad8115c847c"
    );
}

#[test]
fn enabling_leak_detection_with_defaults_has_the_derived_version() {
    let mut p = Policy::default();
    p.memory.leak_detection = Some(MemoryLeakPolicy::default());
    assert_eq!(
        policy_version(&p).expect("valid"),
        "v2:e4ff9b72fd1e1bdf584d9a9527e6df7e819a5fe6cbe1e1dff6d5619756ac1712"
    );
}

#[test]
fn detector_seven_policy_without_oom_coefficient_hashes_as_recorded() {
    let text = compact(&golden_policy()).replace("\"oomKilledCoefficient\":1.5,", "");
    assert_eq!(
        hash_text(&text),
        "v2:5509b23e9c4314e2c5455ab47a985a8ba022812cb6904b593407df37908ae377"
    );
}

#[test]
fn v2_era_policy_with_maximum_gap_hashes_as_recorded() {
    let text = compact(&golden_policy())
        .replace("\"oomKilledCoefficient\":1.5,", "")
        .replace(
            "\"minimumCoverage\":0.9,",
            "\"minimumCoverage\":0.9,\"maximumGapSeconds\":300,",
        );
    assert_eq!(
        hash_text(&text),
        "v2:4ee0c63f2f57b6a5be6984cb78619879194d3200e9288b28c4a4bd247f4029d7"
    );
}

#[test]
fn normalized_policy_encodes_in_contract_key_order() {
    assert_eq!(
        compact(&golden_policy()),
        concat!(
            r#"{"cpu":{"strategy":"percentile","percentile":50,"headroomCoefficient":3,"#,
            r#""limitsToRequestsRatio":5,"bounds":{"minimum":20,"maximum":64000,"#,
            r#""minimumAbsoluteChange":50,"minimumRelativeChange":0.1},"requestsOnly":false},"#,
            r#""memory":{"strategy":"max","headroomCoefficient":1.2,"oomKilledCoefficient":1.5,"#,
            r#""limitsToRequestsRatio":3,"bounds":{"minimum":10485760,"maximum":1099511627776,"#,
            r#""minimumAbsoluteChange":8388608,"minimumRelativeChange":0.1},"requestsOnly":false},"#,
            r#""evidence":{"minimumHistorySeconds":600,"minimumSamples":10,"#,
            r#""minimumCoverage":0.9,"freshnessSeconds":300}}"#
        )
    );
}

#[test]
fn a_different_oom_coefficient_changes_the_version() {
    let mut p = Policy::default();
    p.memory.oom_killed_coefficient = 2.0;
    assert_ne!(policy_version(&p), policy_version(&Policy::default()));
}

#[test]
fn leak_enabled_differs_from_disabled() {
    let mut p = Policy::default();
    p.memory.leak_detection = Some(MemoryLeakPolicy::default());
    assert_ne!(policy_version(&p), policy_version(&Policy::default()));
}

#[test]
fn max_strategy_drops_the_percentile_and_strategies_are_canonicalized() {
    let mut p = Policy::default();
    p.cpu.strategy = "  MAX ".into();
    p.cpu.percentile = 80.0;
    let n = normalize_policy(&p).expect("valid");
    assert_eq!(n.cpu.strategy, "max");
    assert_eq!(n.cpu.percentile, 0.0);
    assert!(!compact(&p).contains("percentile\":"));
}

#[test]
fn invalid_values_are_rejected_with_the_contract_text() {
    type Mutation = Box<dyn Fn(&mut Policy)>;
    let cases: Vec<(Mutation, &str)> = vec![
        (
            Box::new(|p| p.cpu.percentile = 100.0),
            "cpu.percentile must be in (0,100); use max for p100",
        ),
        (
            Box::new(|p| p.cpu.percentile = -5.0),
            "cpu.percentile must be in (0,100)",
        ),
        (
            Box::new(|p| p.cpu.strategy = "avg".into()),
            "unsupported cpu.strategy \"avg\"",
        ),
        (
            Box::new(|p| p.memory.strategy = "p99".into()),
            "unsupported memory.strategy \"p99\"",
        ),
        (
            Box::new(|p| p.cpu.limits_to_requests_ratio = 0.5),
            "headroom must be positive and limit ratio must be at least one",
        ),
        (
            Box::new(|p| p.memory.headroom_coefficient = -1.0),
            "headroom must be positive",
        ),
        (
            Box::new(|p| p.memory.oom_killed_coefficient = 0.9),
            "memory.oomKilledCoefficient must be finite and at least one",
        ),
        (
            Box::new(|p| p.cpu.bounds.maximum = 10.0),
            "bounds must be finite, positive, and maximum >= minimum",
        ),
        (
            Box::new(|p| p.memory.bounds.minimum = -1.0),
            "bounds must be finite, positive",
        ),
        (
            Box::new(|p| p.evidence.minimum_samples = 1),
            "invalid evidence policy",
        ),
        (
            Box::new(|p| p.evidence.minimum_coverage = 1.5),
            "invalid evidence policy",
        ),
        (
            Box::new(|p| p.evidence.freshness_seconds = -1),
            "invalid evidence policy",
        ),
        (
            Box::new(|p| p.evidence.minimum_history_seconds = -3600),
            "invalid evidence policy",
        ),
    ];
    for (mutate, text) in cases {
        let mut p = Policy::default();
        mutate(&mut p);
        let err = normalize_policy(&p).expect_err(text).to_string();
        assert!(err.contains(text), "{err} should contain {text}");
        assert!(err.starts_with("invalid policy: "));
    }
}

#[test]
fn normalization_fills_every_default_and_does_not_mutate_its_input() {
    let p = Policy::default();
    let before = p.clone();
    let n = normalize_policy(&p).expect("valid");
    assert_eq!(p, before);
    assert_eq!(n, default_policy());
    assert_eq!(n.cpu.percentile, 95.0);
    assert_eq!(n.memory.bounds.maximum, 1099511627776.0);
    assert_eq!(n.evidence.minimum_history_seconds, 3600);
    assert_eq!(n.evidence.minimum_samples, 30);
    assert_eq!(n.evidence.freshness_seconds, 300);
    assert_eq!(normalize_policy(&n).expect("idempotent"), n);
}
