//! Every object `kerf demo` runs (the workloads of both demo clusters, the guardrail ones
//! included, with their native sidecars and an Argo Rollout on Argo's own CRD; their HPAs
//! and PodDisruptionBudgets) is one a real API server accepts:
//! each is read from the demo's in-process cluster, written as the Kubernetes object it
//! stands for, and created with `dryRun=All` (validated and defaulted, nothing stored).
//! A fixture a real cluster would refuse (a CPU request above its limit, say) shows an
//! evaluator something that cannot happen.

use std::sync::Arc;

use kerf::clock::ManualClock;
use kerf::cluster::quantity::{format_cpu, format_memory};
use kerf::cluster::{
    Cluster, Container, ContainerRole, Hpa, Pdb, Resources, RestartPolicy, UpdateStrategy, Workload,
};
use kerf::sim::in_process::SimCluster;
use kerf::sim::live::Live;
use kube::api::{Api, DynamicObject, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::{json, Value};

use crate::support::kube::{control_plane, namespace};

fn resources(r: &Resources) -> Value {
    let mut out = json!({ "requests": {}, "limits": {} });
    let cpu = |v: Option<u64>| v.map(format_cpu);
    let memory = |v: Option<u64>| v.map(format_memory);
    for (group, c, m) in [
        ("requests", cpu(r.cpu_request), memory(r.memory_request)),
        ("limits", cpu(r.cpu_limit), memory(r.memory_limit)),
    ] {
        if let Some(c) = c {
            out[group]["cpu"] = json!(c);
        }
        if let Some(m) = m {
            out[group]["memory"] = json!(m);
        }
    }
    out
}

fn restart(p: RestartPolicy) -> &'static str {
    match p {
        RestartPolicy::NotRequired => "NotRequired",
        RestartPolicy::RestartContainer => "RestartContainer",
    }
}

fn container(c: &Container) -> Value {
    let env: Vec<Value> = c
        .env
        .iter()
        .map(|e| json!({ "name": e.name, "value": e.value }))
        .collect();
    json!({
        "name": c.name,
        "image": c.image,
        "command": c.command,
        "args": c.args,
        "env": env,
        "resources": resources(&c.resources),
        "resizePolicy": [
            { "resourceName": "cpu", "restartPolicy": restart(c.resize_policy.cpu) },
            { "resourceName": "memory", "restartPolicy": restart(c.resize_policy.memory) },
        ],
    })
}

/// The workload as the Kubernetes object it stands for, in namespace `ns`.
fn workload(w: &Workload, ns: &str) -> Value {
    let kind = serde_json::to_value(w.key.kind).expect("kind");
    let kind = kind.as_str().expect("a kind name");
    let (mut init, mut containers) = (Vec::new(), Vec::new());
    for c in &w.containers {
        let mut made = container(c);
        match c.role {
            ContainerRole::App => containers.push(made),
            ContainerRole::Sidecar => {
                made["restartPolicy"] = json!("Always");
                init.push(made);
            }
            ContainerRole::Init => init.push(made),
        }
    }
    let template = json!({
        "metadata": { "labels": w.selector },
        "spec": { "containers": containers, "initContainers": init },
    });
    let mut spec =
        json!({ "selector": { "matchLabels": w.selector }, "template": template.clone() });
    let strategy = match &w.strategy {
        UpdateStrategy::RollingUpdate {
            max_surge,
            max_unavailable,
        } => json!({ "type": "RollingUpdate", "rollingUpdate": {
            "maxSurge": max_surge, "maxUnavailable": max_unavailable } }),
        UpdateStrategy::Recreate => json!({ "type": "Recreate" }),
        UpdateStrategy::OnDelete => json!({ "type": "OnDelete" }),
        UpdateStrategy::NextRun => Value::Null,
    };
    let mut api_version = "apps/v1";
    match kind {
        "Deployment" => {
            spec["replicas"] = json!(w.replicas);
            spec["strategy"] = strategy;
        }
        "Rollout" => {
            api_version = "argoproj.io/v1alpha1";
            spec["replicas"] = json!(w.replicas);
            spec["strategy"] =
                json!({ "canary": { "steps": [{ "setWeight": 50 }, { "pause": {} }] } });
        }
        "CronJob" => {
            api_version = "batch/v1";
            let mut template = template;
            template["spec"]["restartPolicy"] = json!("OnFailure");
            spec = json!({ "schedule": "0 2 * * *",
                           "jobTemplate": { "spec": { "template": template } } });
        }
        "StatefulSet" => {
            spec["replicas"] = json!(w.replicas);
            spec["serviceName"] = json!(w.key.name);
            // A StatefulSet's rolling update takes no maxSurge.
            if !matches!(w.strategy, UpdateStrategy::RollingUpdate { .. }) {
                spec["updateStrategy"] = strategy;
            }
        }
        _ => {
            if let UpdateStrategy::RollingUpdate {
                max_unavailable, ..
            } = &w.strategy
            {
                spec["updateStrategy"] = json!({ "type": "RollingUpdate",
                    "rollingUpdate": { "maxUnavailable": max_unavailable } });
            } else {
                spec["updateStrategy"] = strategy;
            }
        }
    }
    json!({
        "apiVersion": api_version, "kind": kind,
        "metadata": { "name": w.key.name, "namespace": ns, "labels": w.labels,
                      "annotations": w.annotations },
        "spec": spec,
    })
}

