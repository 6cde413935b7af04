//! Kubernetes objects (k8s-openapi) → the cluster model. Missing optional parts become
//! defaults; only what the model cannot represent is an error.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, ManagedFieldsEntry, ObjectMeta, OwnerReference, Time,
};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::convert_owner::pod_owner;
pub use super::convert_owner::{job_owner, replicaset_owner, same_pod_owner, PodOwners};
use crate::cluster::model::*;
use crate::cluster::quantity::{cpu_millis, memory_bytes};

fn map(m: &Option<BTreeMap<String, String>>) -> BTreeMap<String, String> {
    m.clone().unwrap_or_default()
}

fn match_labels(s: &Option<LabelSelector>) -> BTreeMap<String, String> {
    s.as_ref()
        .and_then(|s| s.match_labels.clone())
        .unwrap_or_default()
}

fn int_or_string(v: &Option<IntOrString>) -> Option<String> {
    v.as_ref().map(|v| match v {
        IntOrString::Int(i) => i.to_string(),
        IntOrString::String(s) => s.clone(),
    })
}

fn time_ms(t: &Option<Time>) -> Option<i64> {
    t.as_ref().map(|t| t.0.as_millisecond())
}

/// `requests`/`limits` maps → model resources (unparseable quantities are left unset).
pub fn resources(
    requests: Option<&BTreeMap<String, Quantity>>,
    limits: Option<&BTreeMap<String, Quantity>>,
) -> Resources {
    fn get<'a>(m: Option<&'a BTreeMap<String, Quantity>>, k: &str) -> Option<&'a Quantity> {
        m.and_then(|m| m.get(k))
    }
    Resources {
        cpu_request: get(requests, "cpu").and_then(|q| cpu_millis(&q.0)),
        cpu_limit: get(limits, "cpu").and_then(|q| cpu_millis(&q.0)),
        memory_request: get(requests, "memory").and_then(|q| memory_bytes(&q.0)),
        memory_limit: get(limits, "memory").and_then(|q| memory_bytes(&q.0)),
    }
}

fn requirements(r: &Option<core::ResourceRequirements>) -> Resources {
    r.as_ref()
        .map(|r| resources(r.requests.as_ref(), r.limits.as_ref()))
        .unwrap_or_default()
}

/// An app container ([`ContainerRole::App`]); see [`init_container`].
pub fn container(c: &core::Container) -> Container {
    let mut policy = ResizePolicy::default();
    for p in c.resize_policy.iter().flatten() {
        let restart = if p.restart_policy == "RestartContainer" {
            RestartPolicy::RestartContainer
        } else {
            RestartPolicy::NotRequired
        };
        match p.resource_name.as_str() {
            "cpu" => policy.cpu = restart,
            "memory" => policy.memory = restart,
            _ => {}
        }
    }
    Container {
        name: c.name.clone(),
        role: ContainerRole::App,
        image: c.image.clone().unwrap_or_default(),
        command: c.command.clone().unwrap_or_default(),
        args: c.args.clone().unwrap_or_default(),
        env: c
            .env
            .iter()
            .flatten()
            .map(|e| EnvVar {
                name: e.name.clone(),
                value: if e.value_from.is_some() {
                    None
                } else {
                    e.value.clone()
                },
            })
            .collect(),
        resources: requirements(&c.resources),
        resize_policy: policy,
    }
}

/// An entry of `spec.initContainers`: a native sidecar (`restartPolicy: Always`) or an
/// init container.
pub fn init_container(c: &core::Container) -> Container {
    Container {
        role: ContainerRole::of_init_container(c.restart_policy.as_deref()),
        ..container(c)
    }
}

/// A pod spec's containers: init containers and sidecars in their order, then the app
/// containers.
pub fn pod_containers(spec: Option<&core::PodSpec>) -> Vec<Container> {
    let Some(s) = spec else {
        return Vec::new();
    };
    let init = s.init_containers.iter().flatten().map(init_container);
    init.chain(s.containers.iter().map(container)).collect()
}

