//! The chain of kerf's changes on a workload, and the money of it.

use super::*;
use crate::wire::event::ResourceValues;

const PRICES: (f64, f64) = (0.0316, 0.0042);

fn change(
    name: &str,
    from: &[(EventResource, &str)],
    to: &[(EventResource, &str)],
) -> ContainerChange {
    let values = |v: &[(EventResource, &str)]| ResourceValues {
        requests: v.iter().map(|(r, q)| (*r, q.to_string())).collect(),
        limits: Default::default(),
    };
    ContainerChange {
        name: name.into(),
        from: values(from),
        to: values(to),
    }
}

use EventResource::{Cpu, Memory};

#[test]
fn a_change_realizes_what_it_took_off_the_requests_and_a_rollback_takes_it_back() {
    let mut chain = Chain::default();
    chain.fold(&[change(
        "app",
        &[(Cpu, "312m"), (Memory, "512Mi")],
        &[(Cpu, "90m"), (Memory, "256Mi")],
    )]);
    let realized = chain.realized_monthly(PRICES, 3.0);
    let want = ((0.222 * 0.0316) + (0.25 * 0.0042)) * HOURS_PER_MONTH * 3.0;
    assert!((realized - want).abs() < 1e-9, "{realized} vs {want}");
    // A second change keeps the first baseline.
    chain.fold(&[change("app", &[(Cpu, "90m")], &[(Cpu, "80m")])]);
    assert_eq!(chain.baseline["app"]["cpu"], 312.0);
    assert_eq!(chain.in_force["app"]["cpu"], 80.0);
    // Rolled back to where it started: nothing is live.
    chain.fold(&[change(
        "app",
        &[(Cpu, "80m"), (Memory, "256Mi")],
        &[(Cpu, "312m"), (Memory, "512Mi")],
    )]);
    assert!(chain.is_empty(), "{chain:?}");
    assert_eq!(chain.realized_monthly(PRICES, 3.0), 0.0);
}

#[test]
fn a_partial_apply_realizes_its_part_and_leaves_the_rest_available() {
    // Recommended: CPU 312m → 90m and memory 512Mi → 256Mi; only CPU is applied.
    let current: Requests = [(
        "app".to_string(),
        [
            ("cpu".to_string(), 312.0),
            ("memory".to_string(), 512.0 * 1048576.0),
        ]
        .into(),
    )]
    .into();
    let recommended: Requests = [(
        "app".to_string(),
        [
            ("cpu".to_string(), 90.0),
            ("memory".to_string(), 256.0 * 1048576.0),
        ]
        .into(),
    )]
    .into();
    let available_before = -monthly_change(&current, &recommended, PRICES, 2.0);
    let applied = [change("app", &[(Cpu, "312m")], &[(Cpu, "90m")])];
    let mut chain = Chain::default();
    chain.fold(&applied);
    let realized = chain.realized_monthly(PRICES, 2.0);
    let moved = monthly_change(
        &requests_of(&applied, false),
        &requests_of(&applied, true),
        PRICES,
        2.0,
    );
    let available_after = -(-available_before - moved);
    assert!(realized > 0.0 && available_after > 0.0);
    assert!((realized + available_after - available_before).abs() < 1e-9);
}

#[test]
fn an_unset_request_costs_nothing_and_raising_it_is_negative_realized() {
    let mut chain = Chain::default();
    chain.fold(&[change("app", &[], &[(Memory, "1Gi")])]);
    assert_eq!(chain.baseline["app"]["memory"], 0.0);
    let realized = chain.realized_monthly(PRICES, 1.0);
    assert!(
        (realized + 0.0042 * HOURS_PER_MONTH).abs() < 1e-9,
        "{realized}"
    );
}

#[test]
fn a_request_someone_replaced_after_kerf_leaves_the_chain_and_one_read_before_does_not() {
    let mut chain = Chain::default();
    chain.fold(&[change(
        "app",
        &[(Cpu, "312m"), (Memory, "512Mi")],
        &[(Cpu, "90m"), (Memory, "256Mi")],
    )]);
    let seen = |cpu: f64, memory: f64, at: i64| -> Observed {
        [(
            "app".to_string(),
            [
                ("cpu".to_string(), (cpu, at)),
                ("memory".to_string(), (memory, at)),
            ]
            .into(),
        )]
        .into()
    };
    let kerf_at = 1_000_000;
    // Read before kerf's change settled: the old values say nothing.
    assert!(!chain.keep_observed(&seen(312.0, 536_870_912.0, kerf_at), kerf_at));
    // kerf's values read back (memory 0.1 % off, as a quantity can round): still live.
    assert!(!chain.keep_observed(&seen(90.0, 268_700_000.0, kerf_at + 1), kerf_at));
    assert_eq!(chain.in_force["app"].len(), 2);
    // A person set the CPU to 200m: only memory is still kerf's.
    assert!(chain.keep_observed(&seen(200.0, 268_435_456.0, kerf_at + 1), kerf_at));
    assert_eq!(chain.in_force["app"].keys().collect::<Vec<_>>(), ["memory"]);
    assert_eq!(chain.baseline["app"].keys().collect::<Vec<_>>(), ["memory"]);
    let want = (0.25 * 0.0042) * HOURS_PER_MONTH * 3.0;
    assert!((chain.realized_monthly(PRICES, 3.0) - want).abs() < 1e-9);
    // And memory went back to 512Mi: nothing of kerf's change is live.
    assert!(chain.keep_observed(&seen(200.0, 536_870_912.0, kerf_at + 1), kerf_at));
    assert!(chain.is_empty(), "{chain:?}");
}
