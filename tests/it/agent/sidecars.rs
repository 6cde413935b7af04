//! Native sidecars (issue 31, done means 1): a Deployment with an Istio-style sidecar
//! (an init container with `restartPolicy: Always`) gets the sidecar's recommendation
//! applied in place. The API server accepts the `resize` of `spec.initContainers`, the
//! sim kubelet reports it in `initContainerStatuses`, the same pods keep running, the
//! app container is not restarted, and the audit trail names the sidecar.

use k8s_openapi::api::apps::v1::Deployment;
use kerf::cluster::{ContainerRole, Pod};
use kube::api::Api;
use serde_json::{json, Value};

use super::apply::{leaf_paths, resources_of};
use super::world::{deployment, drive, merge, ready, res, Rec, World};

/// An Istio-style pod: a plain init container that sets up networking, then the proxy
/// as a native sidecar, then the app.
fn meshed() -> super::world::Spec {
    let mut spec = deployment("shop", 2, res(500, 1000, 256, 512));
    merge(
        &mut spec.patch,
        json!({ "spec": { "template": { "spec": { "initContainers": [
            { "name": "istio-init", "image": "registry.example/proxyv2:1",
              "resources": { "requests": { "cpu": "100m", "memory": "64Mi" },
                             "limits": { "cpu": "200m", "memory": "128Mi" } } },
            { "name": "istio-proxy", "image": "registry.example/proxyv2:1", "restartPolicy": "Always",
              "resources": { "requests": { "cpu": "400m", "memory": "512Mi" },
                             "limits": { "cpu": "800m", "memory": "1Gi" } } },
        ] } } } }),
    );
    spec
}

#[tokio::test]
async fn a_native_sidecar_is_resized_in_place_and_the_app_keeps_running() {
    let w = World::new("agent-sidecar", 4000, 8192).await;
    let key = w.create(&meshed()).await;
    let before = ready(&w, &key, 2).await;
    let roles: Vec<(String, ContainerRole)> = before[0]
        .containers
        .iter()
        .map(|c| (c.name.clone(), c.role))
        .collect();
    assert_eq!(
        roles,
        [
            ("istio-init".to_string(), ContainerRole::Init),
            ("istio-proxy".to_string(), ContainerRole::Sidecar),
            ("app".to_string(), ContainerRole::App),
        ],
        "the agent reads init containers and sidecars in spec order"
    );
    // The pod's effective request: the app and its sidecar (the init container is smaller).
    assert_eq!(before[0].requests(), (900, 768 << 20));
    w.policy("auto", json!({})).await;
    let sidecar = Rec {
        container: "istio-proxy",
        ..Rec::default()
    };
    w.recommend_with(&key, res(150, 300, 128, 256), sidecar)
        .await;
    let mut agent = w.agent().await;
    drive(&mut agent, "the sidecar applied in place", |a| {
        a.state(&key)
            .is_some_and(|s| s.phase == kerf::agent::state::Phase::Applied && s.operation.is_none())
    })
    .await;
    let after = ready(&w, &key, 2).await;
    let uids = |p: &[Pod]| p.iter().map(|p| p.uid.clone()).collect::<Vec<_>>();
    assert_eq!(uids(&after), uids(&before), "no pod was replaced");
    for p in &after {
        let proxy = p.container("istio-proxy").expect("the sidecar");
        assert_eq!(proxy.resources, res(150, 300, 128, 256), "{}", p.pod.name);
        let status = p.status("istio-proxy").expect("the sidecar's status");
        assert_eq!(status.resources, Some(res(150, 300, 128, 256)));
        let app = p.status("app").expect("the app's status");
        assert_eq!(app.restart_count, 0, "{}: the app restarted", p.pod.name);
        assert_eq!(app.resources, Some(res(500, 1000, 256, 512)));
        assert_eq!(
            p.container("istio-init").expect("init").resources,
            res(100, 200, 64, 128),
            "the init container is left alone"
        );
        assert_eq!(p.requests(), (650, 384 << 20));
    }
    w.deliver(&agent).await;
    let events = w.audit().await;
    let applied: Vec<&Value> = events.iter().filter(|e| e["type"] == "applied").collect();
    assert_eq!(applied.len(), 1, "{events:#?}");
    assert_eq!(applied[0]["strategy"], "in-place");
    assert_eq!(
        applied[0]["containers"],
        json!([{ "name": "istio-proxy",
                 "from": { "requests": { "cpu": "400m", "memory": "512Mi" }, "limits": { "cpu": "800m", "memory": "1Gi" } },
                 "to": { "requests": { "cpu": "150m", "memory": "128Mi" }, "limits": { "cpu": "300m", "memory": "256Mi" } } }])
    );
}

#[tokio::test]
async fn an_init_container_change_rolls_out_and_kerf_owns_only_its_resources() {
    let w = World::new("agent-init", 4000, 8192).await;
    let key = w.create(&meshed()).await;
    let before = ready(&w, &key, 2).await;
    w.policy("auto", json!({})).await;
    let init = Rec {
        container: "istio-init",
        ..Rec::default()
    };
    w.recommend_with(&key, res(50, 100, 32, 64), init).await;
    let mut agent = w.agent().await;
    drive(&mut agent, "the init container rolled out", |a| {
        a.state(&key)
            .is_some_and(|s| s.phase == kerf::agent::state::Phase::Applied && s.operation.is_none())
    })
    .await;
    // New pods carry the init container's new values (it cannot be resized in place).
    let after = crate::support::eventually(
        "new pods with the init container's values",
        crate::support::secs(60),
        async || {
            let p = ready(&w, &key, 2).await;
            let done = p.iter().all(|p| {
                p.container("istio-init").map(|c| c.resources) == Some(res(50, 100, 32, 64))
            });
            if done {
                Ok(p)
            } else {
                Err(p.iter().map(|p| p.pod.name.clone()).collect::<Vec<_>>())
            }
        },
    )
    .await;
    assert!(after.iter().all(|p| before.iter().all(|b| b.uid != p.uid)));
    w.deliver(&agent).await;
    let events = w.audit().await;
    let fallback = events
        .iter()
        .find(|e| e["type"] == "fallback")
        .unwrap_or_else(|| panic!("a fallback event: {events:#?}"));
    assert!(
        fallback["message"]
            .as_str()
            .unwrap_or_default()
            .contains("istio-init is an init container"),
        "{fallback:#}"
    );
    let applied = events
        .iter()
        .find(|e| e["type"] == "applied")
        .expect("applied");
    assert_eq!(applied["strategy"], "rollout");
    // kerf's server-side apply owns exactly the init container's resources fields.
    let d = Api::<Deployment>::namespaced(w.admin.clone(), &w.ns.name)
        .get("shop")
        .await
        .expect("deployment");
    let entries = d.metadata.managed_fields.unwrap_or_default();
    let kerf = entries
        .iter()
        .find(|e| e.manager.as_deref() == Some("kerf"))
        .expect("kerf's entry");
    let mut leaves = Vec::new();
    let fields = kerf.fields_v1.as_ref().expect("fieldsV1").0.clone();
    leaf_paths(&fields, String::new(), &mut leaves);
    leaves.sort();
    assert_eq!(leaves, resources_of("initContainers", "istio-init"));
}
