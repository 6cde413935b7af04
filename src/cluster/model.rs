//! What the agent sees of a cluster: workloads, their pods, nodes, HPAs and PDBs, reduced
//! to the facts its decisions read. CPU is in millicores and memory in bytes, both whole
//! numbers (Kubernetes quantities of CPU/memory are exact at that resolution).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use super::admission::*;

/// The one workload identity (`crate::workload`), with the kind one the agent changes.
pub type WorkloadKey = crate::workload::WorkloadKey<WorkloadKind>;
pub use crate::workload::{ContainerRole, WorkloadKind};

/// Names one pod.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct PodRef {
    pub namespace: String,
    pub name: String,
}

impl PodRef {
    pub fn new(namespace: &str, name: &str) -> PodRef {
        PodRef {
            namespace: namespace.into(),
            name: name.into(),
        }
    }
}

/// Requests and limits of one container; `None` = not set. Millicores and bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Resources {
    pub cpu_request: Option<u64>,
    pub cpu_limit: Option<u64>,
    pub memory_request: Option<u64>,
    pub memory_limit: Option<u64>,
}

impl Resources {
    pub fn get(&self, field: ResourceField) -> Option<u64> {
        match field {
            ResourceField::CpuRequest => self.cpu_request,
            ResourceField::CpuLimit => self.cpu_limit,
            ResourceField::MemoryRequest => self.memory_request,
            ResourceField::MemoryLimit => self.memory_limit,
        }
    }

    pub fn set(&mut self, field: ResourceField, value: Option<u64>) {
        match field {
            ResourceField::CpuRequest => self.cpu_request = value,
            ResourceField::CpuLimit => self.cpu_limit = value,
            ResourceField::MemoryRequest => self.memory_request = value,
            ResourceField::MemoryLimit => self.memory_limit = value,
        }
    }

    /// A pod's values from its containers' (role and values, in template order): each
    /// field its effective pod value ([`crate::workload::effective_pod_value`]; a
    /// missing request counts as its limit, anything else missing as 0), unset when no
    /// container sets it.
    pub fn of_pod<'a>(
        containers: impl Iterator<Item = (ContainerRole, &'a Resources)>,
    ) -> Resources {
        let all: Vec<(ContainerRole, Resources)> = containers
            .map(|(role, r)| {
                let (cpu, memory) = r.effective_requests();
                let requests = Resources {
                    cpu_request: r.cpu_request.or(r.cpu_limit.map(|_| cpu)),
                    memory_request: r.memory_request.or(r.memory_limit.map(|_| memory)),
                    ..*r
                };
                (role, requests)
            })
            .collect();
        let mut out = Resources::default();
        for field in ResourceField::ALL {
            if all.iter().any(|(_, r)| r.get(field).is_some()) {
                let each = all
                    .iter()
                    .map(|(role, r)| (*role, r.get(field).unwrap_or(0)));
                out.set(field, Some(crate::workload::effective_pod_value(each)));
            }
        }
        out
    }

    /// Requests as the scheduler and kubelet count them: a missing request defaults to
    /// the limit (the API server's defaulting), else zero.
    pub fn effective_requests(&self) -> (u64, u64) {
        (
            self.cpu_request.or(self.cpu_limit).unwrap_or(0),
            self.memory_request.or(self.memory_limit).unwrap_or(0),
        )
    }
}

/// A pod's effective requests (millicores, bytes) from its containers, init
/// containers and sidecars in `spec.initContainers` order: what the scheduler, the
/// kubelet and quotas count ([`Resources::of_pod`]).
pub fn pod_requests<'a>(
    all: impl IntoIterator<Item = (ContainerRole, &'a Resources)>,
) -> (u64, u64) {
    Resources::of_pod(all.into_iter()).effective_requests()
}

/// The summed effective requests (millicores, bytes) of several app containers.
pub fn total_requests<'a>(all: impl IntoIterator<Item = &'a Resources>) -> (u64, u64) {
    all.into_iter().fold((0, 0), |acc, r| {
        let (cpu, memory) = r.effective_requests();
        (acc.0 + cpu, acc.1 + memory)
    })
}

/// One of the four resource fields kerf manages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum ResourceField {
    CpuRequest,
    CpuLimit,
    MemoryRequest,
    MemoryLimit,
}

impl ResourceField {
    pub const ALL: [ResourceField; 4] = [
        ResourceField::CpuRequest,
        ResourceField::CpuLimit,
        ResourceField::MemoryRequest,
        ResourceField::MemoryLimit,
    ];

