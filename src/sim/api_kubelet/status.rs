//! The pod and node status the simulated kubelet writes, as the JSON the real kubelet
//! sends (merge patches of `pods/status` and `nodes/status`).

use serde_json::{json, Value};

use crate::cluster::quantity::{format_cpu, format_memory};
use crate::cluster::{Node, ResizeState, Resources};
use crate::sim::kubelet::ContainerRun;

pub fn time(ms: i64) -> String {
    k8s_openapi::jiff::Timestamp::from_millisecond(ms)
        .map(|t| t.to_string())
        .unwrap_or_else(|_| "1970-01-01T00:00:00Z".into())
}

/// `MicroTime` (Leases): exactly six fractional digits, as the API server parses it.
pub fn micro_time(ms: i64) -> String {
    let seconds = k8s_openapi::jiff::Timestamp::from_second(ms.div_euclid(1000))
        .map(|t| t.strftime("%Y-%m-%dT%H:%M:%S").to_string())
        .unwrap_or_else(|_| "1970-01-01T00:00:00".into());
    format!("{seconds}.{:06}Z", ms.rem_euclid(1000) * 1000)
}

fn quantities(r: &Resources, limits: bool) -> Value {
    let mut m = serde_json::Map::new();
    let (cpu, memory) = if limits {
        (r.cpu_limit, r.memory_limit)
    } else {
        (r.cpu_request, r.memory_request)
    };
    if let Some(c) = cpu {
        m.insert("cpu".into(), Value::String(format_cpu(c)));
    }
    if let Some(b) = memory {
        m.insert("memory".into(), Value::String(format_memory(b)));
    }
    Value::Object(m)
}

/// `status.containerStatuses[]` entry.
pub fn container_status(
    run: &ContainerRun,
    allocated: &Resources,
    image: &str,
    pod_uid: &str,
) -> Value {
    let last = match &run.last_termination {
        Some(t) => json!({ "terminated": {
            "reason": t.reason, "exitCode": t.exit_code,
            "startedAt": time(t.finished_at_ms.unwrap_or(run.life_start_ms) - 1000),
            "finishedAt": time(t.finished_at_ms.unwrap_or(run.life_start_ms)),
            "containerID": format!("sim://{pod_uid}/{}/{}", run.name, run.restarts - 1),
        }}),
        None => json!({}),
    };
    json!({
        "name": run.name,
        "ready": true,
        "started": true,
        "restartCount": run.restarts,
        "image": image,
        "imageID": format!("sim://{image}"),
        "containerID": format!("sim://{pod_uid}/{}/{}", run.name, run.restarts),
        "state": { "running": { "startedAt": time(run.life_start_ms) } },
        "lastState": last,
        "resources": { "requests": quantities(&run.actual, false), "limits": quantities(&run.actual, true) },
        "allocatedResources": quantities(allocated, false),
    })
}

/// `status.initContainerStatuses[]` entry of an init container that ran to completion
/// when the pod started.
pub fn completed_status(name: &str, image: &str, pod_uid: &str, started_ms: i64) -> Value {
    json!({
        "name": name,
        "ready": false,
        "started": false,
        "restartCount": 0,
        "image": image,
        "imageID": format!("sim://{image}"),
        "containerID": format!("sim://{pod_uid}/{name}/0"),
        "state": { "terminated": {
            "reason": "Completed", "exitCode": 0,
            "startedAt": time(started_ms), "finishedAt": time(started_ms),
            "containerID": format!("sim://{pod_uid}/{name}/0"),
        }},
        "lastState": {},
    })
}

fn condition(kind: &str, status: bool, now_ms: i64) -> Value {
    json!({ "type": kind, "status": if status { "True" } else { "False" }, "lastTransitionTime": time(now_ms) })
}

