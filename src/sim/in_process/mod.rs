//! Face 2: the simulated world as an in-process cluster (`kerf demo`, and the
//! conformance suite's second face). It implements [`Cluster`] with the semantics the
//! real API server and kubelet showed in the conformance suite: the resize refusals
//! (limit removal, QoS change, larger than the node), server-side-apply ownership and
//! its 409 conflicts, Eviction API refusals by PodDisruptionBudgets, and the kubelet's
//! Deferred/Infeasible verdicts, OOM kills and throttling. Time comes from the hub's
//! [`Clock`]; every call first brings the world up to the clock's now.

mod control;
mod ssa;
mod writes;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::clock::Clock;
use crate::cluster::{
    Cluster, ClusterError, ClusterEvent, Container, Node, ObjectRef, Pdb, Pod, PodRef,
    RecordedEvent, Resources, Snapshot, Workload, WorkloadKey, FIELD_MANAGER,
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

struct SimWorkload {
    workload: Workload,
    usage: BTreeMap<String, Usage>,
    /// Template revision the current pods are made from.
    revision: String,
}

struct SimPod {
    pod: Pod,
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
    events: Vec<RecordedEvent>,
}

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
                events: Vec::new(),
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
        let mut w = self.world();
        let key = w.create_deployment(spec, creator)?;
        w.step();
        Ok(key)
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

    /// Brings the world to the clock's now (controllers and kubelet run).
    pub fn step(&self) {
        drop(self.world());
    }
}

impl Cluster for SimCluster {
    fn field_manager(&self) -> &str {
        &self.manager
    }

    async fn snapshot(&self, namespaces: &[String]) -> Result<Snapshot, ClusterError> {
        let w = self.world();
        let inside = |ns: &str| namespaces.is_empty() || namespaces.iter().any(|n| n == ns);
        Ok(Snapshot {
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
            hpas: Vec::new(),
            pdbs: w
                .pdbs
                .iter()
                .filter(|p| inside(&p.namespace))
                .cloned()
                .collect(),
        })
    }

    async fn workload(&self, key: &WorkloadKey) -> Result<Option<Workload>, ClusterError> {
        Ok(self.world().workloads.get(key).map(|s| s.workload.clone()))
    }

    async fn pod(&self, pod: &PodRef) -> Result<Option<Pod>, ClusterError> {
        Ok(self.world().pods.get(pod).map(|p| p.pod.clone()))
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
        self.world().apply(
            key,
            &self.manager,
            &[],
            crate::cluster::ApplyMode::default(),
        )
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
