//! The decision table: one row per reason the decision order can produce (and the
//! orders between them), over one workload fixture varied per row.

use serde_json::json;

use super::fixture::*;
use super::*;
use crate::agent::state::{Applied, ContainerValues};
use crate::wire::recommendation_feed::PendingApproval;
use crate::wire::summary::ResourceSummary;
type Row = (&'static str, fn(Fixture) -> Fixture, &'static [Reason]);

#[test]
fn each_row_of_the_decision_order_yields_its_reason() {
    use Reason::*;
    let rows: &[Row] = &[
        ("auto-patch applies", |f| f, &[RecommendationApplied]),
        (
            "hub unreachable, was auto-patch",
            |mut f| {
                f.situation.hub_reachable = false;
                f.state.mode = Some(f.rec.mode.clone());
                f
            },
            &[HubUnreachable],
        ),
        (
            "hub unreachable, never managed: nothing to say",
            |mut f| {
                f.situation.hub_reachable = false;
                f
            },
            &[],
        ),
        (
            "paused holds a workload with a change due",
            |mut f| {
                f.situation.pause = Some(PauseScope::Fleet);
                f
            },
            &[Paused],
        ),
        (
            "paused says nothing of its own for a workload in audit mode without an approval",
            |mut f| {
                f.situation.pause = Some(PauseScope::Cluster);
                f.policy(json!({"mode": {"cpu": "audit", "memory": "audit"}}))
            },
            &[ModeAudit],
        ),
        (
            "paused says nothing of its own for a workload with no change due (mode off)",
            |mut f| {
                f.situation.pause = Some(PauseScope::Fleet);
                f.policy(json!({"mode": {"cpu": "off", "memory": "off"}}))
            },
            &[ModeOff],
        ),
        (
            "cluster-wide freeze",
            |mut f| {
                f.situation.freeze = Some(ClusterFreeze {
                    reason: Some("release week".into()),
                    until_ms: Some(NOW + DAY),
                });
                f
            },
            &[FreezeWindow],
        ),
        (
            "policy freeze window (absolute)",
            |f| {
                f.policy(json!({"apply": {"freezeWindows": [
                    {"start": "2027-01-04T00:00:00Z", "end": "2027-01-05T00:00:00Z"}]}}))
            },
            &[FreezeWindow],
        ),
        (
            "policy freeze window (cron, Mondays 08:00 Berlin for 4h)",
            |f| {
                f.policy(json!({"apply": {"freezeWindows": [
                    {"cron": "0 8 * * 1", "duration": "4h", "timezone": "Europe/Berlin"}]}}))
            },
            &[FreezeWindow],
        ),
        (
            "a freeze window that is over does not hold",
            |f| {
                f.policy(json!({"apply": {"freezeWindows": [
                    {"start": "2027-01-01T00:00:00Z", "end": "2027-01-02T00:00:00Z"}]}}))
            },
            &[RecommendationApplied],
        ),
        (
            "mode off",
            |f| f.policy(json!({"mode": {"cpu": "off", "memory": "off"}})),
            &[ModeOff],
        ),
        (
            "mode audit",
            |f| f.policy(json!({"mode": {"cpu": "audit", "memory": "audit"}})),
            &[ModeAudit],
        ),
        (
            "off and audit: one per resource",
            |f| f.policy(json!({"mode": {"cpu": "off", "memory": "audit"}})),
            &[ModeOff, ModeAudit],
        ),
        (
            "audit with a pending approval applies once",
            |mut f| {
                f.rec.approval = Some(PendingApproval {
                    id: "ap-1".into(),
                    approved_by: "alice".into(),
                    approved_at: "2027-01-04T09:30:00Z".into(),
                });
                f.policy(json!({"mode": {"cpu": "audit", "memory": "audit"}}))
            },
            &[ApprovedOnce],
        ),
        (
            "CPU automatic, memory audit: CPU applies, memory is reported",
            |f| f.policy(json!({"mode": {"cpu": "auto-patch", "memory": "audit"}})),
            &[RecommendationApplied, ModeAudit],
        ),
        (
            "mode beats staleness",
            |mut f| {
                f.rec.recommendation_stale = true;
                f.policy(json!({"mode": {"cpu": "off", "memory": "off"}}))
            },
            &[ModeOff],
        ),
        (
            "stale recommendation",
            |mut f| {
                f.rec.recommendation_stale = true;
                f
            },
            &[RecommendationStale],
        ),
        (
            "within the policy's tolerance",
            |f| f.policy(json!({"guardrails": {"changeTolerance": 0.6}})),
            &[NoSignificantChange],
        ),
        (
            "learning period",
            |mut f| {
                f.rec.data_coverage.covered_seconds = Some(86_400);
                f
            },
            &[LearningPeriod],
        ),
        (
            "unknown coverage waits as a learning period",
            |mut f| {
                f.rec.data_coverage.covered_seconds = None;
                f
            },
            &[LearningPeriod],
        ),
        (
            "tolerance beats the learning period",
            |mut f| {
                f.rec.data_coverage.covered_seconds = Some(60);
                f.policy(json!({"guardrails": {"changeTolerance": 0.6}}))
            },
            &[NoSignificantChange],
        ),
        (
            "low confidence",
            |mut f| {
                f.rec.confidence = Some(40);
                f
            },
            &[LowConfidence],
        ),
        (
            "cooldown",
            |mut f| {
                f.state.last_change_ms = Some(NOW - 3_600_000);
                f
            },
            &[Cooldown],
        ),
        (
            "cooldown over",
            |mut f| {
                f.state.last_change_ms = Some(NOW - 25 * 3_600_000);
                f
            },
            &[RecommendationApplied],
        ),
        (
            "in place on a node with swap",
            |mut f| {
                f.nodes[0].swap_bytes = 1 << 30;
                f
            },
            &[UnsupportedNode],
        ),
        (
            "in place on a static CPU Manager node",
            |mut f| {
                f.nodes[0].managers.cpu_static = true;
                f
            },
            &[UnsupportedNode],
        ),
        (
            "in place on a static Memory Manager node",
            |mut f| {
                f.nodes[0].managers.memory_static = true;
                f
            },
            &[UnsupportedNode],
        ),
        (
            "a rollout does not care about the node",
            |mut f| {
                f.nodes[0].swap_bytes = 1 << 30;
                f.policy(json!({"apply": {"strategy": "rollout"}}))
            },
            &[RecommendationApplied],
        ),
        (
            "deferred outside its window (weekdays 02:00 Berlin for 2h)",
            |f| {
                f.policy(
                    json!({"apply": {"strategy": "deferred", "maintenanceWindows": [
                    {"cron": "0 2 * * 1-5", "duration": "2h", "timezone": "Europe/Berlin"}]}}),
                )
            },
            &[OutsideMaintenanceWindow],
        ),
        (
            "deferred inside its window (Mondays 10:00 UTC for 1h)",
            |f| {
                f.policy(
                    json!({"apply": {"strategy": "deferred", "maintenanceWindows": [
                    {"cron": "0 10 * * 1", "duration": "1h", "timezone": "UTC"}]}}),
                )
            },
            &[RecommendationApplied],
        ),
        (
            "deferred without a window stays queued",
            |f| f.policy(json!({"apply": {"strategy": "deferred"}})),
            &[OutsideMaintenanceWindow],
        ),
    ];
    for (name, setup, want) in rows {
        let d = setup(fixture()).decide();
        assert_eq!(reasons(&d), *want, "{name}: {d:?}");
    }
}