    /// `(requests|limits, cpu|memory)` as in the Kubernetes object.
    pub fn path(self) -> (&'static str, &'static str) {
        match self {
            ResourceField::CpuRequest => ("requests", "cpu"),
            ResourceField::CpuLimit => ("limits", "cpu"),
            ResourceField::MemoryRequest => ("requests", "memory"),
            ResourceField::MemoryLimit => ("limits", "memory"),
        }
    }
}

/// New values for one container: the `Some` fields of `resources` are written, the
/// fields in `remove` are taken away (a resize refuses to remove a limit; an apply
/// leaves them out, releasing this manager's ownership), the rest are left alone.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContainerResources {
    pub container: String,
    /// Where the container is written: `spec.containers` (an app container) or
    /// `spec.initContainers` (a sidecar or an init container).
    #[serde(default, skip_serializing_if = "ContainerRole::is_app")]
    pub role: ContainerRole,
    pub resources: Resources,
    pub remove: Vec<ResourceField>,
}

impl ContainerResources {
    /// `resources` for app container `container`.
    pub fn set(container: &str, resources: Resources) -> ContainerResources {
        ContainerResources {
            container: container.into(),
            role: ContainerRole::App,
            resources,
            remove: Vec::new(),
        }
    }

    /// The same change, for a container of `role`.
    pub fn in_role(self, role: ContainerRole) -> ContainerResources {
        ContainerResources { role, ..self }
    }
}

/// What the kubelet does to a container when a resource is resized in place.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum RestartPolicy {
    #[default]
    NotRequired,
    RestartContainer,
}

/// A container's `resizePolicy`, per resource (absent entries default to NotRequired).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ResizePolicy {
    pub cpu: RestartPolicy,
    pub memory: RestartPolicy,
}

/// One environment variable; `value` is `None` when it comes from a reference
/// (secret, config map, field), which kerf does not resolve.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnvVar {
    pub name: String,
    pub value: Option<String>,
}

/// A container as specified (pod template or pod spec).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Container {
    pub name: String,
    /// An app container, a native sidecar or an init container.
    #[serde(default, skip_serializing_if = "ContainerRole::is_app")]
    pub role: ContainerRole,
    pub image: String,
    pub command: Vec<String>,
    pub args: Vec<String>,
    pub env: Vec<EnvVar>,
    pub resources: Resources,
    pub resize_policy: ResizePolicy,
}

/// Who owns one resource field of one container (from `managedFields`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldOwner {
    pub manager: String,
    /// `Apply` (server-side apply) or `Update` (any other write).
    pub operation: String,
    pub container: String,
    pub field: ResourceField,
}

/// How a workload replaces its pods.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum UpdateStrategy {
    /// `maxSurge` / `maxUnavailable` as written (`"25%"` or `"1"`).
    RollingUpdate {
        max_surge: Option<String>,
        max_unavailable: Option<String>,
    },
    Recreate,
    OnDelete,
    /// A CronJob: its next run takes the template; no pod is replaced.
    NextRun,
}

/// A Deployment, StatefulSet or DaemonSet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Workload {
    pub key: WorkloadKey,
    pub uid: String,
    pub generation: i64,
    pub observed_generation: Option<i64>,
    /// Desired replicas (DaemonSets: desired scheduled pods).
    pub replicas: i32,
    pub ready_replicas: i32,
    pub strategy: UpdateStrategy,
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    /// The selector's `matchLabels`.
    pub selector: BTreeMap<String, String>,
    /// The pod template's containers: its init containers and sidecars first, in
    /// `spec.initContainers` order, then its app containers.
    pub containers: Vec<Container>,
    /// The pod template's `nodeSelector`: the nodes its new pods may go to.
    #[serde(default)]
    pub node_selector: BTreeMap<String, String>,
    /// Owners of the template's container resource fields.
    pub resource_owners: Vec<FieldOwner>,
    /// StatefulSets: the revision pods of the current template carry
    /// (`status.updateRevision`, matched against a pod's `controller-revision-hash`).
    pub update_revision: Option<String>,
    /// `metadata.creationTimestamp` (Unix ms).
    #[serde(default)]
    pub created_ms: Option<i64>,
    /// How far its controller has rolled out the current template.
    #[serde(default)]
    pub rollout: RolloutStatus,
}

/// A rollout as the workload's controller reports it (`status`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RolloutStatus {
    /// Pods of the current template (`updatedReplicas`; DaemonSets
    /// `updatedNumberScheduled`).
    pub updated: i32,
    /// Pods of any template (`replicas`; DaemonSets `currentNumberScheduled`).
    pub total: i32,
    /// Available pods (`availableReplicas`; DaemonSets `numberAvailable`).
    pub available: i32,
    /// Deployments: the `Progressing` condition's message once the controller gave up
    /// (reason `ProgressDeadlineExceeded`).
    pub deadline_exceeded: Option<String>,
}