/// The whole `status` of a running pod: `init_statuses` of its sidecars and init
/// containers (spec order), `statuses` of its app containers.
pub fn pod_status(
    init_statuses: Vec<Value>,
    statuses: Vec<Value>,
    resize: &ResizeState,
    observed_generation: i64,
    started_ms: i64,
    pod_ip: &str,
) -> Value {
    let mut conditions = vec![
        condition("PodReadyToStartContainers", true, started_ms),
        condition("Initialized", true, started_ms),
        condition("Ready", true, started_ms),
        condition("ContainersReady", true, started_ms),
        condition("PodScheduled", true, started_ms),
    ];
    let resize_condition = match resize {
        ResizeState::Settled => None,
        ResizeState::Deferred { message } => {
            Some(("PodResizePending", "Deferred", message.clone()))
        }
        ResizeState::Infeasible { message } => {
            Some(("PodResizePending", "Infeasible", message.clone()))
        }
        ResizeState::InProgress { error } => Some((
            "PodResizeInProgress",
            if error.is_some() { "Error" } else { "" },
            error.clone().unwrap_or_default(),
        )),
    };
    if let Some((kind, reason, message)) = resize_condition {
        let mut c = json!({
            "type": kind, "status": "True", "lastTransitionTime": time(started_ms),
            "observedGeneration": observed_generation,
        });
        if !reason.is_empty() {
            c["reason"] = Value::String(reason.into());
        }
        if !message.is_empty() {
            c["message"] = Value::String(message);
        }
        conditions.push(c);
    }
    json!({
        "phase": "Running",
        "hostIP": "127.0.0.1",
        "hostIPs": [{ "ip": "127.0.0.1" }],
        "podIP": pod_ip,
        "podIPs": [{ "ip": pod_ip }],
        "startTime": time(started_ms),
        "observedGeneration": observed_generation,
        "conditions": conditions,
        "initContainerStatuses": init_statuses,
        "containerStatuses": statuses,
    })
}

/// The Node object the kubelet registers.
pub fn node_object(node: &Node) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": { "name": node.name, "labels": node.labels },
        "spec": {},
    })
}

/// The node's status: capacity, Ready, address, the kubelet's port and system info
/// (with swap).
pub fn node_status(node: &Node, now_ms: i64, kubelet_port: u16) -> Value {
    let capacity = json!({
        "cpu": format_cpu(node.allocatable_cpu),
        "memory": format_memory(node.allocatable_memory),
        "pods": "110",
    });
    let mut info = json!({
        "machineID": node.name, "systemUUID": node.name, "bootID": node.name,
        "kernelVersion": "6.1.0-sim", "osImage": "kerf sim", "containerRuntimeVersion": "sim://1.0",
        "kubeletVersion": "v1.36.3", "kubeProxyVersion": "", "operatingSystem": "linux", "architecture": "amd64",
    });
    // The API server refuses a swap capacity of 0: a node without swap reports none.
    if node.swap_bytes > 0 {
        info["swap"] = json!({ "capacity": node.swap_bytes });
    }
    json!({ "status": {
        "capacity": capacity,
        "allocatable": capacity,
        "conditions": [
            { "type": "Ready", "status": "True", "reason": "KubeletReady",
              "message": "kubelet is posting ready status (simulated)",
              "lastHeartbeatTime": time(now_ms), "lastTransitionTime": time(now_ms) },
            { "type": "MemoryPressure", "status": "False", "reason": "KubeletHasSufficientMemory",
              "lastHeartbeatTime": time(now_ms), "lastTransitionTime": time(now_ms) },
            { "type": "DiskPressure", "status": "False", "reason": "KubeletHasNoDiskPressure",
              "lastHeartbeatTime": time(now_ms), "lastTransitionTime": time(now_ms) },
            { "type": "PIDPressure", "status": "False", "reason": "KubeletHasSufficientPID",
              "lastHeartbeatTime": time(now_ms), "lastTransitionTime": time(now_ms) },
        ],
        "addresses": [{ "type": "InternalIP", "address": "127.0.0.1" }, { "type": "Hostname", "address": node.name }],
        "daemonEndpoints": { "kubeletEndpoint": { "Port": kubelet_port } },
        "nodeInfo": info,
    }})
}