#[test]
fn findings_carry_the_details_the_contract_names() {
    let mut f = fixture();
    f.situation.pause = Some(PauseScope::Cluster);
    let d = f.decide();
    assert_eq!(finding(&d, Reason::Paused).details["pauseScope"], "cluster");

    let d = fixture()
        .policy(
            json!({"apply": {"strategy": "deferred", "maintenanceWindows": [
            {"cron": "0 2 * * 1-5", "duration": "2h", "timezone": "Europe/Berlin"}]}}),
        )
        .decide();
    // Monday 10:00 UTC → Tuesday 02:00 CET = 01:00 UTC.
    let f = finding(&d, Reason::OutsideMaintenanceWindow);
    assert_eq!(f.details["nextWindow"], "2027-01-05T01:00:00.000Z");
    match d {
        Decision::Hold { deferred, .. } => assert_eq!(
            deferred.flatten().map(|s| s.start_ms),
            crate::timestamp::parse_ms("2027-01-05T01:00:00.000Z")
        ),
        other => panic!("{other:?}"),
    }

    let mut f = fixture();
    f.state.last_change_ms = Some(NOW - 3_600_000);
    let d = f.decide();
    assert_eq!(
        finding(&d, Reason::Cooldown).details["until"],
        "2027-01-05T09:00:00.000Z"
    );

    let mut f = fixture();
    f.rec.data_coverage.covered_seconds = Some(2 * 86_400 + 3 * 3600);
    let d = f.decide();
    let lp = finding(&d, Reason::LearningPeriod);
    assert_eq!(lp.details["covered"], "2d 3h");
    assert_eq!(lp.details["learningPeriod"], "7d");

    let mut f = fixture();
    f.nodes[0].swap_bytes = 1;
    let d = f.decide();
    let un = finding(&d, Reason::UnsupportedNode);
    assert_eq!(
        (un.details["node"].as_str(), un.details["cause"].as_str()),
        ("n1", "swap")
    );

    let mut f = fixture();
    f.nodes[0].managers.memory_static = true;
    let d = f.decide();
    let un = finding(&d, Reason::UnsupportedNode);
    assert_eq!(un.details["cause"], "static Memory Manager policy");

    let d = fixture()
        .policy(json!({"mode": {"cpu": "auto-patch", "memory": "audit"}}))
        .decide();
    assert_eq!(
        finding(&d, Reason::ModeAudit).resources,
        [EventResource::Memory]
    );
    assert_eq!(plan(&d).resources, [EventResource::Cpu]);
}

