//! The checks before a change, against the real API server, its quota controller and
//! scheduler: an increase past a ResourceQuota (`ResourceQuota`), values past a
//! LimitRange's max (`LimitRange`), and a request no node has room for, by rollout and
//! in place (`NoFittingNode`). Each is held: the template and the pods are untouched, and
//! the stored event says why.

use std::time::Duration;

use k8s_openapi::api::core::v1::{LimitRange, ResourceQuota};
use kerf::agent::state::Phase;
use kube::api::{Api, PostParams};
use serde_json::json;

use super::super::world::{deployment, drive, pods, ready, res, World};
use super::{fingerprint, kinds, of, one, pair, workload};

/// The quota's `status.used` of `requests.cpu` as the quota controller counted it.
async fn used_cpu(w: &World, name: &str) -> Option<String> {
    let q = Api::<ResourceQuota>::namespaced(w.admin.clone(), &w.ns.name)
        .get(name)
        .await
        .expect("read quota");
    q.status?.used?.get("requests.cpu").map(|v| v.0.clone())
}

/// Holds `key`'s change: drives the agent until the workload is blocked, a few passes
/// more, and returns the stored events.
async fn held(w: &World, key: &kerf::cluster::WorkloadKey, what: &str) -> Vec<serde_json::Value> {
    let mut agent = w.agent().await;
    drive(&mut agent, what, |a| {
        a.state(key).is_some_and(|s| s.phase == Phase::Blocked)
    })
    .await;
    for _ in 0..3 {
        agent.pass().await;
    }
    w.deliver(&agent).await;
    w.audit().await
}

#[tokio::test]
async fn an_increase_past_a_resource_quota_is_held_and_nothing_is_patched() {
    let w = World::now("guard-quota", 4000, 8192).await;
    let quota: ResourceQuota = serde_json::from_value(json!({
        "metadata": { "name": "team", "namespace": w.ns.name },
        "spec": { "hard": { "requests.cpu": "2" } },
    }))
    .expect("quota");
    Api::<ResourceQuota>::namespaced(w.admin.clone(), &w.ns.name)
        .create(&PostParams::default(), &quota)
        .await
        .expect("create quota");
    // Pods are admitted only once the quota controller has counted the namespace.
    crate::support::eventually("the quota counted", Duration::from_secs(30), async || {
        used_cpu(&w, "team").await.is_some()
    })
    .await;
    let key = w
        .create(&deployment("api", 2, res(500, 1000, 256, 512)))
        .await;
    let before = ready(&w, &key, 2).await;
    assert_eq!(used_cpu(&w, "team").await.as_deref(), Some("1"));
    let template = workload(&w, &key).await;
    w.policy("auto", json!({})).await;
    // 2 × (1200m − 500m) = 1400m more, and the quota has 1 CPU left.
    w.recommend(&key, res(1200, 2000, 256, 512)).await;
    let events = held(&w, &key, "ResourceQuota").await;
    assert_eq!(
        kinds(&of(&events, "api")),
        [pair("blocked", "ResourceQuota")]
    );
    let e = one(&events, "api", "ResourceQuota");
    assert_eq!(e["details"]["resourceQuota"], "team");
    assert_eq!(e["details"]["resource"], "requests.cpu");
    assert_eq!(e["details"]["needed"], "1400m");
    assert_eq!(e["details"]["available"], "1");
    assert_eq!(workload(&w, &key).await.generation, template.generation);
    assert_eq!(fingerprint(&pods(&w, &key).await), fingerprint(&before));
    for p in pods(&w, &key).await {
        assert_eq!(
            p.status("app").and_then(|s| s.resources),
            Some(res(500, 1000, 256, 512)),
            "no pod was resized"
        );
    }
}

#[tokio::test]
async fn values_past_a_limit_range_max_are_held() {
    let w = World::now("guard-limits", 4000, 8192).await;
    let key = w
        .create(&deployment("api", 2, res(500, 1000, 256, 512)))
        .await;
    let before = ready(&w, &key, 2).await;
    let range: LimitRange = serde_json::from_value(json!({
        "metadata": { "name": "bounds", "namespace": w.ns.name },
        "spec": { "limits": [{ "type": "Container", "max": { "cpu": "1" } }] },
    }))
    .expect("limit range");
    Api::<LimitRange>::namespaced(w.admin.clone(), &w.ns.name)
        .create(&PostParams::default(), &range)
        .await
        .expect("create limit range");
    let template = workload(&w, &key).await;
    w.policy("auto", json!({ "apply": { "strategy": "rollout" } }))
        .await;
    w.recommend(&key, res(800, 1500, 256, 512)).await;
    let events = held(&w, &key, "LimitRange").await;
    assert_eq!(kinds(&of(&events, "api")), [pair("blocked", "LimitRange")]);
    let e = one(&events, "api", "LimitRange");
    assert_eq!(e["details"]["limitRange"], "bounds");
    assert_eq!(e["details"]["resource"], "limits.cpu");
    assert_eq!(e["details"]["value"], "1500m");
    assert_eq!(e["details"]["limit"], "max 1");
    assert_eq!(workload(&w, &key).await.generation, template.generation);
    assert_eq!(fingerprint(&pods(&w, &key).await), fingerprint(&before));
}

/// A 2-CPU node running two 500m pods, and a recommendation of 1600m a pod: no node
/// has room for one, by `strategy`.
async fn no_room(tag: &str, strategy: &str) {
    let w = World::now(tag, 2000, 8192).await;
    let key = w
        .create(&deployment("api", 2, res(500, 1000, 256, 512)))
        .await;
    let before = ready(&w, &key, 2).await;
    let template = workload(&w, &key).await;
    w.policy("auto", json!({ "apply": { "strategy": strategy } }))
        .await;
    w.recommend(&key, res(1600, 2000, 256, 512)).await;
    let events = held(&w, &key, "NoFittingNode").await;
    assert_eq!(
        kinds(&of(&events, "api")),
        [pair("blocked", "NoFittingNode")],
        "{strategy}"
    );
    let e = one(&events, "api", "NoFittingNode");
    assert_eq!(e["details"]["podRequests"], "1600m CPU, 256Mi");
    let node = format!("{}-node", w.ns.name);
    // In place a pod's own 500m counts as room on its node; a surging rollout's not.
    let (cpu, memory) = if strategy == "in-place" {
        ("1500m", "7936Mi")
    } else {
        ("1", "7680Mi")
    };
    assert_eq!(
        e["details"]["largestFree"],
        format!("{cpu} CPU on {node}, {memory} on {node}"),
        "{strategy}"
    );
    assert_eq!(workload(&w, &key).await.generation, template.generation);
    assert_eq!(fingerprint(&pods(&w, &key).await), fingerprint(&before));
}

#[tokio::test]
async fn a_rollout_no_node_has_room_for_is_held() {
    no_room("guard-fit-roll", "rollout").await;
}

#[tokio::test]
async fn an_in_place_increase_no_node_has_room_for_is_held() {
    no_room("guard-fit-inplace", "in-place").await;
}
