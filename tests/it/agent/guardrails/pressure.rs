//! Per-resource guardrails against the real API server: the pressed or runtime-bound
//! resource is refused and kept on the pods, the other one changes (in place):
//! `Throttled` (the kubelet's counters, read as the agent), `OOMKilled` (the pods'
//! last termination), `JVMFixedHeap` (`-Xmx` in `JAVA_OPTS`) and
//! `RestartPolicyRequired` (a Python image without `RestartContainer` for memory).

use std::time::Duration;

use kerf::agent::state::Phase;
use kerf::cluster::{Resources, WorkloadKey};
use serde_json::{json, Value};

use super::super::world::{deployment, drive, pods, ready, res, Spec, World};
use super::{kinds, of, one, pair};
use crate::support::eventually;

/// Creates `spec` and waits for its pods.
async fn create(w: &World, spec: &Spec) -> WorkloadKey {
    let key = w.create(spec).await;
    ready(w, &key, spec.replicas as usize).await;
    key
}

/// Applies the base policy and recommends `suggested` for `key`; drives the agent until
/// the change is live; returns the stored events.
async fn apply_one(w: &World, key: &WorkloadKey, suggested: Resources) -> Vec<Value> {
    let key = key.clone();
    w.policy("auto", json!({})).await;
    w.recommend(&key, suggested).await;
    let mut agent = w.agent().await;
    drive(&mut agent, "the change applied", |a| {
        a.state(&key)
            .is_some_and(|s| s.phase == Phase::Applied && s.operation.is_none())
    })
    .await;
    for _ in 0..3 {
        agent.pass().await;
    }
    w.deliver(&agent).await;
    w.audit().await
}

/// Every pod runs with `cpu` of `want` and memory of `memory` (from the status).
async fn running(w: &World, key: &WorkloadKey, want: Resources) {
    for p in pods(w, key).await {
        assert_eq!(
            p.status("app").and_then(|s| s.resources),
            Some(want),
            "{}",
            p.pod.name
        );
    }
}

/// `want` with `cpu` from `a` and memory from `b`.
fn mix(a: Resources, b: Resources) -> Resources {
    Resources {
        cpu_request: a.cpu_request,
        cpu_limit: a.cpu_limit,
        memory_request: b.memory_request,
        memory_limit: b.memory_limit,
    }
}

#[tokio::test]
async fn a_throttled_container_keeps_its_cpu_while_memory_changes() {
    let w = World::now("guard-throttled", 4000, 8192).await;
    // Wants 800m under a 400m limit: throttled in about half its periods.
    let base = res(400, 400, 256, 512);
    let spec = deployment("busy", 2, base).using(800.0, 100.0);
    let key = create(&w, &spec).await;
    // Long enough for the kubelet to have counted well over the minimum of periods.
    let admin_view = crate::support::kube::control_plane().agent_cluster().await;
    let node = kerf::cluster::Cluster::snapshot(&admin_view, std::slice::from_ref(&w.ns.name))
        .await
        .expect("snapshot")
        .nodes
        .into_iter()
        .find(|n| n.name.starts_with(&w.ns.name))
        .expect("node");
    eventually(
        "throttled periods counted",
        Duration::from_secs(60),
        || async {
            let c = kerf::cluster::Cluster::cpu_counters(&admin_view, &node)
                .await
                .ok()?;
            c.iter()
                .filter(|c| c.pod.name.starts_with("busy-"))
                .all(|c| c.periods >= 150)
                .then_some(())
        },
    )
    .await;
    let suggested = res(300, 300, 200, 400);
    let events = apply_one(&w, &key, suggested).await;
    assert_eq!(
        kinds(&of(&events, "busy")),
        [
            pair("blocked", "Throttled"),
            pair("applied", "RecommendationApplied"),
            // The refused resource still differs: the next pass waits for the cooldown.
            pair("blocked", "Cooldown")
        ]
    );
    let t = one(&events, "busy", "Throttled");
    assert_eq!(t["resources"], json!(["cpu"]));
    let ratio: f64 = t["details"]["throttlingRatio"]
        .as_str()
        .and_then(|r| r.parse().ok())
        .expect("ratio");
    assert!(ratio > 0.25, "{t}");
    let applied = one(&events, "busy", "RecommendationApplied");
    assert_eq!(applied["resources"], json!(["memory"]));
    running(&w, &key, mix(base, suggested)).await;
}

