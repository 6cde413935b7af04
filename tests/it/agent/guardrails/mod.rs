//! The agent's guardrails (issue 13), each a scenario against the real API server with
//! the sim kubelet, asserting the event the hub stored (`GET /v1/audit`) and the
//! cluster as an admin reads it: holds (`SingleReplicaUnsafe`, `PodDisruptionBudget`,
//! `HPACoupled`, HPA coordination), pressure and runtimes (`Throttled`, `OOMKilled`,
//! `JVMFixedHeap`, `RestartPolicyRequired`), the health watch (`rolled_back
//! OOMKills|Restarts|Throttling`, `failed RollbackError`, the hub away during the
//! watch), release (`released ModeChanged`, `failed ReleaseError`), the checks before a
//! change (`ResourceQuota`, `LimitRange`, `NoFittingNode`), rollouts that stall
//! (`rolled_back RolloutStalled`) and a chaos run.

mod admission;
mod chaos;
mod found;
mod holds;
mod keda;
mod pressure;
mod release;
mod rollback;
mod stall;

use std::time::Duration;

use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kerf::cluster::kube::KubeCluster;
use kerf::cluster::{Cluster, Hpa, Pod, Workload, WorkloadKey};
use kube::api::{Api, DynamicObject, PostParams};
use kube::discovery::ApiResource;
use serde_json::{json, Value};

use super::world::World;

/// The stored events of workload `name`, oldest first.
pub fn of<'a>(events: &'a [Value], name: &str) -> Vec<&'a Value> {
    events
        .iter()
        .filter(|e| e["workload"]["name"] == name)
        .collect()
}

/// `(type, reason)` of `events`.
pub fn kinds(events: &[&Value]) -> Vec<(String, String)> {
    events
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap_or_default().to_string(),
                e["reason"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

pub fn pair(t: &str, r: &str) -> (String, String) {
    (t.to_string(), r.to_string())
}

/// The one stored event of `name` with `reason`.
pub fn one<'a>(events: &'a [Value], name: &str, reason: &str) -> &'a Value {
    let found: Vec<&Value> = of(events, name)
        .into_iter()
        .filter(|e| e["reason"] == reason)
        .collect();
    assert_eq!(found.len(), 1, "one {reason} for {name}: {events:#?}");
    found[0]
}

/// The workload as an admin reads it.
pub async fn workload(w: &World, key: &WorkloadKey) -> Workload {
    KubeCluster::new(w.admin.clone())
        .workload(key)
        .await
        .expect("read")
        .expect("exists")
}

/// The HPAs of the test's namespace as an admin reads them.
pub async fn hpas(w: &World) -> Vec<Hpa> {
    KubeCluster::new(w.admin.clone())
        .snapshot(std::slice::from_ref(&w.ns.name))
        .await
        .expect("snapshot")
        .hpas
}

/// Creates a CPU-utilization HPA of Deployment `target` (a plain create).
pub async fn hpa(w: &World, target: &str, utilization: i32) {
    let body: HorizontalPodAutoscaler = serde_json::from_value(json!({
        "metadata": { "name": target, "namespace": w.ns.name },
        "spec": {
            "scaleTargetRef": { "apiVersion": "apps/v1", "kind": "Deployment", "name": target },
            "minReplicas": 2, "maxReplicas": 6,
            "metrics": [{ "type": "Resource", "resource": { "name": "cpu",
                "target": { "type": "Utilization", "averageUtilization": utilization } } }],
        },
    }))
    .expect("hpa");
    let pp = PostParams {
        field_manager: Some("kubectl-create".into()),
        ..PostParams::default()
    };
    Api::<HorizontalPodAutoscaler>::namespaced(w.admin.clone(), &w.ns.name)
        .create(&pp, &body)
        .await
        .expect("create hpa");
}

