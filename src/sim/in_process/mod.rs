//! Face 2: the simulated world as an in-process cluster (`kerf demo`, and the
//! conformance suite's second face). It implements [`Cluster`] with the semantics the
//! real API server and kubelet showed in the conformance suite: the resize refusals
//! (limit removal, QoS change, larger than the node), server-side-apply ownership and
//! its 409 conflicts, Eviction API refusals by PodDisruptionBudgets, and the kubelet's
//! Deferred/Infeasible verdicts, OOM kills and throttling, and the kubelet's
//! `/metrics/cadvisor` page (the api-server face's, read with the agent's parser). Time
//! comes from the hub's
//! [`Clock`]; every call first brings the world up to the clock's now.

pub mod admission;
mod control;
mod demo;
mod policies;
mod ssa;
mod writes;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::clock::Clock;
use crate::cluster::{
    Cluster, ClusterError, ClusterEvent, Container, CpuCounters, Hpa, HpaMetric, Node, ObjectRef,
    OwnerRef, Pdb, Pod, PodRef, Record, RecordedEvent, ReplicaSet, Resources, Snapshot,
    UpdateStrategy, UsageSample, View, Workload, WorkloadKey, WorkloadKind, FIELD_MANAGER,
};
use crate::sim::kubelet::{ContainerRun, Usage};

/// A Deployment to create in the simulated cluster.
#[derive(Debug, Clone)]
pub struct DeploymentSpec {
    pub namespace: String,
    pub name: String,
    pub replicas: i32,
    pub containers: Vec<Container>,
    /// What each container uses, by container name (missing: idle).
    pub usage: BTreeMap<String, Usage>,
}

/// Any workload to create: a Deployment, a StatefulSet (pods `<name>-<ordinal>`; with
/// `OnDelete` its pods keep their template until deleted or evicted) or a DaemonSet
/// (one pod per node; `replicas` is ignored).
#[derive(Debug, Clone)]
pub struct WorkloadSpec {
    pub kind: WorkloadKind,
    pub namespace: String,
    pub name: String,
    pub replicas: i32,
    pub strategy: UpdateStrategy,
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    pub containers: Vec<Container>,
    pub usage: BTreeMap<String, Usage>,
}

impl From<DeploymentSpec> for WorkloadSpec {
    fn from(d: DeploymentSpec) -> WorkloadSpec {
        WorkloadSpec {
            kind: WorkloadKind::Deployment,
            namespace: d.namespace,
            name: d.name,
            replicas: d.replicas,
            strategy: UpdateStrategy::RollingUpdate {
                max_surge: Some("25%".into()),
                max_unavailable: Some("25%".into()),
            },
            labels: BTreeMap::new(),
            annotations: BTreeMap::new(),
            containers: d.containers,
            usage: d.usage,
        }
    }
}

struct SimWorkload {
    /// Shared with the snapshots that read it; a write copies it only while one does.
    workload: Arc<Workload>,
    usage: BTreeMap<String, Usage>,
    /// Template revision the current pods are made from.
    revision: String,
    /// When its rollout's counts last moved (its progress deadline counts from then).
    progress_since_ms: i64,
    /// Every revision with when it was first made, oldest first (a Deployment's
    /// ReplicaSets, `<name>-<revision>`; the last [`REVISION_HISTORY`] are kept).
    revisions: Vec<(String, i64)>,
}

/// ReplicaSets a Deployment keeps (its `revisionHistoryLimit`, 10, and the current one).
const REVISION_HISTORY: usize = 11;

struct SimPod {
    /// Shared with the snapshots that read it, as the workload is.
    pod: Arc<Pod>,
    runs: Vec<ContainerRun>,
    /// Admitted requests per container.
    allocated: Vec<Resources>,
    /// An accepted resize, actuated on the next step.
    actuating: Option<Vec<Resources>>,
}

struct State {
    seed: u64,
    now_ms: i64,
    serial: u64,
    nodes: Vec<Node>,
    workloads: BTreeMap<WorkloadKey, SimWorkload>,
    pods: BTreeMap<PodRef, SimPod>,
    pdbs: Vec<Pdb>,
    hpas: Vec<Hpa>,
    events: Vec<RecordedEvent>,
    records: BTreeMap<(String, String), Record>,
    /// Where resource changes are told (the demo datasource reads them), as which cluster.
    live: Option<(String, crate::sim::live::Live)>,
    quotas: Vec<crate::cluster::ResourceQuota>,
    startups: BTreeMap<WorkloadKey, admission::Startup>,
    /// RightsizingPolicy objects by name.
    policies: BTreeMap<String, crate::cluster::PolicyObject>,
    /// VerticalPodAutoscalers.
    vpas: Vec<crate::cluster::Vpa>,
}