/// Owners of `spec.template.spec.{containers,initContainers}[name=..].resources.
/// {requests,limits}.{cpu,memory}` from the object's `managedFields` (fieldsV1 JSON).
pub fn resource_owners(meta: &ObjectMeta) -> Vec<FieldOwner> {
    let mut out = Vec::new();
    for entry in meta.managed_fields.iter().flatten() {
        owners_of_entry(entry, &mut out);
    }
    out
}

fn owners_of_entry(entry: &ManagedFieldsEntry, out: &mut Vec<FieldOwner>) {
    let Some(fields) = entry.fields_v1.as_ref().map(|f| &f.0) else {
        return;
    };
    // A CronJob's pod template is under its job template.
    let spec = fields
        .get("f:spec")
        .map(
            |s| match s.get("f:jobTemplate").and_then(|j| j.get("f:spec")) {
                Some(job) => job,
                None => s,
            },
        )
        .and_then(|s| s.get("f:template"))
        .and_then(|t| t.get("f:spec"));
    let lists = ["f:initContainers", "f:containers"]
        .into_iter()
        .filter_map(|list| spec.and_then(|s| s.get(list)).and_then(|c| c.as_object()));
    for (key, item) in lists.flatten() {
        // Keys look like `k:{"name":"app"}`.
        let Some(name) = key
            .strip_prefix("k:")
            .and_then(|k| serde_json::from_str::<serde_json::Value>(k).ok())
            .and_then(|k| k.get("name").and_then(|n| n.as_str()).map(String::from))
        else {
            continue;
        };
        let Some(res) = item.get("f:resources") else {
            continue;
        };
        for field in ResourceField::ALL {
            let (group, resource) = field.path();
            let owned = res
                .get(format!("f:{group}"))
                .and_then(|g| g.get(format!("f:{resource}")))
                .is_some();
            if owned {
                out.push(FieldOwner {
                    manager: entry.manager.clone().unwrap_or_default(),
                    operation: entry.operation.clone().unwrap_or_default(),
                    container: name.clone(),
                    field,
                });
            }
        }
    }
}

fn rolling(
    max_surge: &Option<IntOrString>,
    max_unavailable: &Option<IntOrString>,
) -> UpdateStrategy {
    UpdateStrategy::RollingUpdate {
        max_surge: int_or_string(max_surge),
        max_unavailable: int_or_string(max_unavailable),
    }
}

pub(super) fn workload_base(
    kind: WorkloadKind,
    meta: &ObjectMeta,
    selector: &LabelSelector,
    template: &core::PodTemplateSpec,
) -> Workload {
    Workload {
        key: WorkloadKey {
            namespace: meta.namespace.clone().unwrap_or_default(),
            kind,
            name: meta.name.clone().unwrap_or_default(),
        },
        uid: meta.uid.clone().unwrap_or_default(),
        generation: meta.generation.unwrap_or(0),
        observed_generation: None,
        replicas: 0,
        ready_replicas: 0,
        strategy: UpdateStrategy::RollingUpdate {
            max_surge: None,
            max_unavailable: None,
        },
        labels: map(&meta.labels),
        annotations: map(&meta.annotations),
        selector: match_labels(&Some(selector.clone())),
        containers: pod_containers(template.spec.as_ref()),
        node_selector: template
            .spec
            .as_ref()
            .and_then(|s| s.node_selector.clone())
            .unwrap_or_default(),
        resource_owners: resource_owners(meta),
        update_revision: None,
        created_ms: time_ms(&meta.creation_timestamp),
        rollout: RolloutStatus::default(),
    }
}

pub fn deployment(d: &Deployment) -> Option<Workload> {
    let spec = d.spec.as_ref()?;
    let mut w = workload_base(
        WorkloadKind::Deployment,
        &d.metadata,
        &spec.selector,
        &spec.template,
    );
    w.replicas = spec.replicas.unwrap_or(1);
    w.strategy = match spec.strategy.as_ref() {
        Some(s) if s.type_.as_deref() == Some("Recreate") => UpdateStrategy::Recreate,
        Some(s) => s
            .rolling_update
            .as_ref()
            .map(|r| rolling(&r.max_surge, &r.max_unavailable))
            .unwrap_or(rolling(&None, &None)),
        None => rolling(&None, &None),
    };
    let status = d.status.as_ref();
    w.ready_replicas = status.and_then(|s| s.ready_replicas).unwrap_or(0);
    w.observed_generation = status.and_then(|s| s.observed_generation);
    w.rollout = super::convert_rollout::deployment(d);
    Some(w)
}

