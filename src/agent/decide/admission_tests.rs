//! The checks before a change: `ResourceQuota`, `LimitRange`, `NoFittingNode`.

use serde_json::json;

use super::fixture::*;
use crate::cluster::{
    CpuMemory, LimitKind, LimitRange as Range, LimitRangeItem, QuotaAmounts,
    ResourceQuota as Quota, UpdateStrategy, WorkloadKind,
};
use crate::wire::Reason;

/// The recommendation grows the pod: CPU 500m → 1500m (limit 1 → 3), memory 512 → 1024
/// MiB (limit 1024 → 2048 MiB).
fn grow(mut f: Fixture) -> Fixture {
    let c = &mut f.rec.containers[0];
    c.cpu = resource((500.0, 1500.0), (1000.0, 3000.0));
    c.memory = resource(
        (512.0 * MIB as f64, 1024.0 * MIB as f64),
        (1024.0 * MIB as f64, 2048.0 * MIB as f64),
    );
    f
}

fn rollout(f: Fixture) -> Fixture {
    f.policy(json!({"apply": {"strategy": "rollout"}}))
}

fn quota(hard_cpu: u64, used_cpu: u64) -> Quota {
    Quota {
        namespace: "shop".into(),
        name: "team".into(),
        hard: QuotaAmounts {
            requests_cpu: Some(hard_cpu),
            ..QuotaAmounts::default()
        },
        used: Some(QuotaAmounts {
            requests_cpu: Some(used_cpu),
            ..QuotaAmounts::default()
        }),
        scopes: Vec::new(),
    }
}

fn with_quota(mut f: Fixture, q: Quota) -> Fixture {
    f.admission.quotas.push(q);
    f
}

fn with_rule(mut f: Fixture, kind: LimitKind, edit: fn(&mut LimitRangeItem)) -> Fixture {
    let mut item = LimitRangeItem {
        kind,
        min: CpuMemory::default(),
        max: CpuMemory::default(),
        max_ratio_milli: CpuMemory::default(),
    };
    edit(&mut item);
    f.admission.limit_ranges.push(Range {
        namespace: "shop".into(),
        name: "bounds".into(),
        items: vec![item],
    });
    f
}

fn decided(f: Fixture) -> Vec<Reason> {
    reasons(&f.decide())
}

#[test]
fn a_quota_holds_a_change_it_has_no_room_for_and_counts_a_rollouts_surge() {
    use Reason::*;
    // Two pods grow by 1000m each: 2000m of room is enough in place.
    assert_eq!(
        decided(with_quota(grow(fixture()), quota(10_000, 8_000))),
        [RecommendationApplied]
    );
    let d = with_quota(grow(fixture()), quota(10_000, 8_500)).decide();
    assert_eq!(reasons(&d), [ResourceQuota]);
    let f = finding(&d, ResourceQuota);
    assert_eq!(f.details["resourceQuota"], "team");
    assert_eq!(f.details["resource"], "requests.cpu");
    assert_eq!(f.details["needed"], "2");
    assert_eq!(f.details["available"], "1500m");
    assert!(f.message.contains("2 pods × 1 more"), "{}", f.message);
    // A rollout with the default 25 % surge (one pod of two) also needs the new pod.
    let d = with_quota(rollout(grow(fixture())), quota(10_000, 8_000)).decide();
    assert_eq!(reasons(&d), [ResourceQuota]);
    let f = finding(&d, ResourceQuota);
    assert_eq!(f.details["needed"], "3500m");
    assert!(
        f.message.contains("1 new pod of 1500m during the rollout"),
        "{}",
        f.message
    );
    assert_eq!(
        decided(with_quota(rollout(grow(fixture())), quota(11_500, 8_000))),
        [RecommendationApplied]
    );
    // A rollout without surge (Recreate) needs only the growth.
    let mut f = with_quota(rollout(grow(fixture())), quota(10_000, 8_000));
    f.live.strategy = UpdateStrategy::Recreate;
    assert_eq!(decided(f), [RecommendationApplied]);
}

#[test]
fn a_quota_is_not_read_where_it_cannot_be_judged_and_never_holds_a_shrink_in_place() {
    use Reason::*;
    // Full, but the fixture's recommendation lowers both resources.
    assert_eq!(
        decided(with_quota(fixture(), quota(1_000, 1_000))),
        [RecommendationApplied]
    );
    // Over its hard limit already (lowered under the namespace): growth is held.
    assert_eq!(
        decided(with_quota(grow(fixture()), quota(1_000, 1_500))),
        [ResourceQuota]
    );
    let mut q = quota(1_000, 1_000);
    q.used = None; // the quota controller has not counted yet
    assert_eq!(
        decided(with_quota(grow(fixture()), q)),
        [RecommendationApplied]
    );
    let mut q = quota(1_000, 1_000);
    q.scopes = vec!["PriorityClass".into()];
    assert_eq!(
        decided(with_quota(grow(fixture()), q)),
        [RecommendationApplied]
    );
    let mut q = quota(1_000, 1_000);
    q.scopes = vec!["NotBestEffort".into()];
    assert_eq!(decided(with_quota(grow(fixture()), q)), [ResourceQuota]);
    // A quota on pods alone: a surging rollout needs room for one more pod.
    let pods = |hard, used| Quota {
        hard: QuotaAmounts {
            pods: Some(hard),
            ..QuotaAmounts::default()
        },
        used: Some(QuotaAmounts {
            pods: Some(used),
            ..QuotaAmounts::default()
        }),
        ..quota(0, 0)
    };
    assert_eq!(
        decided(with_quota(rollout(fixture()), pods(2, 2))),
        [ResourceQuota]
    );
    assert_eq!(
        decided(with_quota(rollout(fixture()), pods(3, 2))),
        [RecommendationApplied]
    );
    assert_eq!(
        decided(with_quota(fixture(), pods(2, 2))),
        [RecommendationApplied]
    );
}

