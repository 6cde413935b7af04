//! Argo Rollouts (issue 31, done means 1), against the real API server with Argo's own
//! CRD (from its Go module, `scripts/ensure-crds.sh`). No Argo controller runs: the test
//! plays its part, making the revision's ReplicaSet (owned by the Rollout, so the
//! ReplicaSet controller makes the pods and the sim kubelet runs them) and writing the
//! Rollout's status. kerf applies its change by server-side apply on the Rollout's
//! `spec.template`, as field manager `kerf` owning exactly the container's resources
//! fields, and by rollout even though the policy says in place: Argo owns the pods.

use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::{json, Value};

use super::apply::{leaf_paths, resources_of};
use super::world::{drive, res, World};
use crate::support::kube::objects::POOL_LABEL;

fn rollouts() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("argoproj.io", "v1alpha1", "Rollout"),
        "rollouts",
    )
}

fn template(w: &World, hash: Option<&str>) -> Value {
    let mut labels = json!({ "app": "checkout" });
    if let Some(h) = hash {
        labels["rollouts-pod-template-hash"] = json!(h);
    }
    json!({
        "metadata": { "labels": labels },
        "spec": {
            "nodeSelector": { POOL_LABEL: w.ns.name },
            "containers": [{
                "name": "app", "image": "registry.example/checkout:1",
                "resources": { "requests": { "cpu": "500m", "memory": "256Mi" },
                               "limits": { "cpu": "1", "memory": "512Mi" } },
            }],
        },
    })
}

/// The Rollout, its first revision's ReplicaSet and its status, as Argo would leave them.
async fn checkout(w: &World) -> Api<DynamicObject> {
    let api: Api<DynamicObject> = Api::namespaced_with(w.admin.clone(), &w.ns.name, &rollouts());
    let body = json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout",
        "metadata": { "name": "checkout", "namespace": w.ns.name },
        "spec": {
            "replicas": 2,
            "selector": { "matchLabels": { "app": "checkout" } },
            "template": template(w, None),
            "strategy": { "canary": { "steps": [{ "setWeight": 50 }, { "pause": {} }] } },
        },
    });
    let made: DynamicObject = serde_json::from_value(body).expect("rollout");
    let made = api
        .create(&PostParams::default(), &made)
        .await
        .expect("create the Rollout");
    let rs = json!({
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {
            "name": "checkout-5f7c9d", "namespace": w.ns.name,
            "labels": { "app": "checkout", "rollouts-pod-template-hash": "5f7c9d" },
            "ownerReferences": [{
                "apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "name": "checkout",
                "uid": made.metadata.uid, "controller": true, "blockOwnerDeletion": true,
            }],
        },
        "spec": {
            "replicas": 2,
            "selector": { "matchLabels": { "app": "checkout", "rollouts-pod-template-hash": "5f7c9d" } },
            "template": template(w, Some("5f7c9d")),
        },
    });
    let rs: k8s_openapi::api::apps::v1::ReplicaSet = serde_json::from_value(rs).expect("rs");
    Api::namespaced(w.admin.clone(), &w.ns.name)
        .create(&PostParams::default(), &rs)
        .await
        .expect("create the ReplicaSet");
    let status = json!({ "status": {
        "replicas": 2, "updatedReplicas": 2, "readyReplicas": 2, "availableReplicas": 2,
        "observedGeneration": "1", "currentPodHash": "5f7c9d", "stableRS": "5f7c9d",
    }});
    api.patch_status("checkout", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .expect("the Rollout's status");
    api
}

#[tokio::test]
async fn a_rollout_gets_its_template_changed_by_server_side_apply_and_argo_rolls_it_out() {
    let w = World::new("agent-argo", 4000, 8192).await;
    let api = checkout(&w).await;
    let key = w.key(kerf::cluster::WorkloadKind::Rollout, "checkout");
    // The policy says in place; a Rollout's pods are Argo's, so kerf rolls out.
    w.policy("auto", json!({})).await;
    w.pods_running(2).await;
    w.recommend(&key, res(250, 500, 200, 400)).await;
    let mut agent = w.agent().await;
    drive(&mut agent, "the Rollout's template applied", |a| {
        a.state(&key)
            .is_some_and(|s| s.phase == kerf::agent::state::Phase::Applied && s.operation.is_none())
    })
    .await;
    let rollout = api.get("checkout").await.expect("the Rollout");
    let app = &rollout.data["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(app["name"], "app");
    assert_eq!(
        app["image"], "registry.example/checkout:1",
        "the rest is kept"
    );
    assert_eq!(
        app["resources"],
        json!({ "requests": { "cpu": "250m", "memory": "200Mi" },
                "limits": { "cpu": "500m", "memory": "400Mi" } })
    );
    assert_eq!(
        rollout.data["spec"]["strategy"]["canary"]["steps"][0]["setWeight"], 50,
        "Argo's strategy is untouched: it runs the rollout"
    );
    let entries = rollout.metadata.managed_fields.unwrap_or_default();
    let kerf = entries
        .iter()
        .find(|e| e.manager.as_deref() == Some("kerf"))
        .expect("kerf's entry");
    assert_eq!(kerf.operation.as_deref(), Some("Apply"));
    let mut leaves = Vec::new();
    leaf_paths(
        &kerf.fields_v1.as_ref().expect("fieldsV1").0,
        String::new(),
        &mut leaves,
    );
    leaves.sort();
    assert_eq!(
        leaves,
        resources_of("containers", "app"),
        "kerf owns exactly the resources fields"
    );
    w.deliver(&agent).await;
    let audit = w.audit().await;
    let applied = audit
        .iter()
        .find(|e| e["type"] == "applied")
        .unwrap_or_else(|| panic!("an applied event: {audit:#?}"));
    assert_eq!(applied["strategy"], "rollout");
    assert_eq!(applied["workload"]["kind"], "Rollout");
    assert_eq!(applied["workload"]["name"], "checkout");
}