pub fn statefulset(s: &StatefulSet) -> Option<Workload> {
    let spec = s.spec.as_ref()?;
    let mut w = workload_base(
        WorkloadKind::StatefulSet,
        &s.metadata,
        &spec.selector,
        &spec.template,
    );
    w.replicas = spec.replicas.unwrap_or(1);
    w.strategy = match spec.update_strategy.as_ref() {
        Some(u) if u.type_.as_deref() == Some("OnDelete") => UpdateStrategy::OnDelete,
        Some(u) => rolling(
            &None,
            &u.rolling_update
                .as_ref()
                .and_then(|r| r.max_unavailable.clone()),
        ),
        None => rolling(&None, &None),
    };
    let status = s.status.as_ref();
    w.ready_replicas = status.and_then(|s| s.ready_replicas).unwrap_or(0);
    w.observed_generation = status.and_then(|s| s.observed_generation);
    w.update_revision = status.and_then(|s| s.update_revision.clone());
    w.rollout = super::convert_rollout::statefulset(s);
    Some(w)
}

pub fn daemonset(d: &DaemonSet) -> Option<Workload> {
    let spec = d.spec.as_ref()?;
    let mut w = workload_base(
        WorkloadKind::DaemonSet,
        &d.metadata,
        &spec.selector,
        &spec.template,
    );
    w.strategy = match spec.update_strategy.as_ref() {
        Some(u) if u.type_.as_deref() == Some("OnDelete") => UpdateStrategy::OnDelete,
        Some(u) => u
            .rolling_update
            .as_ref()
            .map(|r| rolling(&r.max_surge, &r.max_unavailable))
            .unwrap_or(rolling(&None, &None)),
        None => rolling(&None, &None),
    };
    let status = d.status.as_ref();
    w.replicas = status.map(|s| s.desired_number_scheduled).unwrap_or(0);
    w.ready_replicas = status.map(|s| s.number_ready).unwrap_or(0);
    w.observed_generation = status.and_then(|s| s.observed_generation);
    w.rollout = super::convert_rollout::daemonset(d);
    Some(w)
}

/// A ReplicaSet: its controller and creation.
pub fn replica_set(rs: &ReplicaSet) -> crate::cluster::ReplicaSet {
    crate::cluster::ReplicaSet {
        namespace: rs.metadata.namespace.clone().unwrap_or_default(),
        name: rs.metadata.name.clone().unwrap_or_default(),
        controller: controller(&rs.metadata).map(|(kind, name)| OwnerRef { kind, name }),
        created_ms: time_ms(&rs.metadata.creation_timestamp),
        failure: super::convert_rollout::replica_failure(rs),
    }
}

pub(super) fn controller_ref(meta: &ObjectMeta) -> Option<&OwnerReference> {
    meta.owner_references
        .iter()
        .flatten()
        .find(|o| o.controller == Some(true))
}

/// `(kind, name)` of the object's controller.
pub fn controller(meta: &ObjectMeta) -> Option<(String, String)> {
    controller_ref(meta).map(|o| (o.kind.clone(), o.name.clone()))
}

fn resize_state(conditions: &[core::PodCondition]) -> ResizeState {
    let active = |t: &str| {
        conditions
            .iter()
            .find(|c| c.type_ == t && c.status == "True")
    };
    if let Some(c) = active("PodResizePending") {
        let message = c.message.clone().unwrap_or_default();
        return match c.reason.as_deref() {
            Some("Infeasible") => ResizeState::Infeasible { message },
            _ => ResizeState::Deferred { message },
        };
    }
    if let Some(c) = active("PodResizeInProgress") {
        let error =
            (c.reason.as_deref() == Some("Error")).then(|| c.message.clone().unwrap_or_default());
        return ResizeState::InProgress { error };
    }
    ResizeState::Settled
}