/// What the in-process cluster answers for its version.
pub const SERVER_VERSION: &str = "v1.36.3-kerf-sim";

/// The in-process cluster. Clones share the world; each writes as its field manager.
#[derive(Clone)]
pub struct SimCluster {
    state: Arc<Mutex<State>>,
    clock: Arc<dyn Clock>,
    manager: String,
}

impl SimCluster {
    pub fn new(seed: u64, clock: Arc<dyn Clock>, nodes: Vec<Node>) -> SimCluster {
        let now_ms = clock.now_ms();
        SimCluster {
            state: Arc::new(Mutex::new(State {
                seed,
                now_ms,
                serial: 0,
                nodes,
                workloads: BTreeMap::new(),
                pods: BTreeMap::new(),
                pdbs: Vec::new(),
                hpas: Vec::new(),
                events: Vec::new(),
                records: BTreeMap::new(),
                live: None,
                quotas: Vec::new(),
                startups: BTreeMap::new(),
                policies: BTreeMap::new(),
                vpas: Vec::new(),
            })),
            clock,
            manager: FIELD_MANAGER.into(),
        }
    }

    /// The same world, writing as another field manager (a GitOps tool in tests).
    pub fn with_field_manager(&self, manager: &str) -> SimCluster {
        SimCluster {
            manager: manager.into(),
            ..self.clone()
        }
    }

    /// The world brought up to the clock's now.
    fn world(&self) -> MutexGuard<'_, State> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let now = self.clock.now_ms();
        if now > state.now_ms {
            state.now_ms = now;
            state.step();
        }
        state
    }

    /// Creates a Deployment (as a plain create by `creator`, who then owns the
    /// resource fields it set, operation `Update`).
    pub fn create_deployment(
        &self,
        spec: DeploymentSpec,
        creator: &str,
    ) -> Result<WorkloadKey, ClusterError> {
        self.create_workload(spec.into(), creator)
    }

    /// Creates any workload (a plain create by `creator`, as `create_deployment`).
    pub fn create_workload(
        &self,
        spec: WorkloadSpec,
        creator: &str,
    ) -> Result<WorkloadKey, ClusterError> {
        let mut keys = self.create_workloads(vec![spec], creator)?;
        Ok(keys.remove(0))
    }

    /// Creates many workloads, then lets the controllers run once (a fleet at once).
    pub fn create_workloads(
        &self,
        specs: Vec<WorkloadSpec>,
        creator: &str,
    ) -> Result<Vec<WorkloadKey>, ClusterError> {
        let mut w = self.world();
        let keys = specs
            .into_iter()
            .map(|spec| w.create_workload(spec, creator))
            .collect::<Result<Vec<_>, _>>()?;
        w.step();
        Ok(keys)
    }

    /// Sets a workload's replicas (a scale by its owner); new pods use its template.
    pub fn scale(&self, key: &WorkloadKey, replicas: i32) -> Result<(), ClusterError> {
        let mut w = self.world();
        let sim = w
            .workloads
            .get_mut(key)
            .ok_or_else(|| ClusterError::api(404, "NotFound", format!("{key} not found")))?;
        Arc::make_mut(&mut sim.workload).replicas = replicas;
        w.step();
        Ok(())
    }

    /// Deletes a pod (a crash of its node, a drain); its controller replaces it.
    pub fn delete_pod(&self, pod: &PodRef) {
        let mut w = self.world();
        w.pods.remove(pod);
        w.step();
    }

    /// Replaces a workload's template resources as another manager's plain update
    /// (the user's own rollout).
    pub fn update_template(
        &self,
        key: &WorkloadKey,
        containers: &[(String, Resources)],
    ) -> Result<(), ClusterError> {
        let mut w = self.world();
        let sim = w
            .workloads
            .get_mut(key)
            .ok_or_else(|| ClusterError::api(404, "NotFound", format!("{key} not found")))?;
        for (name, r) in containers {
            let workload = Arc::make_mut(&mut sim.workload);
            if let Some(c) = workload.containers.iter_mut().find(|c| &c.name == name) {
                c.resources = *r;
            }
        }
        Arc::make_mut(&mut sim.workload).generation += 1;
        w.step();
        Ok(())
    }

    /// Creates a PodDisruptionBudget over pods labelled `app=<app>`.
    pub fn create_pdb(&self, namespace: &str, name: &str, app: &str, min_available: i32) {
        let mut w = self.world();
        w.pdbs.push(Pdb {
            namespace: namespace.into(),
            name: name.into(),
            selector: [("app".to_string(), app.to_string())].into_iter().collect(),
            min_available: Some(min_available.to_string()),
            max_unavailable: None,
            disruptions_allowed: 0,
            current_healthy: 0,
        });
        w.step();
    }

    /// Creates a HorizontalPodAutoscaler of `target` (a plain create: its metrics are
    /// owned by no server-side-apply manager).
    pub fn create_hpa(&self, name: &str, target: &WorkloadKey, metrics: Vec<HpaMetric>) {
        let mut w = self.world();
        w.hpas.push(Hpa {
            namespace: target.namespace.clone(),
            name: name.into(),
            target: Some(target.clone()),
            min_replicas: 1,
            max_replicas: 10,
            metrics,
            metric_managers: Vec::new(),
            controller: None,
        });
    }

    /// Brings the world to the clock's now (controllers and kubelet run).
    pub fn step(&self) {
        drop(self.world());
    }
}