#[test]
fn approved_once_names_the_approval_and_changes_only_what_the_mode_allows() {
    let mut f = fixture().policy(json!({"mode": {"cpu": "audit", "memory": "off"}}));
    f.rec.approval = Some(PendingApproval {
        id: "ap-1".into(),
        approved_by: "alice".into(),
        approved_at: "2027-01-04T09:30:00Z".into(),
    });
    let d = f.decide();
    let p = plan(&d);
    assert_eq!(p.reason, Reason::ApprovedOnce);
    assert_eq!(
        p.approval,
        Some(Approval {
            id: "ap-1".into(),
            approved_by: "alice".into()
        })
    );
    assert_eq!(p.resources, [EventResource::Cpu]);
    let c = &p.proposal.containers[0];
    assert_eq!(c.target.memory_request, c.current.memory_request);
    assert_eq!(reasons(&d), [Reason::ApprovedOnce, Reason::ModeOff]);
}

#[test]
fn values_round_up_to_millicores_and_mebibytes_and_never_below_the_recommendation() {
    let d = fixture().decide();
    let p = plan(&d);
    assert_eq!(p.strategy, Strategy::InPlace);
    assert_eq!(p.recommendation_id, "rec-1");
    assert_eq!(p.fallback_after_ms, 600_000);
    let c = &p.proposal.containers[0];
    assert_eq!(c.current, res(500, 1000, 512, 1024));
    assert_eq!(c.target, res(250, 499, 256, 511));
}

#[test]
fn limits_stay_above_requests_and_unset_values_stay_unset() {
    let mut f = fixture();
    // The engine suggests a limit below the request: the limit is raised to it.
    f.rec.containers[0].cpu = resource((500.0, 300.0), (1000.0, 200.0));
    // No memory limit today: none is added.
    f.live.containers[0].resources.memory_limit = None;
    for p in &mut f.pods {
        p.containers[0].resources.memory_limit = None;
    }
    let d = f.decide();
    let c = &plan(&d).proposal.containers[0];
    assert_eq!(
        (c.target.cpu_request, c.target.cpu_limit),
        (Some(300), Some(300))
    );
    assert_eq!(c.target.memory_limit, None);
}