#[tokio::test]
async fn an_oom_killed_container_keeps_its_memory_while_cpu_changes() {
    let w = World::now("guard-oom", 4000, 8192).await;
    // Uses 300 Mi under a 256 Mi limit: OOM-killed again and again.
    let base = res(500, 1000, 256, 256);
    let spec = deployment("tight", 2, base).using(50.0, 300.0);
    let key = create(&w, &spec).await;
    eventually("an OOM kill", Duration::from_secs(60), || async {
        pods(&w, &key)
            .await
            .iter()
            .any(|p| {
                p.status("app")
                    .and_then(|s| s.last_termination.as_ref())
                    .is_some_and(|t| t.reason == "OOMKilled")
            })
            .then_some(())
    })
    .await;
    let suggested = res(250, 500, 200, 256);
    let events = apply_one(&w, &key, suggested).await;
    assert_eq!(
        kinds(&of(&events, "tight")),
        [
            pair("blocked", "OOMKilled"),
            pair("applied", "RecommendationApplied"),
            // The refused resource still differs: the next pass waits for the cooldown.
            pair("blocked", "Cooldown")
        ]
    );
    let o = one(&events, "tight", "OOMKilled");
    assert_eq!(o["resources"], json!(["memory"]));
    assert!(
        o["details"]["pod"]
            .as_str()
            .is_some_and(|p| p.starts_with("tight-")),
        "{o}"
    );
    assert_eq!(o["details"]["container"], "app");
    running(&w, &key, mix(suggested, base)).await;
}

#[tokio::test]
async fn a_jvm_with_a_fixed_heap_keeps_its_memory() {
    let w = World::now("guard-jvm", 4000, 8192).await;
    let base = res(500, 1000, 768, 1024);
    let spec = deployment("orders", 2, base).container(json!({
        "image": "eclipse-temurin:21-jre",
        "env": [{ "name": "JAVA_OPTS", "value": "-Xms512m -Xmx512m -XX:+UseG1GC" }],
    }));
    let key = create(&w, &spec).await;
    let suggested = res(250, 500, 600, 800);
    let events = apply_one(&w, &key, suggested).await;
    assert_eq!(
        kinds(&of(&events, "orders")),
        [
            pair("blocked", "JVMFixedHeap"),
            pair("applied", "RecommendationApplied"),
            // The refused resource still differs: the next pass waits for the cooldown.
            pair("blocked", "Cooldown")
        ]
    );
    let j = one(&events, "orders", "JVMFixedHeap");
    assert_eq!(j["details"]["heapOption"], "-Xmx512m");
    assert_eq!(j["resources"], json!(["memory"]));
    running(&w, &key, mix(suggested, base)).await;
}

#[tokio::test]
async fn python_in_place_without_restart_container_keeps_its_memory() {
    let w = World::now("guard-python", 4000, 8192).await;
    let base = res(500, 1000, 256, 512);
    let spec = deployment("worker", 2, base).container(json!({
        "image": "python:3.12-slim", "command": ["gunicorn", "app:app"],
    }));
    let key = create(&w, &spec).await;
    let suggested = res(250, 500, 200, 400);
    let events = apply_one(&w, &key, suggested).await;
    assert_eq!(
        kinds(&of(&events, "worker")),
        [
            pair("blocked", "RestartPolicyRequired"),
            pair("applied", "RecommendationApplied"),
            // The refused resource still differs: the next pass waits for the cooldown.
            pair("blocked", "Cooldown")
        ]
    );
    let r = one(&events, "worker", "RestartPolicyRequired");
    assert_eq!(r["details"]["runtime"], "Python");
    assert_eq!(r["resources"], json!(["memory"]));
    running(&w, &key, mix(suggested, base)).await;
    assert!(pods(&w, &key)
        .await
        .iter()
        .all(|p| p.status("app").is_some_and(|s| s.restart_count == 0)));
}
