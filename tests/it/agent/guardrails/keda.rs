//! A KEDA `ScaledObject` on CPU (issue 31, coexistence), against the real API server with
//! KEDA's own CRD (from its Go module, `scripts/ensure-crds.sh`). KEDA makes an HPA from
//! the ScaledObject's triggers and writes it back whenever it differs, so kerf never
//! writes that HPA: it coordinates like an HPA of its own by changing the ScaledObject's
//! CPU trigger to the value that keeps today's scaling point with the new requests (a
//! JSON patch guarded by the value it read; the other triggers and fields untouched),
//! then applies the change. No KEDA operator runs: the test makes the HPA as KEDA
//! would, controlled by the ScaledObject, and sees it left alone by kerf.

use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use kerf::agent::state::Phase;
use kube::api::{Api, DynamicObject, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::json;

use super::super::world::{deployment, drive, pods, ready, res, World};
use super::hpas;

fn scaled_objects(w: &World) -> Api<DynamicObject> {
    let ar = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("keda.sh", "v1alpha1", "ScaledObject"),
        "scaledobjects",
    );
    Api::namespaced_with(w.admin.clone(), &w.ns.name, &ar)
}

/// The ScaledObject on `api`'s CPU at `utilization` % (beside a queue trigger), and the
/// HPA KEDA makes of it.
async fn scaled_object(w: &World, utilization: i32) {
    let api = scaled_objects(w);
    let so: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
        "metadata": { "name": "api-so", "namespace": w.ns.name },
        "spec": {
            "scaleTargetRef": { "name": "api" },
            "minReplicaCount": 2, "maxReplicaCount": 6,
            "triggers": [
                { "type": "rabbitmq", "metadata": { "queueName": "jobs", "value": "20" } },
                { "type": "cpu", "metricType": "Utilization",
                  "metadata": { "value": utilization.to_string() } },
            ],
        },
    }))
    .expect("scaled object");
    let so = api
        .create(&PostParams::default(), &so)
        .await
        .expect("create the ScaledObject");
    let hpa: HorizontalPodAutoscaler = serde_json::from_value(json!({
        "metadata": {
            "name": "keda-hpa-api-so", "namespace": w.ns.name,
            "ownerReferences": [{ "apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
                "name": "api-so", "uid": so.metadata.uid, "controller": true,
                "blockOwnerDeletion": true }],
        },
        "spec": {
            "scaleTargetRef": { "apiVersion": "apps/v1", "kind": "Deployment", "name": "api" },
            "minReplicas": 2, "maxReplicas": 6,
            "metrics": [{ "type": "Resource", "resource": { "name": "cpu",
                "target": { "type": "Utilization", "averageUtilization": utilization } } }],
        },
    }))
    .expect("hpa");
    let pp = PostParams {
        field_manager: Some("keda".into()),
        ..PostParams::default()
    };
    Api::<HorizontalPodAutoscaler>::namespaced(w.admin.clone(), &w.ns.name)
        .create(&pp, &hpa)
        .await
        .expect("create KEDA's HPA");
}

#[tokio::test]
async fn a_keda_scaled_object_on_cpu_gets_the_trigger_value_that_keeps_its_scaling_point() {
    let w = World::now("guard-keda", 4000, 8192).await;
    let key = w
        .create(&deployment("api", 2, res(500, 1000, 256, 512)))
        .await;
    ready(&w, &key, 2).await;
    scaled_object(&w, 40).await;
    w.policy("auto", json!({})).await;
    w.recommend(&key, res(250, 500, 256, 512)).await;
    let hpa_before = hpas(&w).await;
    assert_eq!(hpa_before.len(), 1);
    assert_eq!(
        hpa_before[0].controller.as_ref().map(|o| o.kind.as_str()),
        Some("ScaledObject")
    );
    let mut agent = w.agent().await;
    drive(&mut agent, "the change applied", |a| {
        a.state(&key)
            .is_some_and(|s| s.phase == Phase::Applied && s.operation.is_none())
    })
    .await;
    let so = scaled_objects(&w)
        .get("api-so")
        .await
        .expect("the ScaledObject");
    let triggers = &so.data["spec"]["triggers"];
    // 500m → 250m: 80 % keeps today's scaling point.
    assert_eq!(triggers[1]["metadata"]["value"], "80");
    assert_eq!(
        triggers[0],
        json!({ "type": "rabbitmq", "metadata": { "queueName": "jobs", "value": "20" } }),
        "the other trigger is untouched"
    );
    assert_eq!(triggers[1]["metricType"], "Utilization");
    assert_eq!(
        hpas(&w).await,
        hpa_before,
        "KEDA's HPA is KEDA's to write: kerf left it as it was"
    );
    // The policy resizes in place: each pod runs the new request.
    for p in pods(&w, &key).await {
        let app = p.containers.iter().find(|c| c.name == "app").expect("app");
        assert_eq!(app.resources.cpu_request, Some(250), "{}", p.pod.name);
    }
    w.deliver(&agent).await;
    let events = w.audit().await;
    let applied = events
        .iter()
        .find(|e| e["type"] == "applied" && e["workload"]["name"] == "api")
        .unwrap_or_else(|| panic!("an applied event: {events:#?}"));
    assert_eq!(applied["details"]["scaledObject"], "api-so");
    assert_eq!(applied["details"]["hpa"], "keda-hpa-api-so");
    assert_eq!(applied["details"]["hpaTargetFrom"], "40");
    assert_eq!(applied["details"]["hpaTargetTo"], "80");
}
