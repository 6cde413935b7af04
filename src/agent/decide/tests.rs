//! The decision table: one row per reason the decision order can produce (and the
//! orders between them), over one workload fixture varied per row.

use std::collections::BTreeMap;

use serde_json::json;

use super::*;
use crate::agent::state::{Applied, ContainerValues};
use crate::cluster::{
    Container, ContainerStatus, NodeManagers, PodPhase, PodRef, QosClass, ResizeState, Resources,
    UpdateStrategy, WorkloadKey, WorkloadKind,
};
use crate::policy::{resolve, PolicySpec, StoredPolicy, WorkloadRef};
use crate::wire::recommendation_feed::{DataCoverage, FeedWorkload, PendingApproval};
use crate::wire::summary::{ResourceSummary, SettingValues};
use crate::wire::{ContainerSummary, QualityStatus};

const MIB: u64 = 1 << 20;
/// 2027-01-04T10:00:00Z, a Monday.
const NOW: i64 = 1_799_056_800_000;
const DAY: i64 = 86_400_000;

fn res(cpu_req: u64, cpu_lim: u64, mem_req: u64, mem_lim: u64) -> Resources {
    Resources {
        cpu_request: Some(cpu_req),
        cpu_limit: Some(cpu_lim),
        memory_request: Some(mem_req * MIB),
        memory_limit: Some(mem_lim * MIB),
    }
}

fn container(r: Resources) -> Container {
    Container {
        name: "app".into(),
        image: "shop/web:1".into(),
        resources: r,
        ..Container::default()
    }
}

fn setting(current: f64, suggested: f64) -> Option<SettingValues> {
    Some(SettingValues {
        current: Some(current),
        suggested,
        confidence: 85,
    })
}

fn resource(req: (f64, f64), lim: (f64, f64)) -> Option<ResourceSummary> {
    Some(ResourceSummary {
        requests: setting(req.0, req.1),
        limits: setting(lim.0, lim.1),
        data_quality: QualityStatus::Available,
        coverage: 1.0,
        no_action_reason: None,
        notices: Vec::new(),
    })
}

/// One workload and everything around it; rows change what they need.
struct Fixture {
    live: Workload,
    pods: Vec<Pod>,
    nodes: Vec<Node>,
    policy: serde_json::Value,
    rec: RecommendationItem,
    state: WorkloadState,
    situation: Situation,
    excluded: Vec<String>,
}

fn fixture() -> Fixture {
    let key = WorkloadKey::new("shop", WorkloadKind::Deployment, "web");
    let template = res(500, 1000, 512, 1024);
    let live = Workload {
        key: key.clone(),
        uid: "u1".into(),
        generation: 1,
        observed_generation: Some(1),
        replicas: 2,
        ready_replicas: 2,
        strategy: UpdateStrategy::RollingUpdate {
            max_surge: Some("25%".into()),
            max_unavailable: Some("25%".into()),
        },
        labels: BTreeMap::new(),
        annotations: BTreeMap::new(),
        selector: BTreeMap::new(),
        containers: vec![container(template)],
        resource_owners: Vec::new(),
        update_revision: None,
    };
    let pod = |name: &str| Pod {
        pod: PodRef::new("shop", name),
        uid: name.into(),
        owner: Some(key.clone()),
        node: Some("n1".into()),
        phase: PodPhase::Running,
        ready: true,
        qos: Some(QosClass::Burstable),
        generation: 1,
        observed_generation: Some(1),
        labels: BTreeMap::new(),
        revision: Some("r1".into()),
        containers: vec![container(template)],
        statuses: vec![ContainerStatus {
            name: "app".into(),
            ready: true,
            restart_count: 0,
            resources: Some(template),
            allocated: Some(template),
            last_termination: None,
        }],
        resize: ResizeState::Settled,
        created_ms: Some(NOW - DAY),
        deleting: false,
    };
    let rec = RecommendationItem {
        recommendation_id: "rec-1".into(),
        workload_id: "w1".into(),
        workload: FeedWorkload {
            namespace: "shop".into(),
            kind: "Deployment".into(),
            name: "web".into(),
            uid: "u1".into(),
        },
        created_at: "2027-01-04T09:00:00Z".into(),
        run_id: "run-1".into(),
        policy_version: "p1".into(),
        settings_identity: "id-1".into(),
        policy_identity: "id-1".into(),
        recommendation_stale: false,
        mode: crate::policy::EffectiveMode {
            cpu: Mode::AutoPatch,
            memory: Mode::AutoPatch,
        },
        approval: None,
        stale: false,
        has_changes: true,
        confidence: Some(85),
        coverage: Some(1.0),
        data_coverage: DataCoverage {
            covered_seconds: Some(8 * 86_400),
            fraction: Some(1.0),
        },
        data_quality: QualityStatus::Available,
        notices: Vec::new(),
        containers: vec![ContainerSummary {
            name: "app".into(),
            cpu: resource((500.0, 249.2), (1000.0, 498.5)),
            memory: resource(
                (512.0 * MIB as f64, 255.3 * MIB as f64),
                (1024.0 * MIB as f64, 511.0 * MIB as f64),
            ),
        }],
        estimated_monthly_cost_delta: None,
    };
    Fixture {
        live,
        pods: vec![pod("web-1"), pod("web-2")],
        nodes: vec![node("n1")],
        policy: json!({"name": "auto", "mode": {"cpu": "auto-patch", "memory": "auto-patch"}}),
        rec,
        state: WorkloadState::default(),
        situation: Situation {
            now_ms: NOW,
            hub_reachable: true,
            pause: None,
            freeze: None,
            default_tolerance: 0.05,
        },
        excluded: Vec::new(),
    }
}

