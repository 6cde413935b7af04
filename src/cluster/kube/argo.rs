//! Argo Rollouts (`argoproj.io/v1alpha1` `Rollout`) through the API server, as
//! `DynamicObject`s (kerf needs no Argo types): watched in every namespace or in each of
//! the agent's, converted to a workload of kind `Rollout`, and changed by server-side
//! apply on `spec.template`, which Argo then rolls out with its own strategy. A cluster
//! without the CRD, or an agent that may not list Rollouts, watches none.
//!
//! A Rollout that takes its template from a Deployment (`spec.workloadRef`) has no
//! template of its own to change: it is not rightsized (its Deployment is, if scaled up).

use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::api::{Api, DynamicObject};
use kube::core::{ApiResource, GroupVersionKind};
use kube::Client;
use serde_json::Value;

use super::convert;
use crate::cluster::{RolloutStatus, UpdateStrategy, Workload, WorkloadKind};

pub const GROUP: &str = "argoproj.io";
pub const VERSION: &str = "v1alpha1";
pub const API_VERSION: &str = "argoproj.io/v1alpha1";

pub fn resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(GROUP, VERSION, "Rollout"),
        "rollouts",
    )
}

/// One API per namespace of `namespaces`, or one over all of them when it is empty.
pub fn apis(client: &Client, namespaces: &[String]) -> Vec<Api<DynamicObject>> {
    super::dynamic::apis(client, namespaces, &resource())
}

/// The Rollouts API of one namespace.
pub fn api(client: &Client, namespace: &str) -> Api<DynamicObject> {
    Api::namespaced_with(client.clone(), namespace, &resource())
}

/// True when Rollouts can be listed; says once why not.
pub async fn readable(api: &Api<DynamicObject>) -> bool {
    super::dynamic::readable(
        api,
        "no Argo Rollouts CRD in this cluster; kerf watches no Rollout",
        "Argo Rollouts are not read: grant get, list, watch and patch on rollouts.argoproj.io in the agent's RBAC to rightsize them",
    )
    .await
}

fn text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn count(v: &Value) -> i32 {
    v.as_i64().and_then(|n| i32::try_from(n).ok()).unwrap_or(0)
}

/// A Rollout as a workload; `None` without a template of its own (`workloadRef`) or
/// with one the model cannot read.
pub fn workload(o: &DynamicObject) -> Option<Workload> {
    let spec = o.data.get("spec")?;
    let template: PodTemplateSpec = serde_json::from_value(spec.get("template")?.clone()).ok()?;
    let selector: LabelSelector =
        serde_json::from_value(spec.get("selector").cloned().unwrap_or_default()).ok()?;
    let mut w = convert::workload_base(WorkloadKind::Rollout, &o.metadata, &selector, &template);
    w.replicas = spec
        .get("replicas")
        .and_then(Value::as_i64)
        .and_then(|n| i32::try_from(n).ok())
        .unwrap_or(1);
    let strategy = spec.get("strategy").cloned().unwrap_or_default();
    w.strategy = if let Some(canary) = strategy.get("canary") {
        UpdateStrategy::RollingUpdate {
            max_surge: canary.get("maxSurge").and_then(text),
            max_unavailable: canary.get("maxUnavailable").and_then(text),
        }
    } else if strategy.get("blueGreen").is_some() {
        // A whole preview ReplicaSet beside the active one, none taken down first.
        UpdateStrategy::RollingUpdate {
            max_surge: Some("100%".into()),
            max_unavailable: Some("0".into()),
        }
    } else {
        UpdateStrategy::RollingUpdate {
            max_surge: None,
            max_unavailable: None,
        }
    };
    let status = o.data.get("status").cloned().unwrap_or_default();
    w.ready_replicas = count(&status["readyReplicas"]);
    // Argo writes the generation it acted on as a string.
    w.observed_generation = status
        .get("observedGeneration")
        .and_then(text)
        .and_then(|g| g.parse().ok());
    let deadline = status["conditions"].as_array().and_then(|all| {
        all.iter()
            .find(|c| c["type"] == "Progressing" && c["reason"] == "ProgressDeadlineExceeded")
            .map(|c| c["message"].as_str().unwrap_or_default().to_string())
    });
    w.rollout = RolloutStatus {
        updated: count(&status["updatedReplicas"]),
        total: count(&status["replicas"]),
        available: count(&status["availableReplicas"]),
        deadline_exceeded: deadline,
    };
    Some(w)
}
