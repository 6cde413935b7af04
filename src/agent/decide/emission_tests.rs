//! Emit only on change, over the decision fixture's proposal.

use super::fixture::*;
use super::*;
#[test]
fn emission_reports_once_until_values_move_or_the_policy_changes() {
    use super::emission::select;
    let f = fixture();
    let d = f.decide();
    let Decision::Apply { values, .. } = d else {
        panic!()
    };
    let cooldown = Finding::new(Reason::Cooldown, "x");
    let first = select(&[], std::slice::from_ref(&cooldown), &values, "id-1", 0.05);
    assert_eq!(first.emit, [0]);
    let mut memory = first.next;
    for _ in 0..100 {
        let again = select(
            &memory,
            std::slice::from_ref(&cooldown),
            &values,
            "id-1",
            0.05,
        );
        assert!(again.emit.is_empty());
        memory = again.next;
    }
    // A new recommendation id with the same values: still quiet. Values that moved 3 %
    // twice stay quiet against the baseline of 3 %... then 6 % counts.
    let nudge = |pct: f64| -> Vec<ProposedValue> {
        values
            .iter()
            .map(|v| ProposedValue {
                value: (v.value as f64 * (1.0 + pct)) as u64,
                ..v.clone()
            })
            .collect()
    };
    assert!(select(
        &memory,
        std::slice::from_ref(&cooldown),
        &nudge(0.03),
        "id-1",
        0.05
    )
    .emit
    .is_empty());
    assert_eq!(
        select(
            &memory,
            std::slice::from_ref(&cooldown),
            &nudge(0.06),
            "id-1",
            0.05
        )
        .emit,
        [0]
    );
    // A policy change reports it again, once.
    let changed = select(
        &memory,
        std::slice::from_ref(&cooldown),
        &values,
        "id-2",
        0.05,
    );
    assert_eq!(changed.emit, [0]);
    assert!(select(
        &changed.next,
        std::slice::from_ref(&cooldown),
        &values,
        "id-2",
        0.05
    )
    .emit
    .is_empty());
    // Another reason replaces it; when the first comes back it is new again.
    let lc = Finding::new(Reason::LowConfidence, "y");
    let other = select(&memory, std::slice::from_ref(&lc), &values, "id-1", 0.05);
    assert_eq!(other.emit, [0]);
    assert_eq!(
        select(&other.next, &[cooldown], &values, "id-1", 0.05).emit,
        [0]
    );
}

#[test]
fn per_resource_findings_compare_only_their_resource() {
    use super::emission::select;
    let Decision::Apply { values, .. } = fixture().decide() else {
        panic!()
    };
    let memory_block = Finding::new(Reason::ModeAudit, "m").on(&[EventResource::Memory]);
    let first = select(
        &[],
        std::slice::from_ref(&memory_block),
        &values,
        "id-1",
        0.05,
    );
    let cpu_moved: Vec<ProposedValue> = values
        .iter()
        .map(|v| match v.field {
            crate::cluster::ResourceField::CpuRequest => ProposedValue {
                value: v.value * 2,
                ..v.clone()
            },
            _ => v.clone(),
        })
        .collect();
    assert!(
        select(&first.next, &[memory_block], &cpu_moved, "id-1", 0.05)
            .emit
            .is_empty()
    );
}
