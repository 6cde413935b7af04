//! Release to GitOps against the real API server: after a switch from `auto-patch` to
//! `audit`, `managedFields` no longer lists `kerf` for the resources fields (the values
//! stay), and another manager's apply of its own values succeeds without a conflict;
//! never while paused; a release the API refuses is `failed ReleaseError`.

use k8s_openapi::api::apps::v1::Deployment;
use kerf::agent::state::Phase;
use kerf::cluster::kube::KubeCluster;
use kerf::cluster::{ApplyMode, Cluster, ContainerResources, WorkloadKey};
use kube::api::Api;
use serde_json::json;

use super::super::world::{deployment, drive, ready, res, TestAgent, World};
use super::{freeze_deployments, kinds, of, one, pair, workload};

/// The managers named in the Deployment's `managedFields` that own a container's
/// `resources`.
async fn resource_managers(w: &World, name: &str) -> Vec<String> {
    let d = Api::<Deployment>::namespaced(w.admin.clone(), &w.ns.name)
        .get(name)
        .await
        .expect("deployment");
    d.metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .filter(|e| {
            let text = e
                .fields_v1
                .as_ref()
                .map(|f| f.0.to_string())
                .unwrap_or_default();
            text.contains("f:resources")
        })
        .filter_map(|e| e.manager)
        .collect()
}

/// Applies by rollout (kerf then owns the resources fields) and returns the agent.
async fn rolled_out(w: &World, key: &WorkloadKey) -> (TestAgent, i64) {
    ready(w, key, 2).await;
    let policy = w
        .policy("auto", json!({ "apply": { "strategy": "rollout" } }))
        .await;
    w.recommend(key, res(250, 500, 200, 400)).await;
    let mut agent = w.agent().await;
    drive(&mut agent, "rolled out", |a| {
        a.state(key)
            .is_some_and(|s| s.phase == Phase::Applied && s.operation.is_none())
    })
    .await;
    (agent, policy)
}

#[tokio::test]
async fn leaving_auto_patch_releases_kerfs_fields_and_git_applies_without_conflict() {
    let w = World::now("guard-release", 4000, 8192).await;
    let key = w
        .create(&deployment("web", 2, res(500, 1000, 256, 512)))
        .await;
    let (mut agent, policy) = rolled_out(&w, &key).await;
    assert!(resource_managers(&w, "web")
        .await
        .contains(&"kerf".to_string()));
    // Paused: the mode changes, nothing is released.
    let (s, v) = w
        .hub
        .as_token(&w.hub.admin)
        .call(
            "POST",
            &format!("/v1/clusters/{}/pause", w.cluster),
            Some(json!({ "reason": "change board" })),
        )
        .await;
    assert_eq!(s, 200, "{v}");
    w.update_policy(
        policy,
        json!({ "mode": { "cpu": "audit", "memory": "audit" } }),
    )
    .await;
    for _ in 0..3 {
        agent.pass().await;
    }
    assert!(resource_managers(&w, "web")
        .await
        .contains(&"kerf".to_string()));
    let (s, v) = w
        .hub
        .as_token(&w.hub.admin)
        .call(
            "POST",
            &format!("/v1/clusters/{}/resume", w.cluster),
            Some(json!({})),
        )
        .await;
    assert_eq!(s, 200, "{v}");
    drive(&mut agent, "released", |a| {
        a.state(&key)
            .is_some_and(|s| s.last_reason == Some(kerf::wire::Reason::ModeChanged))
    })
    .await;
    agent.pass().await;
    w.deliver(&agent).await;
    // kerf no longer owns the resources; the values stayed where they were.
    let managers = resource_managers(&w, "web").await;
    assert!(!managers.contains(&"kerf".to_string()), "{managers:?}");
    assert_eq!(
        workload(&w, &key).await.containers[0].resources,
        res(250, 500, 200, 400)
    );
    let events = w.audit().await;
    assert_eq!(
        kinds(&of(&events, "web")),
        [
            pair("applied", "RecommendationApplied"),
            pair("blocked", "Paused"),
            pair("released", "ModeChanged"),
            pair("skipped", "ModeAudit")
        ]
    );
    let e = one(&events, "web", "ModeChanged");
    assert_eq!(e["details"]["previousMode"], "auto-patch");
    assert_eq!(e["details"]["newMode"], "audit");
    assert_eq!(e["strategy"], "rollout");
    // Git's values, applied by the GitOps tool's manager without force: no conflict.
    let git = KubeCluster::new(w.admin.clone()).with_field_manager("argocd-controller");
    let applied = git
        .apply_template_resources(
            &key,
            &[ContainerResources::set("app", res(500, 1000, 256, 512))],
            ApplyMode::default(),
        )
        .await
        .expect("the GitOps tool's apply succeeds without a conflict");
    assert_eq!(applied.containers[0].resources, res(500, 1000, 256, 512));
    assert!(resource_managers(&w, "web")
        .await
        .contains(&"argocd-controller".to_string()));
}

#[tokio::test]
async fn a_release_the_api_refuses_is_failed_release_error_and_is_tried_again() {
    let w = World::now("guard-release-error", 4000, 8192).await;
    let key = w
        .create(&deployment("web", 2, res(500, 1000, 256, 512)))
        .await;
    let (mut agent, policy) = rolled_out(&w, &key).await;
    freeze_deployments(&w, &key).await;
    w.update_policy(
        policy,
        json!({ "mode": { "cpu": "audit", "memory": "audit" } }),
    )
    .await;
    drive(&mut agent, "the release failed", |a| {
        a.state(&key).is_some_and(|s| s.phase == Phase::Failed)
    })
    .await;
    for _ in 0..3 {
        agent.pass().await;
    }
    w.deliver(&agent).await;
    let events = w.audit().await;
    assert_eq!(
        kinds(&of(&events, "web")),
        [
            pair("applied", "RecommendationApplied"),
            pair("failed", "ReleaseError")
        ],
        "reported once, tried again quietly"
    );
    let e = one(&events, "web", "ReleaseError");
    assert!(
        e["message"]
            .as_str()
            .is_some_and(|m| m.contains("frozen by the change board")),
        "{e}"
    );
    assert_eq!(e["details"]["newMode"], "audit");
    assert!(resource_managers(&w, "web")
        .await
        .contains(&"kerf".to_string()));
}