impl RolloutStatus {
    /// The controller has acted on `generation` (the current template) and every one of
    /// `replicas` pods runs it and is available, with no pod of an older one left.
    pub fn done(&self, replicas: i32, observed_generation: Option<i64>, generation: i64) -> bool {
        observed_generation.is_some_and(|g| g >= generation)
            && self.updated >= replicas
            && self.available >= replicas
            && self.total <= replicas
    }
}

impl Workload {
    /// Its rollout is over ([`RolloutStatus::done`]).
    pub fn rolled_out(&self) -> bool {
        self.rollout
            .done(self.replicas, self.observed_generation, self.generation)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PodPhase {
    Pending,
    Running,
    Succeeded,
    Failed,
    Unknown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum QosClass {
    Guaranteed,
    Burstable,
    BestEffort,
}

impl QosClass {
    /// The QoS class the API server gives a pod whose containers have `containers`
    /// (a resize may not change it).
    pub fn of(containers: &[Resources]) -> QosClass {
        if containers.iter().all(|r| *r == Resources::default()) {
            return QosClass::BestEffort;
        }
        let guaranteed = containers.iter().all(|r| {
            let cpu = r.cpu_limit.is_some() && r.cpu_request.is_none_or(|q| Some(q) == r.cpu_limit);
            let mem = r.memory_limit.is_some()
                && r.memory_request.is_none_or(|q| Some(q) == r.memory_limit);
            cpu && mem
        });
        if guaranteed {
            QosClass::Guaranteed
        } else {
            QosClass::Burstable
        }
    }
}

/// The kubelet's verdict on the pod's last resize, from the pod's conditions.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum ResizeState {
    /// No resize outstanding (desired = allocated = actual).
    #[default]
    Settled,
    /// `PodResizePending` with reason `Deferred`: the node is full right now.
    Deferred { message: String },
    /// `PodResizePending` with reason `Infeasible`: the node can never fit it.
    Infeasible { message: String },
    /// `PodResizeInProgress`: accepted, being actuated (`error` if actuation failed).
    InProgress { error: Option<String> },
}

/// How a container last ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Termination {
    /// `OOMKilled`, `Error`, `Completed`, ...
    pub reason: String,
    pub exit_code: i32,
    pub finished_at_ms: Option<i64>,
}

/// A container as it runs (`status.containerStatuses[]`, and for sidecars and init
/// containers `status.initContainerStatuses[]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContainerStatus {
    pub name: String,
    pub ready: bool,
    pub restart_count: i32,
    /// What the container runs with now (`status...resources`).
    pub resources: Option<Resources>,
    /// What the kubelet has admitted (`allocatedResources`; requests only).
    pub allocated: Option<Resources>,
    pub last_termination: Option<Termination>,
}

/// The controller of an object, as its `ownerReferences` name it (`controller: true`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct OwnerRef {
    pub kind: String,
    pub name: String,
}

impl OwnerRef {
    pub fn new(kind: &str, name: &str) -> OwnerRef {
        OwnerRef {
            kind: kind.into(),
            name: name.into(),
        }
    }
}

/// A pod with what kerf needs of its spec and status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pod {
    pub pod: PodRef,
    pub uid: String,
    /// The workload that controls it (through its ReplicaSet for Deployments).
    pub owner: Option<WorkloadKey>,
    /// Its direct controller (a Deployment's pods: their ReplicaSet; a Job's: the Job).
    #[serde(default)]
    pub controller: Option<OwnerRef>,
    pub node: Option<String>,
    pub phase: PodPhase,
    pub ready: bool,
    pub qos: Option<QosClass>,
    pub generation: i64,
    /// The generation the kubelet has acted on (`status.observedGeneration`).
    pub observed_generation: Option<i64>,
    pub labels: BTreeMap<String, String>,
    /// `pod-template-hash` / `controller-revision-hash`: which template made it.
    pub revision: Option<String>,
    pub containers: Vec<Container>,
    pub statuses: Vec<ContainerStatus>,
    pub resize: ResizeState,
    pub created_ms: Option<i64>,
    pub deleting: bool,
    /// The `PodScheduled` condition's message while the scheduler finds no node for it.
    #[serde(default)]
    pub unschedulable: Option<String>,
}

impl Pod {
    pub fn status(&self, container: &str) -> Option<&ContainerStatus> {
        self.statuses.iter().find(|s| s.name == container)
    }