/// Creates a PodDisruptionBudget over `app=<app>` keeping `min_available` pods.
pub async fn pdb(w: &World, app: &str, min_available: i32) {
    let body: PodDisruptionBudget = serde_json::from_value(json!({
        "metadata": { "name": app, "namespace": w.ns.name },
        "spec": { "minAvailable": min_available, "selector": { "matchLabels": { "app": app } } },
    }))
    .expect("pdb");
    Api::<PodDisruptionBudget>::namespaced(w.admin.clone(), &w.ns.name)
        .create(&PostParams::default(), &body)
        .await
        .expect("create pdb");
}

/// A ValidatingAdmissionPolicy (and its binding) that refuses the agent's updates of
/// Deployments in the test's namespace, as a policy engine would; returns once the API
/// server enforces it (a dry-run apply as the agent is refused).
pub async fn freeze_deployments(w: &World, key: &WorkloadKey) {
    let vap = ApiResource {
        group: "admissionregistration.k8s.io".into(),
        version: "v1".into(),
        api_version: "admissionregistration.k8s.io/v1".into(),
        kind: "ValidatingAdmissionPolicy".into(),
        plural: "validatingadmissionpolicies".into(),
    };
    let binding = ApiResource {
        kind: "ValidatingAdmissionPolicyBinding".into(),
        plural: "validatingadmissionpolicybindings".into(),
        ..vap.clone()
    };
    let name = format!("freeze-{}", w.ns.name);
    let policy: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": { "name": name },
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": { "resourceRules": [{ "apiGroups": ["apps"], "apiVersions": ["v1"],
                "operations": ["UPDATE"], "resources": ["deployments"] }] },
            "matchConditions": [{ "name": "kerf-agent",
                "expression": "request.userInfo.username == 'system:serviceaccount:kerf-system:kerf-agent'" }],
            "validations": [{ "expression": "false", "message": "deployments are frozen by the change board" }],
        },
    }))
    .expect("policy");
    let bind: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": { "name": name },
        "spec": { "policyName": name, "validationActions": ["Deny"],
            "matchResources": { "namespaceSelector": { "matchLabels": { "kubernetes.io/metadata.name": w.ns.name } } } },
    }))
    .expect("binding");
    Api::<DynamicObject>::all_with(w.admin.clone(), &vap)
        .create(&PostParams::default(), &policy)
        .await
        .expect("create the admission policy");
    Api::<DynamicObject>::all_with(w.admin.clone(), &binding)
        .create(&PostParams::default(), &bind)
        .await
        .expect("bind the admission policy");
    let agent = crate::support::kube::control_plane().agent_cluster().await;
    let current = workload(w, key).await.containers[0].resources;
    let what = "the admission policy to refuse a change";
    crate::support::eventually(what, Duration::from_secs(30), async || {
        let mode = kerf::cluster::ApplyMode {
            force: true,
            dry_run: true,
        };
        let probe = agent
            .apply_template_resources(
                key,
                &[kerf::cluster::ContainerResources::set("app", current)],
                mode,
            )
            .await;
        probe.is_err()
    })
    .await;
}

/// Every pod's uid, generation and restart count (what "untouched" compares).
pub fn fingerprint(pods: &[Pod]) -> Vec<(String, i64, i32)> {
    pods.iter()
        .map(|p| {
            (
                p.uid.clone(),
                p.generation,
                p.status("app").map_or(-1, |s| s.restart_count),
            )
        })
        .collect()
}

/// `kerf_actions_total` of `type`/`reason` on the hub's `/metrics`.
pub async fn actions_total(w: &World, event_type: &str, reason: &str) -> f64 {
    let text = w
        .hub
        .api
        .http
        .get(format!("{}/metrics", w.hub.base))
        .bearer_auth(&w.hub.admin)
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    text.lines()
        .filter(|l| l.starts_with("kerf_actions_total{"))
        .filter(|l| {
            l.contains(&format!("cluster=\"{}\"", w.cluster))
                && l.contains(&format!("type=\"{event_type}\""))
                && l.contains(&format!("reason=\"{reason}\""))
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}