fn node(name: &str) -> Node {
    Node {
        name: name.into(),
        labels: BTreeMap::new(),
        ready: true,
        allocatable_cpu: 4000,
        allocatable_memory: 16 << 30,
        swap_bytes: 0,
        managers: NodeManagers::default(),
    }
}

impl Fixture {
    fn decide(&self) -> Decision {
        let spec: PolicySpec = serde_json::from_value(self.policy.clone()).expect("policy");
        let stored = StoredPolicy {
            id: 1,
            version: 1,
            spec,
        };
        let mut r = resolve(&WorkloadRef::default(), &[stored], None, &json!({}), NOW);
        r.effective.excluded_containers = self.excluded.clone();
        let config = WorkloadConfig {
            workload_id: "w1".into(),
            namespace: "shop".into(),
            kind: "Deployment".into(),
            name: "web".into(),
            mode: r.effective.mode.clone(),
            policy_identity: "id-1".into(),
            policy: r.effective,
        };
        let pods: Vec<&Pod> = self.pods.iter().collect();
        let input = WorkloadInput {
            live: &self.live,
            pods: &pods,
            nodes: &self.nodes,
            config: Some(&config),
            recommendation: Some(&self.rec),
            state: &self.state,
        };
        decide(&self.situation, &input)
    }

    fn policy(mut self, patch: serde_json::Value) -> Fixture {
        merge(&mut self.policy, patch);
        self
    }
}

fn merge(base: &mut serde_json::Value, patch: serde_json::Value) {
    match (base, patch) {
        (serde_json::Value::Object(b), serde_json::Value::Object(p)) => {
            for (k, v) in p {
                merge(b.entry(k).or_insert(serde_json::Value::Null), v);
            }
        }
        (b, p) => *b = p,
    }
}

/// The reasons a decision reports, first the one that decided.
fn reasons(d: &Decision) -> Vec<Reason> {
    match d {
        Decision::Idle => Vec::new(),
        Decision::Hold { findings, .. } => findings.iter().map(|f| f.reason).collect(),
        Decision::Apply { plan, findings, .. } => std::iter::once(plan.reason)
            .chain(findings.iter().map(|f| f.reason))
            .collect(),
    }
}

fn plan(d: &Decision) -> &Plan {
    match d {
        Decision::Apply { plan, .. } => plan,
        other => panic!("expected a plan, got {other:?}"),
    }
}

fn finding(d: &Decision, reason: Reason) -> &Finding {
    let list = match d {
        Decision::Hold { findings, .. } | Decision::Apply { findings, .. } => findings,
        Decision::Idle => panic!("idle"),
    };
    list.iter()
        .find(|f| f.reason == reason)
        .unwrap_or_else(|| panic!("no {reason:?} in {list:?}"))
}

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
            "paused beats everything after it, even mode off",
            |mut f| {
                f.situation.pause = Some(PauseScope::Fleet);
                f.policy(json!({"mode": {"cpu": "off", "memory": "off"}}))
            },
            &[Paused],
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
        config: None,
        recommendation: None,
        state: &f.state,
    };
    assert_eq!(decide(&f.situation, &input), Decision::Idle);
}

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
