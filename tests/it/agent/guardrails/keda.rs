//! A KEDA `ScaledObject` on CPU (issue 31, coexistence), against the real API server with
//! KEDA's own CRD (from its Go module, `scripts/ensure-crds.sh`). KEDA makes an HPA from
//! the ScaledObject's triggers and writes it back whenever it differs, so kerf must not
//! coordinate by changing that HPA: the CPU change is held (`blocked HPACoupled`), the
//! event names the ScaledObject and the trigger value that would keep today's scaling
//! point, and the HPA is left as it was. No KEDA operator runs: the test makes the HPA
//! as KEDA would, controlled by the ScaledObject.

use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use kerf::agent::state::Phase;
use kube::api::{Api, DynamicObject, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::json;

use super::super::world::{deployment, drive, pods, ready, res, World};
use super::{fingerprint, hpas, kinds, of, one, pair, workload};

/// The ScaledObject on `api`'s CPU at `utilization` %, and the HPA KEDA makes of it.
async fn scaled_object(w: &World, utilization: i32) {
    let ar = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("keda.sh", "v1alpha1", "ScaledObject"),
        "scaledobjects",
    );
    let api: Api<DynamicObject> = Api::namespaced_with(w.admin.clone(), &w.ns.name, &ar);
    let so: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
        "metadata": { "name": "api-so", "namespace": w.ns.name },
        "spec": {
            "scaleTargetRef": { "name": "api" },
            "minReplicaCount": 2, "maxReplicaCount": 6,
            "triggers": [{ "type": "cpu", "metricType": "Utilization",
                           "metadata": { "value": utilization.to_string() } }],
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
async fn a_keda_scaled_object_on_cpu_holds_the_change_naming_the_trigger_value() {
    let w = World::now("guard-keda", 4000, 8192).await;
    let key = w
        .create(&deployment("api", 2, res(500, 1000, 256, 512)))
        .await;
    let before = ready(&w, &key, 2).await;
    scaled_object(&w, 40).await;
    w.policy("auto", json!({})).await;
    w.recommend(&key, res(250, 500, 256, 512)).await;
    let template = workload(&w, &key).await;
    let hpa_before = hpas(&w).await;
    assert_eq!(hpa_before.len(), 1);
    assert_eq!(
        hpa_before[0].controller.as_ref().map(|o| o.kind.as_str()),
        Some("ScaledObject")
    );
    let mut agent = w.agent().await;
    drive(&mut agent, "HPACoupled", |a| {
        a.state(&key).is_some_and(|s| s.phase == Phase::Blocked)
    })
    .await;
    agent.pass().await;
    w.deliver(&agent).await;
    let events = w.audit().await;
    assert_eq!(kinds(&of(&events, "api")), [pair("blocked", "HPACoupled")]);
    let e = one(&events, "api", "HPACoupled");
    assert_eq!(e["details"]["scaledObject"], "api-so");
    assert_eq!(e["details"]["hpa"], "keda-hpa-api-so");
    // 500m → 250m: 80 % keeps today's scaling point.
    assert_eq!(e["details"]["hpaTargetTo"], "80");
    assert!(
        e["message"]
            .as_str()
            .unwrap_or_default()
            .contains("set the ScaledObject's cpu trigger to 80 %"),
        "{e}"
    );
    assert_eq!(hpas(&w).await, hpa_before, "KEDA's HPA is as it was");
    assert_eq!(workload(&w, &key).await.generation, template.generation);
    assert_eq!(fingerprint(&pods(&w, &key).await), fingerprint(&before));
}