fn container_status(s: &core::ContainerStatus) -> ContainerStatus {
    let last = s.last_state.as_ref().and_then(|l| l.terminated.as_ref());
    ContainerStatus {
        name: s.name.clone(),
        ready: s.ready,
        restart_count: s.restart_count,
        resources: s
            .resources
            .as_ref()
            .map(|r| resources(r.requests.as_ref(), r.limits.as_ref())),
        allocated: s
            .allocated_resources
            .as_ref()
            .map(|a| resources(Some(a), None)),
        last_termination: last.map(|t| Termination {
            reason: t.reason.clone().unwrap_or_default(),
            exit_code: t.exit_code,
            finished_at_ms: time_ms(&t.finished_at),
        }),
    }
}

/// A pod; `rs_owners` maps ReplicaSet names of its namespace to their workload.
pub fn pod(p: &core::Pod, rs_owners: &PodOwners) -> Pod {
    let meta = &p.metadata;
    let namespace = meta.namespace.clone().unwrap_or_default();
    let owner =
        pod_owner(meta, rs_owners).map(|(kind, name)| WorkloadKey::new(&namespace, kind, name));
    let labels = map(&meta.labels);
    let status = p.status.as_ref();
    let conditions = status
        .and_then(|s| s.conditions.clone())
        .unwrap_or_default();
    let phase = match status.and_then(|s| s.phase.as_deref()) {
        Some("Pending") => PodPhase::Pending,
        Some("Running") => PodPhase::Running,
        Some("Succeeded") => PodPhase::Succeeded,
        Some("Failed") => PodPhase::Failed,
        _ => PodPhase::Unknown,
    };
    Pod {
        pod: PodRef::new(&namespace, meta.name.as_deref().unwrap_or_default()),
        uid: meta.uid.clone().unwrap_or_default(),
        owner,
        controller: controller(meta).map(|(kind, name)| OwnerRef { kind, name }),
        node: p.spec.as_ref().and_then(|s| s.node_name.clone()),
        phase,
        ready: conditions
            .iter()
            .any(|c| c.type_ == "Ready" && c.status == "True"),
        qos: match status.and_then(|s| s.qos_class.as_deref()) {
            Some("Guaranteed") => Some(QosClass::Guaranteed),
            Some("Burstable") => Some(QosClass::Burstable),
            Some("BestEffort") => Some(QosClass::BestEffort),
            _ => None,
        },
        generation: meta.generation.unwrap_or(0),
        observed_generation: status.and_then(|s| s.observed_generation),
        revision: labels
            .get("pod-template-hash")
            .or_else(|| labels.get("controller-revision-hash"))
            .cloned(),
        labels,
        containers: pod_containers(p.spec.as_ref()),
        statuses: status
            .into_iter()
            .flat_map(|s| {
                s.init_container_statuses
                    .iter()
                    .chain(&s.container_statuses)
            })
            .flatten()
            .map(container_status)
            .collect(),
        resize: resize_state(&conditions),
        created_ms: time_ms(&meta.creation_timestamp),
        deleting: meta.deletion_timestamp.is_some(),
        unschedulable: conditions
            .iter()
            .find(|c| c.type_ == "PodScheduled" && c.status == "False")
            .map(|c| {
                c.message
                    .clone()
                    .unwrap_or_else(|| c.reason.clone().unwrap_or_default())
            }),
    }
}

