//! Coexistence with a VerticalPodAutoscaler, against the real API server with the VPA's
//! own CRD (from its Go module, `scripts/ensure-crds.sh`): a VPA in `Auto` mode on the
//! workload blocks kerf (`blocked VPAConflict`, nothing changed in the cluster); set to
//! `Off` (recommendations only), kerf applies its change.

use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::json;

use super::world::{deployment, res, TestAgent, World};

async fn vpa(w: &World, mode: &str) {
    let ar = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("autoscaling.k8s.io", "v1", "VerticalPodAutoscaler"),
        "verticalpodautoscalers",
    );
    let api: Api<DynamicObject> = Api::namespaced_with(w.admin.clone(), &w.ns.name, &ar);
    let body = json!({
        "apiVersion": "autoscaling.k8s.io/v1",
        "kind": "VerticalPodAutoscaler",
        "metadata": { "name": "web-vpa" },
        "spec": {
            "targetRef": { "apiVersion": "apps/v1", "kind": "Deployment", "name": "web" },
            "updatePolicy": { "updateMode": mode },
        },
    });
    api.patch(
        "web-vpa",
        &PatchParams::apply("vpa-owner").force(),
        &Patch::Apply(&body),
    )
    .await
    .expect("apply the VPA");
}

#[tokio::test]
async fn a_vpa_in_auto_mode_blocks_kerf_and_one_set_to_off_lets_it_apply() {
    let w = World::new("agent-vpa", 4000, 8192).await;
    let web = w
        .create(&deployment("web", 2, res(500, 1000, 256, 512)))
        .await;
    w.policy("auto", json!({})).await;
    vpa(&w, "Auto").await;
    w.recommend(&web, res(250, 500, 200, 400)).await;
    // Let the pods come up before taking the picture.
    w.pods_running(2).await;
    let before = w.workload_objects().await;
    let mut agent = w.agent().await;
    passes_until(&w, &mut agent, "blocked", Some("VPAConflict")).await;
    assert_eq!(
        w.workload_objects().await,
        before,
        "nothing changed under the VPA"
    );
    let audit = w.audit().await;
    let held = audit
        .iter()
        .find(|e| e["reason"] == "VPAConflict")
        .expect("the VPAConflict event");
    assert_eq!(held["details"]["vpa"], "web-vpa");
    assert_eq!(held["details"]["updateMode"], "Auto");
    assert!(held["message"]
        .as_str()
        .unwrap()
        .contains("set its updateMode to Off"));

    // Recommendations only: kerf may act.
    vpa(&w, "Off").await;
    passes_until(&w, &mut agent, "applied", None).await;
    let now = w.workload_objects().await;
    assert_ne!(now, before, "the requests changed");
    // In place (the policy's default strategy): the running pods carry the new requests.
    let resized = now
        .iter()
        .filter(|l| l.starts_with("web-") && l.contains("cpu_request: Some(250)"))
        .count();
    assert!(
        resized >= 1,
        "the recommended CPU request is in force: {now:#?}"
    );
}

/// Runs agent passes until the hub holds an event of `kind` (with `reason`, if given).
async fn passes_until(w: &World, agent: &mut TestAgent, kind: &str, reason: Option<&str>) {
    let what = format!("a {kind} {} event", reason.unwrap_or(""));
    crate::support::eventually(&what, crate::support::secs(60), async || {
        agent.pass().await;
        w.deliver(agent).await;
        let reasons = w.reasons().await;
        reasons
            .iter()
            .any(|(t, r)| t == kind && reason.is_none_or(|want| r == want))
            .then_some(())
            .ok_or(reasons)
    })
    .await;
}