/// The in-process cluster's live view: every read is the world at the clock's now, so
/// there is nothing to watch; `changed` waits a short moment for the world to move.
pub struct SimView(SimCluster);

impl View for SimView {
    fn snapshot(&self) -> Snapshot {
        self.0.snapshot_now(&[])
    }

    async fn changed(&self, at_most: std::time::Duration) {
        tokio::time::sleep(at_most.min(std::time::Duration::from_millis(100))).await;
    }
}

impl SimCluster {
    fn snapshot_now(&self, namespaces: &[String]) -> Snapshot {
        let w = self.world();
        let inside = |ns: &str| namespaces.is_empty() || namespaces.iter().any(|n| n == ns);
        Snapshot {
            workloads: w
                .workloads
                .values()
                .filter(|s| inside(&s.workload.key.namespace))
                .map(|s| s.workload.clone())
                .collect(),
            pods: w
                .pods
                .values()
                .filter(|p| inside(&p.pod.pod.namespace))
                .map(|p| p.pod.clone())
                .collect(),
            nodes: w.nodes.clone(),
            hpas: w
                .hpas
                .iter()
                .filter(|h| inside(&h.namespace))
                .cloned()
                .collect(),
            pdbs: w
                .pdbs
                .iter()
                .filter(|p| inside(&p.namespace))
                .cloned()
                .collect(),
            replica_sets: w
                .workloads
                .values()
                .filter(|s| {
                    matches!(
                        s.workload.key.kind,
                        WorkloadKind::Deployment | WorkloadKind::Rollout
                    )
                })
                .filter(|s| inside(&s.workload.key.namespace))
                .flat_map(|s| {
                    let key = &s.workload.key;
                    s.revisions.iter().map(|(revision, created)| ReplicaSet {
                        namespace: key.namespace.clone(),
                        name: format!("{}-{revision}", key.name),
                        controller: Some(OwnerRef::new("Deployment", &key.name)),
                        created_ms: Some(*created),
                        failure: None,
                    })
                })
                .collect(),
            admission: w.admission(inside),
            policies: w.policies.values().cloned().collect(),
            vpas: w
                .vpas
                .iter()
                .filter(|v| inside(&v.namespace))
                .cloned()
                .collect(),
            owners: Default::default(),
            on_nodes: Default::default(),
            by_key: Default::default(),
        }
    }

    /// What `node`'s kubelet serves at `/metrics/cadvisor`.
    fn cadvisor(&self, node: &str) -> String {
        let w = self.world();
        let mut pods: Vec<crate::sim::kubelet::cadvisor::PodCgroups> = w
            .pods
            .values()
            .filter(|p| p.pod.node.as_deref() == Some(node))
            .map(|p| crate::sim::kubelet::cadvisor::PodCgroups {
                namespace: &p.pod.pod.namespace,
                name: &p.pod.pod.name,
                uid: &p.pod.uid,
                containers: p
                    .runs
                    .iter()
                    .map(|r| (r, p.pod.container(&r.name).map_or("", |c| c.image.as_str())))
                    .collect(),
            })
            .collect();
        crate::sim::kubelet::cadvisor::render(&mut pods)
    }
}

impl Cluster for SimCluster {
    type View = SimView;

    fn field_manager(&self) -> &str {
        &self.manager
    }

    async fn watch(&self, _namespaces: &[String]) -> Result<SimView, ClusterError> {
        Ok(SimView(self.clone()))
    }

    async fn server_version(&self) -> Result<String, ClusterError> {
        Ok(SERVER_VERSION.into())
    }

    async fn records(&self, namespaces: &[String]) -> Result<Vec<Record>, ClusterError> {
        let w = self.world();
        Ok(w.records
            .values()
            .filter(|r| namespaces.is_empty() || namespaces.contains(&r.namespace))
            .cloned()
            .collect())
    }

    async fn apply_record(&self, record: &Record) -> Result<Record, ClusterError> {
        self.world().apply_record(record)
    }

