//! Objects the Kubernetes tests share: simulated nodes and Deployments.

use k8s_openapi::api::apps::v1::Deployment;
use kerf::cluster::{Node, NodeManagers};

pub const MIB: u64 = 1 << 20;

/// Label that ties a test's pods to its own simulated node.
pub const POOL_LABEL: &str = "sim.getkerf.dev/pool";

/// One simulated node for the test namespace `ns`.
pub fn node(ns: &str, cpu_millis: u64, memory_mib: u64) -> Node {
    Node {
        name: format!("{ns}-node"),
        labels: [(POOL_LABEL.to_string(), ns.to_string())]
            .into_iter()
            .collect(),
        ready: true,
        allocatable_cpu: cpu_millis,
        allocatable_memory: memory_mib * MIB,
        swap_bytes: 0,
        unschedulable: false,
        managers: NodeManagers::default(),
        daemon_endpoint: None,
    }
}

/// A Deployment of one `app` container pinned to the namespace's node.
pub fn deployment(ns: &str, name: &str, replicas: i32, cpu: u64, memory_mib: u64) -> Deployment {
    serde_json::from_value(serde_json::json!({
        "metadata": { "name": name, "namespace": ns },
        "spec": {
            "replicas": replicas,
            "selector": { "matchLabels": { "app": name } },
            "template": {
                "metadata": { "labels": { "app": name } },
                "spec": {
                    "nodeSelector": { POOL_LABEL: ns },
                    "containers": [{
                        "name": "app", "image": "registry.example/app:1",
                        "resources": { "requests": { "cpu": format!("{cpu}m"), "memory": format!("{memory_mib}Mi") } },
                    }],
                },
            },
        },
    }))
    .expect("deployment object")
}