/// Node facts. The CPU/Memory Manager policies are not in the Node object; kerf reads
/// them from the labels `kerf.getkerf.dev/cpu-manager-policy` and
/// `kerf.getkerf.dev/memory-manager-policy` (set by the node's provisioning).
pub fn node(n: &core::Node) -> Node {
    let labels = map(&n.metadata.labels);
    let status = n.status.as_ref();
    let alloc = status.and_then(|s| s.allocatable.as_ref());
    let q = |k: &str, f: fn(&str) -> Option<u64>| {
        alloc
            .and_then(|a| a.get(k))
            .and_then(|v| f(&v.0))
            .unwrap_or(0)
    };
    let swap = status
        .and_then(|s| s.node_info.as_ref())
        .and_then(|i| i.swap.as_ref())
        .and_then(|s| s.capacity)
        .unwrap_or(0);
    let port = status
        .and_then(|s| s.daemon_endpoints.as_ref())
        .and_then(|d| d.kubelet_endpoint.as_ref())
        .map(|e| e.port)
        .filter(|p| *p > 0);
    let address = status.and_then(|s| s.addresses.as_ref()).and_then(|a| {
        ["InternalIP", "ExternalIP", "Hostname"]
            .iter()
            .find_map(|kind| a.iter().find(|x| x.type_ == *kind))
            .map(|x| x.address.clone())
    });
    let kubelet = match (address, port) {
        (Some(a), Some(p)) if a.contains(':') => Some(format!("[{a}]:{p}")),
        (Some(a), Some(p)) => Some(format!("{a}:{p}")),
        _ => None,
    };
    Node {
        daemon_endpoint: kubelet,
        name: n.metadata.name.clone().unwrap_or_default(),
        ready: status
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True")),
        allocatable_cpu: q("cpu", cpu_millis),
        allocatable_memory: q("memory", memory_bytes),
        swap_bytes: u64::try_from(swap).unwrap_or(0),
        unschedulable: n
            .spec
            .as_ref()
            .and_then(|s| s.unschedulable)
            .unwrap_or(false),
        managers: NodeManagers {
            cpu_static: labels.get(super::CPU_MANAGER_LABEL).map(String::as_str) == Some("static"),
            memory_static: labels.get(super::MEMORY_MANAGER_LABEL).map(String::as_str)
                == Some("Static"),
        },
        labels,
    }
}

pub fn hpa(h: &HorizontalPodAutoscaler) -> Hpa {
    let namespace = h.metadata.namespace.clone().unwrap_or_default();
    let spec = h.spec.as_ref();
    let target = spec.and_then(|s| {
        WorkloadKind::parse(&s.scale_target_ref.kind)
            .map(|k| WorkloadKey::new(&namespace, k, &s.scale_target_ref.name))
    });
    let metrics = spec
        .and_then(|s| s.metrics.as_ref())
        .map(|ms| {
            ms.iter()
                .map(|m| {
                    let (resource, container, utilization) = if let Some(r) = &m.resource {
                        (Some(r.name.clone()), None, r.target.average_utilization)
                    } else if let Some(r) = &m.container_resource {
                        (
                            Some(r.name.clone()),
                            Some(r.container.clone()),
                            r.target.average_utilization,
                        )
                    } else {
                        (None, None, None)
                    };
                    HpaMetric {
                        kind: m.type_.clone(),
                        resource,
                        container,
                        target_utilization: utilization,
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    Hpa {
        name: h.metadata.name.clone().unwrap_or_default(),
        namespace,
        target,
        min_replicas: spec.and_then(|s| s.min_replicas).unwrap_or(1),
        max_replicas: spec.map(|s| s.max_replicas).unwrap_or(0),
        metrics,
        metric_managers: h
            .metadata
            .managed_fields
            .iter()
            .flatten()
            .filter(|e| e.operation.as_deref() == Some("Apply"))
            .filter(|e| {
                e.fields_v1
                    .as_ref()
                    .and_then(|f| f.0.get("f:spec"))
                    .and_then(|s| s.get("f:metrics"))
                    .is_some()
            })
            .filter_map(|e| e.manager.clone())
            .collect(),
        controller: controller(&h.metadata).map(|(kind, name)| OwnerRef { kind, name }),
    }
}

pub fn pdb(p: &PodDisruptionBudget) -> Pdb {
    let spec = p.spec.as_ref();
    Pdb {
        namespace: p.metadata.namespace.clone().unwrap_or_default(),
        name: p.metadata.name.clone().unwrap_or_default(),
        selector: match_labels(&spec.and_then(|s| s.selector.clone())),
        min_available: spec.and_then(|s| int_or_string(&s.min_available)),
        max_unavailable: spec.and_then(|s| int_or_string(&s.max_unavailable)),
        disruptions_allowed: p
            .status
            .as_ref()
            .map(|s| s.disruptions_allowed)
            .unwrap_or(0),
        current_healthy: p.status.as_ref().map(|s| s.current_healthy).unwrap_or(0),
    }
}