    async fn apply_record_status(&self, record: &Record) -> Result<(), ClusterError> {
        self.world().apply_record_status(record)
    }

    async fn apply_policy_status(
        &self,
        name: &str,
        status: &serde_json::Value,
    ) -> Result<(), ClusterError> {
        self.world().apply_policy_status(name, status)
    }

    async fn snapshot(&self, namespaces: &[String]) -> Result<Snapshot, ClusterError> {
        Ok(self.snapshot_now(namespaces))
    }

    async fn workload(&self, key: &WorkloadKey) -> Result<Option<Workload>, ClusterError> {
        Ok(self
            .world()
            .workloads
            .get(key)
            .map(|s| Workload::clone(&s.workload)))
    }

    async fn pod(&self, pod: &PodRef) -> Result<Option<Pod>, ClusterError> {
        Ok(self.world().pods.get(pod).map(|p| Pod::clone(&p.pod)))
    }

    async fn resize_pod(
        &self,
        pod: &PodRef,
        changes: &[crate::cluster::ContainerResources],
    ) -> Result<Pod, ClusterError> {
        self.world().resize(pod, changes)
    }

    async fn apply_template_resources(
        &self,
        key: &WorkloadKey,
        changes: &[crate::cluster::ContainerResources],
        mode: crate::cluster::ApplyMode,
    ) -> Result<Workload, ClusterError> {
        self.world().apply(key, &self.manager, changes, mode)
    }

    async fn release_template_resources(
        &self,
        key: &WorkloadKey,
    ) -> Result<Workload, ClusterError> {
        self.world().release(key, &self.manager)
    }

    async fn apply_hpa_metrics(
        &self,
        namespace: &str,
        name: &str,
        metrics: &[HpaMetric],
    ) -> Result<Hpa, ClusterError> {
        let mut w = self.world();
        let h = w
            .hpas
            .iter_mut()
            .find(|h| h.namespace == namespace && h.name == name)
            .ok_or_else(|| {
                ClusterError::api(
                    404,
                    "NotFound",
                    format!("horizontalpodautoscalers.autoscaling \"{name}\" not found"),
                )
            })?;
        h.metrics = metrics.to_vec();
        // Forced: the list is atomic, and now this manager's alone.
        h.metric_managers = vec![self.manager.clone()];
        Ok(h.clone())
    }

    async fn release_hpa(&self, namespace: &str, name: &str) -> Result<(), ClusterError> {
        let mut w = self.world();
        if let Some(h) = w
            .hpas
            .iter_mut()
            .find(|h| h.namespace == namespace && h.name == name)
        {
            h.metric_managers.retain(|m| m != &self.manager);
        }
        Ok(())
    }

    async fn set_scaled_object_target(
        &self,
        namespace: &str,
        name: &str,
        _resource: &str,
        _targets: (i32, i32),
    ) -> Result<(), ClusterError> {
        // Its HPAs are its own: no ScaledObject makes one.
        Err(ClusterError::Unexpected {
            object: format!("ScaledObject {namespace}/{name}"),
            problem: "the simulated cluster runs no KEDA".into(),
        })
    }

    async fn cpu_counters(&self, node: &Node) -> Result<Vec<CpuCounters>, ClusterError> {
        let w = self.world();
        Ok(w.pods
            .values()
            .filter(|p| p.pod.node.as_deref() == Some(node.name.as_str()))
            .flat_map(|p| {
                p.runs
                    .iter()
                    .filter(|r| r.actual.cpu_limit.is_some())
                    .map(|r| CpuCounters {
                        pod: p.pod.pod.clone(),
                        container: r.name.clone(),
                        periods: r.periods,
                        throttled_periods: r.throttled_periods,
                    })
            })
            .collect())
    }

    async fn usage(
        &self,
        node: &Node,
        scraped_at_ms: i64,
    ) -> Result<Vec<UsageSample>, ClusterError> {
        let text = self.cadvisor(&node.name);
        Ok(crate::cluster::cadvisor::usage(&text, scraped_at_ms))
    }

    async fn evict(&self, pod: &PodRef) -> Result<(), ClusterError> {
        self.world().evict(pod)
    }

    async fn record_event(&self, event: &ClusterEvent) -> Result<(), ClusterError> {
        self.world().record_event(event)
    }

    async fn events(&self, regarding: &ObjectRef) -> Result<Vec<RecordedEvent>, ClusterError> {
        Ok(self
            .world()
            .events
            .iter()
            .filter(|e| {
                e.event.regarding.namespace == regarding.namespace
                    && e.event.regarding.kind == regarding.kind
                    && e.event.regarding.name == regarding.name
            })
            .cloned()
            .collect())
    }
}