#[test]
fn a_limit_range_holds_values_it_would_refuse() {
    use Reason::*;
    type Case = (
        &'static str,
        LimitKind,
        fn(&mut LimitRangeItem),
        Option<&'static str>,
    );
    let cases: &[Case] = &[
        (
            "a CPU max under the new limit",
            LimitKind::Container,
            |i| i.max.cpu = Some(2_000),
            Some("limits.cpu"),
        ),
        (
            "a CPU max above it",
            LimitKind::Container,
            |i| i.max.cpu = Some(3_000),
            None,
        ),
        (
            "a memory min over the new request",
            LimitKind::Container,
            |i| i.min.memory = Some(1536 * MIB),
            Some("requests.memory"),
        ),
        (
            "a ratio the new values break",
            LimitKind::Container,
            |i| i.max_ratio_milli.cpu = Some(1_500),
            Some("limits.cpu/requests.cpu"),
        ),
        (
            "a ratio they keep",
            LimitKind::Container,
            |i| i.max_ratio_milli.cpu = Some(2_000),
            None,
        ),
        (
            "a pod max under the pod's sum",
            LimitKind::Pod,
            |i| i.max.memory = Some(1536 * MIB),
            Some("limits.memory"),
        ),
    ];
    for (what, kind, edit, field) in cases {
        let d = with_rule(grow(fixture()), *kind, *edit).decide();
        match field {
            Some(field) => {
                assert_eq!(reasons(&d), [LimitRange], "{what}");
                let f = finding(&d, LimitRange);
                assert_eq!(f.details["limitRange"], "bounds", "{what}");
                assert_eq!(f.details["resource"], *field, "{what}: {}", f.message);
            }
            None => assert_eq!(reasons(&d), [RecommendationApplied], "{what}"),
        }
    }
    // A shrink below a minimum is refused too.
    let d = with_rule(fixture(), LimitKind::Container, |i| i.min.cpu = Some(400)).decide();
    assert_eq!(reasons(&d), [LimitRange]);
    assert!(finding(&d, LimitRange).message.contains("min 400m"));
}

#[test]
fn a_pod_no_node_has_room_for_is_not_started() {
    use Reason::*;
    // n1 (4 CPU) holds the two pods (1 CPU) and 2.5 CPU of others: 0.5 CPU of room.
    let busy = |mut f: Fixture| {
        f.other_requests.insert("n1".into(), (2_500, 0));
        f
    };
    // In place, each pod's own 500m comes back: 1 CPU of room, 1.5 needed.
    let d = busy(grow(fixture())).decide();
    assert_eq!(reasons(&d), [NoFittingNode]);
    let f = finding(&d, NoFittingNode);
    assert_eq!(f.details["podRequests"], "1500m CPU, 1Gi");
    assert!(f.message.contains("1 CPU (n1)"), "{}", f.message);
    // A second node with room: the pod can go there.
    let mut f = busy(grow(fixture()));
    f.nodes.push(node("n2"));
    assert_eq!(decided(f), [RecommendationApplied]);
    // ... unless it is cordoned or not ready.
    let mut f = busy(grow(fixture()));
    let mut n2 = node("n2");
    n2.unschedulable = true;
    f.nodes.push(n2);
    assert_eq!(decided(f), [NoFittingNode]);
    // A surging rollout keeps the old pods while the new one starts: only 0.5 CPU.
    let mut f = rollout(busy(fixture()));
    f.other_requests.insert("n1".into(), (3_000, 0));
    assert_eq!(decided(f), [RecommendationApplied], "a shrink always fits");
    let mut f = rollout(busy(grow(fixture())));
    f.other_requests.insert("n1".into(), (1_500, 0));
    assert_eq!(decided(f), [RecommendationApplied], "1.5 CPU of room");
    let mut f = rollout(busy(grow(fixture())));
    f.other_requests.insert("n1".into(), (1_600, 0));
    assert_eq!(decided(f), [NoFittingNode]);
    // A DaemonSet's pod stays on its node.
    let mut f = busy(grow(fixture()));
    f.live.key.kind = WorkloadKind::DaemonSet;
    f.nodes.push(node("n2"));
    let d = f.decide();
    assert_eq!(reasons(&d), [NoFittingNode]);
    assert_eq!(finding(&d, NoFittingNode).details["node"], "n1");
}

#[test]
fn a_change_waiting_for_approval_says_it_would_be_held() {
    use Reason::*;
    let audit = |f: Fixture| f.policy(json!({"mode": {"cpu": "audit", "memory": "audit"}}));
    let d = with_quota(audit(grow(fixture())), quota(10_000, 8_500)).decide();
    assert_eq!(reasons(&d), [ModeAudit, ResourceQuota]);
    let f = finding(&d, ResourceQuota);
    assert!(
        f.message
            .starts_with("if approved now, the change would be held: the ResourceQuota team"),
        "{}",
        f.message
    );
    // With room, only the audit skip.
    assert_eq!(
        decided(with_quota(audit(grow(fixture())), quota(10_000, 8_000))),
        [ModeAudit]
    );
    // Off is not waiting for anyone.
    let off = with_quota(grow(fixture()), quota(10_000, 8_500))
        .policy(json!({"mode": {"cpu": "off", "memory": "off"}}));
    assert_eq!(decided(off), [ModeOff]);
}