#[test]
fn excluded_containers_are_left_alone() {
    let mut f = fixture();
    f.excluded = vec!["app".into()];
    assert_eq!(reasons(&f.decide()), [Reason::NoSignificantChange]);
}

/// The engine's answer when coverage is too sparse: no values, its reason beside them.
fn unsuggested(reason: &str) -> Option<ResourceSummary> {
    let mut r = resource((0.0, 0.0), (0.0, 0.0)).expect("a resource");
    r.requests = None;
    r.limits = None;
    r.no_action_reason = Some(reason.into());
    Some(r)
}

#[test]
fn a_recommendation_without_values_says_the_engines_reason_not_within_tolerance() {
    let mut f = fixture();
    f.rec.containers[0].cpu = unsuggested("sparse-coverage");
    f.rec.containers[0].memory = unsuggested("sparse-coverage");
    let d = f.decide();
    assert_eq!(reasons(&d), [Reason::NoSignificantChange]);
    let found = finding(&d, Reason::NoSignificantChange);
    assert_eq!(
        found.message,
        "the engine suggests no value (sparse-coverage), so there is nothing to apply"
    );
    assert_eq!(found.details["noActionReason"], "sparse-coverage");
    assert_eq!(found.details["unsuggested"], "app cpu, app memory");
}

#[test]
fn values_within_tolerance_beside_a_resource_without_one_name_both() {
    let mut f = fixture().policy(json!({"guardrails": {"changeTolerance": 0.9}}));
    f.rec.containers[0].memory = unsuggested("insufficient-history");
    let d = f.decide();
    let found = finding(&d, Reason::NoSignificantChange);
    assert_eq!(
        found.message,
        "every recommended value is within 90 % of the value in force; \
         the engine suggests no value for app memory (insufficient-history)"
    );
    assert_eq!(found.details["noActionReason"], "insufficient-history");

    let d = fixture()
        .policy(json!({"guardrails": {"changeTolerance": 0.9}}))
        .decide();
    let found = finding(&d, Reason::NoSignificantChange);
    assert_eq!(
        found.message,
        "every recommended value is within 90 % of the value in force"
    );
    assert!(found.details.is_empty(), "{:?}", found.details);
}

#[test]
fn values_kept_in_place_count_as_the_values_in_force() {
    let mut f = fixture();
    let before = res(500, 1000, 512, 1024);
    f.state.applied = Some(Applied {
        event_id: "e1".into(),
        strategy: Strategy::InPlace,
        recommendation_id: "rec-0".into(),
        at_ms: NOW - 2 * DAY,
        containers: vec![ContainerValues {
            name: "app".into(),
            role: Default::default(),
            from: before,
            to: res(250, 499, 256, 511),
        }],
        template: Some([("app".to_string(), before)].into_iter().collect()),
        later_pods_resized: 0,
    });
    assert_eq!(reasons(&f.decide()), [Reason::NoSignificantChange]);
    // The user's own rollout moved the template: its values are in force again.
    f.live.containers[0].resources = res(400, 800, 400, 800);
    assert_eq!(reasons(&f.decide()), [Reason::RecommendationApplied]);
}

#[test]
fn no_recommendation_is_nothing_to_decide() {
    let f = fixture();
    let pods: Vec<&Pod> = f.pods.iter().collect();
    let input = WorkloadInput {
        live: &f.live,
        pods: &pods,
        nodes: &f.nodes,
        hpas: &[],
        vpas: &[],
        pdbs: &[],
        admission: &f.admission,
        node_requests: &f.other_requests,
        throttling: &f.throttling,
        config: None,
        recommendation: None,
        state: &f.state,
    };
    assert_eq!(decide(&f.situation, &input), Decision::Idle);
}

#[test]
fn an_argo_rollout_rolls_out_unless_it_opts_in_to_in_place() {
    let mut f = fixture();
    f.live.key.kind = crate::cluster::WorkloadKind::Rollout;
    assert_eq!(
        plan(&f.decide()).strategy,
        Strategy::Rollout,
        "Argo owns its pods"
    );
    f.live
        .annotations
        .insert(super::ARGO_IN_PLACE.into(), "true".into());
    assert_eq!(plan(&f.decide()).strategy, Strategy::InPlace);
}