fn hpa(h: &Hpa, ns: &str) -> Value {
    let target = h.target.as_ref().expect("the demo's HPAs have a target");
    let kind = serde_json::to_value(target.kind).expect("kind");
    let metrics: Vec<Value> = h
        .metrics
        .iter()
        .map(|m| {
            json!({ "type": m.kind, "resource": { "name": m.resource,
                "target": { "type": "Utilization", "averageUtilization": m.target_utilization } } })
        })
        .collect();
    json!({
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": { "name": h.name, "namespace": ns },
        "spec": { "scaleTargetRef": { "apiVersion": "apps/v1", "kind": kind, "name": target.name },
                  "minReplicas": h.min_replicas, "maxReplicas": h.max_replicas,
                  "metrics": metrics },
    })
}

fn pdb(p: &Pdb, ns: &str) -> Value {
    let mut spec = json!({ "selector": { "matchLabels": p.selector } });
    let count = |v: &str| v.parse::<i64>().map_or(json!(v), |n| json!(n));
    if let Some(min) = &p.min_available {
        spec["minAvailable"] = count(min);
    }
    if let Some(max) = &p.max_unavailable {
        spec["maxUnavailable"] = count(max);
    }
    json!({
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": { "name": p.name, "namespace": ns }, "spec": spec,
    })
}

#[tokio::test]
async fn every_object_the_demo_runs_passes_the_real_api_servers_validation() {
    let admin = control_plane().admin().await;
    let ns = namespace(&admin, "demo-objects").await;
    let clock = Arc::new(ManualClock::new(1_780_000_000_000));
    let mut objects = Vec::new();
    for cluster in ["demo-east", "demo-west"] {
        let sim = SimCluster::demo(cluster, 7, clock.clone(), Live::default())
            .expect("builds")
            .expect("a demo cluster");
        let snap = sim.snapshot(&[]).await.expect("snapshot");
        assert!(!snap.workloads.is_empty(), "{cluster} has workloads");
        for w in &snap.workloads {
            objects.push((format!("{cluster} {}", w.key), workload(w, &ns.name)));
        }
        for h in &snap.hpas {
            objects.push((format!("{cluster} HPA {}", h.name), hpa(h, &ns.name)));
        }
        for p in &snap.pdbs {
            objects.push((format!("{cluster} PDB {}", p.name), pdb(p, &ns.name)));
        }
    }
    let kinds: std::collections::BTreeSet<&str> = objects
        .iter()
        .filter_map(|(_, o)| o["kind"].as_str())
        .collect();
    for kind in [
        "Deployment",
        "StatefulSet",
        "DaemonSet",
        "Rollout",
        "HorizontalPodAutoscaler",
        "PodDisruptionBudget",
    ] {
        assert!(kinds.contains(kind), "the demo has a {kind}: {kinds:?}");
    }
    let params = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    let mut refused = Vec::new();
    for (what, object) in &objects {
        let (group, version) = match object["apiVersion"].as_str().expect("apiVersion") {
            v if v.contains('/') => v.split_once('/').expect("group/version"),
            v => ("", v),
        };
        let gvk = GroupVersionKind::gvk(group, version, object["kind"].as_str().expect("kind"));
        let api: Api<DynamicObject> =
            Api::namespaced_with(admin.clone(), &ns.name, &ApiResource::from_gvk(&gvk));
        let made: DynamicObject = serde_json::from_value(object.clone()).expect("object");
        if let Err(e) = api.create(&params, &made).await {
            refused.push(format!("{what}: {e}"));
        }
    }
    assert!(
        refused.is_empty(),
        "the real API server refuses {} of the demo's {} objects:\n{}",
        refused.len(),
        objects.len(),
        refused.join("\n")
    );
}