    pub fn container(&self, name: &str) -> Option<&Container> {
        self.containers.iter().find(|c| c.name == name)
    }

    /// Its effective requests (millicores, bytes): [`pod_requests`] of its spec.
    pub fn requests(&self) -> (u64, u64) {
        pod_requests(self.containers.iter().map(|c| (c.role, &c.resources)))
    }
}

/// The kubelet's static CPU / Memory Manager policies (in-place resize unsupported).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeManagers {
    pub cpu_static: bool,
    pub memory_static: bool,
}

/// A node with the facts the agent reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Node {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub ready: bool,
    /// Millicores and bytes.
    pub allocatable_cpu: u64,
    pub allocatable_memory: u64,
    /// Swap capacity the kubelet reports (`status.nodeInfo.swap.capacity`), bytes.
    pub swap_bytes: u64,
    pub managers: NodeManagers,
    /// `spec.unschedulable` (cordoned): the scheduler places no new pod on it.
    #[serde(default)]
    pub unschedulable: bool,
    /// Where its kubelet serves (`host:port`, from the node's InternalIP and
    /// `status.daemonEndpoints.kubeletEndpoint`), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daemon_endpoint: Option<String>,
}

/// One metric of an HPA that kerf may have to coordinate with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HpaMetric {
    /// `Resource`, `ContainerResource`, `Pods`, `Object`, `External`.
    pub kind: String,
    /// `cpu` / `memory` for (container) resource metrics.
    pub resource: Option<String>,
    pub container: Option<String>,
    pub target_utilization: Option<i32>,
}

/// A HorizontalPodAutoscaler (autoscaling/v2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hpa {
    pub namespace: String,
    pub name: String,
    pub target: Option<WorkloadKey>,
    pub min_replicas: i32,
    pub max_replicas: i32,
    pub metrics: Vec<HpaMetric>,
    /// Managers that own `spec.metrics` with server-side apply (operation `Apply`).
    #[serde(default)]
    pub metric_managers: Vec<String>,
    /// Its controller, when something makes it (a KEDA `ScaledObject` makes one and
    /// writes it back from its triggers).
    #[serde(default)]
    pub controller: Option<OwnerRef>,
}

impl HpaMetric {
    /// A CPU or memory utilization target (the kind kerf coordinates).
    pub fn utilization(&self) -> Option<(&str, i32)> {
        let resource = self.resource.as_deref()?;
        let kind_ok = self.kind == "Resource" || self.kind == "ContainerResource";
        let target = self.target_utilization?;
        (kind_ok && matches!(resource, "cpu" | "memory")).then_some((resource, target))
    }
}

/// cAdvisor's CFS counters of one container, as its kubelet serves them at
/// `/metrics/cadvisor` (`container_cpu_cfs_periods_total`,
/// `container_cpu_cfs_throttled_periods_total`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuCounters {
    pub pod: PodRef,
    pub container: String,
    pub periods: u64,
    pub throttled_periods: u64,
}

/// A ReplicaSet: which Deployment it belongs to, and when it was made (the start of
/// that Deployment's release).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplicaSet {
    pub namespace: String,
    pub name: String,
    pub controller: Option<OwnerRef>,
    /// `metadata.creationTimestamp` (Unix ms).
    pub created_ms: Option<i64>,
    /// The `ReplicaFailure` condition's message (`FailedCreate`: a quota, a limit range
    /// or an admission webhook refused its pods).
    #[serde(default)]
    pub failure: Option<String>,
}

/// A PodDisruptionBudget.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pdb {
    pub namespace: String,
    pub name: String,
    /// The selector's `matchLabels`.
    pub selector: BTreeMap<String, String>,
    pub min_available: Option<String>,
    pub max_unavailable: Option<String>,
    pub disruptions_allowed: i32,
    /// Healthy pods the disruption controller counted (0 until it has looked).
    pub current_healthy: i32,
}

/// Kubernetes Event severity (`Info` is not a valid type).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum EventType {
    Normal,
    Warning,
}

/// The object an Event is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObjectRef {
    pub api_version: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    pub uid: Option<String>,
}

/// A Kubernetes Event kerf records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterEvent {
    pub regarding: ObjectRef,
    pub event_type: EventType,
    /// CamelCase, e.g. `RecommendationApplied`.
    pub reason: String,
    /// What was done, e.g. `Resize`, `Apply`.
    pub action: String,
    pub note: String,
}

/// A recorded Event as read back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedEvent {
    pub event: ClusterEvent,
    pub reporting_controller: String,
}
