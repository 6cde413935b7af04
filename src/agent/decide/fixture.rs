//! The workload fixture of the decision tests, varied per test.

use std::collections::{BTreeMap, HashMap};

use serde_json::json;

use super::*;
use crate::cluster::{
    Container, ContainerStatus, NodeManagers, PodPhase, PodRef, QosClass, ResizeState, Resources,
    UpdateStrategy, WorkloadKey, WorkloadKind,
};
use crate::policy::{resolve, PolicySpec, StoredPolicy, WorkloadRef};
use crate::wire::recommendation_feed::{DataCoverage, FeedWorkload};
use crate::wire::summary::{ResourceSummary, SettingValues};
use crate::wire::{ContainerSummary, QualityStatus};

pub(super) const MIB: u64 = 1 << 20;
/// 2027-01-04T10:00:00Z, a Monday.
pub(super) const NOW: i64 = 1_799_056_800_000;
pub(super) const DAY: i64 = 86_400_000;

pub(super) fn res(cpu_req: u64, cpu_lim: u64, mem_req: u64, mem_lim: u64) -> Resources {
    Resources {
        cpu_request: Some(cpu_req),
        cpu_limit: Some(cpu_lim),
        memory_request: Some(mem_req * MIB),
        memory_limit: Some(mem_lim * MIB),
    }
}

pub(super) fn container(r: Resources) -> Container {
    Container {
        name: "app".into(),
        image: "shop/web:1".into(),
        resources: r,
        ..Container::default()
    }
}

pub(super) fn setting(current: f64, suggested: f64) -> Option<SettingValues> {
    Some(SettingValues {
        current: Some(current),
        suggested,
        confidence: 85,
    })
}

pub(super) fn resource(req: (f64, f64), lim: (f64, f64)) -> Option<ResourceSummary> {
    Some(ResourceSummary {
        requests: setting(req.0, req.1),
        limits: setting(lim.0, lim.1),
        data_quality: QualityStatus::Available,
        quality_reasons: Vec::new(),
        quality_notes: Vec::new(),
        coverage: 1.0,
        no_action_reason: None,
        notices: Vec::new(),
    })
}

/// One workload and everything around it; rows change what they need.
pub(super) struct Fixture {
    pub(super) live: Workload,
    pub(super) pods: Vec<Pod>,
    pub(super) nodes: Vec<Node>,
    pub(super) policy: serde_json::Value,
    pub(super) rec: RecommendationItem,
    pub(super) state: WorkloadState,
    pub(super) situation: Situation,
    pub(super) excluded: Vec<String>,
    pub(super) hpas: Vec<crate::cluster::Hpa>,
    pub(super) vpas: Vec<crate::cluster::Vpa>,
    pub(super) pdbs: Vec<crate::cluster::Pdb>,
    pub(super) throttling: BTreeMap<String, f64>,
    pub(super) admission: crate::cluster::NamespaceAdmission,
    /// What other pods request on each node (the fixture's own pods are added).
    pub(super) other_requests: HashMap<String, (u64, u64)>,
}

pub(super) fn fixture() -> Fixture {
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
        node_selector: Default::default(),
        rollout: Default::default(),
        update_revision: None,
        created_ms: Some(NOW - 7 * DAY),
    };
    let pod = |name: &str| Pod {
        pod: PodRef::new("shop", name),
        uid: name.into(),
        owner: Some(key.clone()),
        controller: None,
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
        unschedulable: None,
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
            covered: Some("8d".into()),
            fraction: Some(1.0),
        },
        data_quality: QualityStatus::Available,
        notices: Vec::new(),
        containers: vec![ContainerSummary {
            role: Default::default(),
            name: "app".into(),
            cpu: resource((500.0, 249.2), (1000.0, 498.5)),
            memory: resource(
                (512.0 * MIB as f64, 255.3 * MIB as f64),
                (1024.0 * MIB as f64, 511.0 * MIB as f64),
            ),
        }],
        estimated_monthly_cost_delta: None,
        flags: Vec::new(),
        throttling: Vec::new(),
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
        hpas: Vec::new(),
        vpas: Vec::new(),
        pdbs: Vec::new(),
        throttling: BTreeMap::new(),
        admission: Default::default(),
        other_requests: HashMap::new(),
    }
}

pub(super) fn node(name: &str) -> Node {
    Node {
        name: name.into(),
        labels: BTreeMap::new(),
        ready: true,
        allocatable_cpu: 4000,
        allocatable_memory: 16 << 30,
        swap_bytes: 0,
        unschedulable: false,
        managers: NodeManagers::default(),
        daemon_endpoint: None,
    }
}

impl Fixture {
    pub(super) fn decide(&self) -> Decision {
        let spec: PolicySpec = serde_json::from_value(self.policy.clone()).expect("policy");
        let stored = StoredPolicy::hub(1, 1, spec);
        let mut r = resolve(&WorkloadRef::default(), &[stored], None, &json!({}), NOW);
        r.effective.excluded_containers = self.excluded.clone();
        let config = WorkloadConfig {
            workload_id: "w1".into(),
            namespace: "shop".into(),
            kind: "Deployment".into(),
            name: "web".into(),
            mode: r.effective.mode.clone(),
            policy_identity: "id-1".into(),
            policy: std::sync::Arc::new(r.effective),
        };
        let pods: Vec<&Pod> = self.pods.iter().collect();
        let hpas: Vec<&crate::cluster::Hpa> = self.hpas.iter().collect();
        let vpas: Vec<&crate::cluster::Vpa> = self.vpas.iter().collect();
        let pdbs: Vec<&crate::cluster::Pdb> = self.pdbs.iter().collect();
        let mut node_requests = self.other_requests.clone();
        for p in &self.pods {
            let (cpu, memory) = p.requests();
            let e = node_requests
                .entry(p.node.clone().unwrap_or_default())
                .or_default();
            e.0 += cpu;
            e.1 += memory;
        }
        let input = WorkloadInput {
            live: &self.live,
            pods: &pods,
            nodes: &self.nodes,
            hpas: &hpas,
            vpas: &vpas,
            pdbs: &pdbs,
            admission: &self.admission,
            node_requests: &node_requests,
            throttling: &self.throttling,
            config: Some(&config),
            recommendation: Some(&self.rec),
            state: &self.state,
        };
        decide(&self.situation, &input)
    }

    pub(super) fn policy(mut self, patch: serde_json::Value) -> Fixture {
        merge(&mut self.policy, patch);
        self
    }
}

pub(super) fn merge(base: &mut serde_json::Value, patch: serde_json::Value) {
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
pub(super) fn reasons(d: &Decision) -> Vec<Reason> {
    match d {
        Decision::Idle => Vec::new(),
        Decision::Hold { findings, .. } => findings.iter().map(|f| f.reason).collect(),
        Decision::Apply { plan, findings, .. } => std::iter::once(plan.reason)
            .chain(findings.iter().map(|f| f.reason))
            .collect(),
        Decision::Release { .. } => vec![Reason::ModeChanged],
    }
}

pub(super) fn plan(d: &Decision) -> &Plan {
    match d {
        Decision::Apply { plan, .. } => plan,
        other => panic!("expected a plan, got {other:?}"),
    }
}

pub(super) fn finding(d: &Decision, reason: Reason) -> &Finding {
    let list = match d {
        Decision::Hold { findings, .. } | Decision::Apply { findings, .. } => findings,
        Decision::Idle | Decision::Release { .. } => panic!("no findings in {d:?}"),
    };
    list.iter()
        .find(|f| f.reason == reason)
        .unwrap_or_else(|| panic!("no {reason:?} in {list:?}"))
}
