//! Rollouts that stop making progress, against the real API server, controller-manager
//! and scheduler. A pod in another namespace, which the namespace-scoped agent does not
//! see, fills the node, so the agent's check finds room the scheduler does not: the new
//! pods stay Pending. A Deployment rolled back after the stall bound (the agent's
//! clock moved past it), one rolled back at once on `ProgressDeadlineExceeded`, and a
//! StatefulSet whose second pod never becomes ready: each is `rolled_back
//! RolloutStalled` with its evidence, and the old values are live again.

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod as KPod;
use kerf::agent::decide::stall::STALL_AFTER_MS;
use kerf::agent::state::Phase;
use kerf::cluster::kube::KubeCluster;
use kerf::cluster::{Cluster, EventType, WorkloadKey, WorkloadKind};
use kube::api::{Api, PostParams};
use serde_json::json;

use super::super::world::{deployment, drive, pods, ready, res, Spec, TestAgent, World};
use super::{kinds, of, one, pair, workload};
use crate::support::kube::namespace;
use crate::support::kube::objects::POOL_LABEL;

/// A pod of another namespace on the world's node, requesting `cpu_millis`.
async fn filler(w: &World, cpu_millis: u64) {
    let other = namespace(&w.admin, "filler").await;
    let pod: KPod = serde_json::from_value(json!({
        "metadata": { "name": "filler", "namespace": other.name },
        "spec": {
            "nodeSelector": { POOL_LABEL: w.ns.name },
            "containers": [{ "name": "app", "image": "registry.example/filler:1",
                "resources": { "requests": { "cpu": format!("{cpu_millis}m"), "memory": "64Mi" } } }],
        },
    }))
    .expect("filler pod");
    Api::<KPod>::namespaced(w.admin.clone(), &other.name)
        .create(&PostParams::default(), &pod)
        .await
        .expect("create the filler");
    crate::support::eventually("the filler running", Duration::from_secs(60), async || {
        let p = Api::<KPod>::namespaced(w.admin.clone(), &other.name)
            .get("filler")
            .await
            .expect("read the filler");
        p.status.and_then(|s| s.phase).as_deref() == Some("Running")
    })
    .await;
}

/// A pod of `key` stays Pending, refused by the scheduler.
async fn pending(w: &World, key: &WorkloadKey) -> String {
    crate::support::eventually("a Pending pod", Duration::from_secs(60), async || {
        pods(w, key)
            .await
            .into_iter()
            .find(|p| p.unschedulable.is_some())
            .map(|p| p.pod.name)
    })
    .await
}

fn rolled_back(a: &TestAgent, key: &WorkloadKey) -> bool {
    a.state(key)
        .is_some_and(|s| s.rolled_back.is_some() && s.operation.is_none())
}

/// The rollback's own rollout is over: its watch ended without a failure.
async fn rolled_out_again(agent: &mut TestAgent, key: &WorkloadKey) {
    drive(agent, "the previous values rolled out again", |a| {
        a.state(key).is_some_and(|s| {
            s.rolled_back.is_some()
                && s.watch.is_none()
                && s.operation.is_none()
                && s.phase != Phase::Failed
        })
    })
    .await;
}

/// Drives the agent until its watch has noted the rollout stuck at `updated` and
/// `available` pods (before the clock moves past the bound, so the counts it last saw
/// move are those).
async fn noted(agent: &mut TestAgent, key: &WorkloadKey, updated: i32, available: i32) {
    drive(agent, "the stuck counts noted", |a| {
        a.state(key)
            .and_then(|s| s.watch.as_ref()?.progress)
            .is_some_and(|p| !p.done && (p.updated, p.available) == (updated, available))
    })
    .await;
}

#[tokio::test]
async fn a_rollout_whose_new_pods_stay_pending_is_rolled_back_after_the_bound() {
    let w = World::now("stall-pending", 4000, 8192).await;
    let key = w
        .create(&deployment("api", 2, res(500, 1000, 256, 512)))
        .await;
    let before = ready(&w, &key, 2).await;
    // 4 CPU: 1 for api, 2.2 for the filler; the new 1-CPU pod finds 0.8.
    filler(&w, 2200).await;
    w.policy("auto", json!({ "apply": { "strategy": "rollout" } }))
        .await;
    w.recommend(&key, res(1000, 2000, 256, 512)).await;
    let mut agent = w.agent().await;
    drive(&mut agent, "applied", |a| {
        a.state(&key)
            .is_some_and(|s| s.phase == Phase::Applied && s.watch.is_some())
    })
    .await;
    let stuck = pending(&w, &key).await;
    noted(&mut agent, &key, 1, 2).await;
    // Within the bound the watch waits.
    for _ in 0..3 {
        agent.pass().await;
    }
    let s = agent.state(&key).expect("tracked");
    assert!(s.watch.is_some() && s.rolled_back.is_none(), "{s:?}");
    w.hub.clock.advance(STALL_AFTER_MS + 60_000);
    drive(&mut agent, "rolled back", |a| rolled_back(a, &key)).await;
    rolled_out_again(&mut agent, &key).await;
    w.deliver(&agent).await;
    let events = w.audit().await;
    // Then the cooldown holds the next attempt, as after any rollback.
    let got: Vec<_> = kinds(&of(&events, "api"))
        .into_iter()
        .filter(|k| *k != pair("skipped", "NoSignificantChange"))
        .collect();
    assert_eq!(
        got,
        [
            pair("applied", "RecommendationApplied"),
            pair("rolled_back", "RolloutStalled"),
            pair("blocked", "Cooldown")
        ]
    );
    let e = one(&events, "api", "RolloutStalled");
    assert_eq!(e["details"]["stall"], "PodsPending");
    assert_eq!(e["details"]["pod"], stuck);
    assert!(
        e["details"]["scheduling"]
            .as_str()
            .is_some_and(|m| m.contains("Insufficient cpu")),
        "{e}"
    );
    // The new ReplicaSet's one pod counts as updated, Pending or not.
    assert_eq!(e["details"]["updated"], "1/2");
    assert_eq!(e["details"]["available"], "2/2");
    assert_eq!(e["containers"][0]["to"]["requests"]["cpu"], "500m", "{e}");
    // The old template is live again and its pods were never replaced.
    assert_eq!(
        workload(&w, &key).await.containers[0].resources,
        res(500, 1000, 256, 512)
    );
    let now: Vec<String> = ready(&w, &key, 2)
        .await
        .into_iter()
        .map(|p| p.uid)
        .collect();
    let then: Vec<String> = before.into_iter().map(|p| p.uid).collect();
    assert_eq!(now, then);
    // On the record, the rollback is a Warning Event (the change a Normal one).
    let admin = KubeCluster::new(w.admin.clone());
    let records = admin
        .records(std::slice::from_ref(&w.ns.name))
        .await
        .expect("records");
    let record = records
        .iter()
        .find(|r| r.name == "deployment-api")
        .expect("the record");
    let kube_events = admin.events(&record.object_ref()).await.expect("events");
    let type_of = |reason: &str| {
        kube_events
            .iter()
            .find(|e| e.event.reason == reason)
            .map(|e| e.event.event_type)
    };
    assert_eq!(
        type_of("RolloutStalled"),
        Some(EventType::Warning),
        "{kube_events:#?}"
    );
    assert_eq!(type_of("RecommendationApplied"), Some(EventType::Normal));
}

#[tokio::test]
async fn a_progress_deadline_exceeded_is_rolled_back_at_once() {
    let w = World::now("stall-deadline", 4000, 8192).await;
    let spec = deployment("api", 2, res(500, 1000, 256, 512))
        .patch(json!({ "spec": { "progressDeadlineSeconds": 3 } }));
    let key = w.create(&spec).await;
    ready(&w, &key, 2).await;
    filler(&w, 2200).await;
    w.policy("auto", json!({ "apply": { "strategy": "rollout" } }))
        .await;
    w.recommend(&key, res(1000, 2000, 256, 512)).await;
    let mut agent = w.agent().await;
    // The agent's clock never moves: only the controller's verdict can end it.
    drive(&mut agent, "rolled back on the deadline", |a| {
        rolled_back(a, &key)
    })
    .await;
    rolled_out_again(&mut agent, &key).await;
    w.deliver(&agent).await;
    let events = w.audit().await;
    let e = one(&events, "api", "RolloutStalled");
    assert_eq!(e["details"]["stall"], "ProgressDeadlineExceeded");
    assert!(
        e["details"]["condition"]
            .as_str()
            .is_some_and(|m| m.contains("has timed out progressing")),
        "{e}"
    );
    assert_eq!(
        workload(&w, &key).await.containers[0].resources,
        res(500, 1000, 256, 512)
    );
}

#[tokio::test]
async fn a_statefulset_whose_second_pod_never_becomes_ready_is_rolled_back() {
    let w = World::now("stall-sts", 4000, 8192).await;
    let spec = Spec {
        kind: WorkloadKind::StatefulSet,
        ..deployment("db", 2, res(500, 1000, 256, 512))
    };
    let key = w.create(&spec).await;
    ready(&w, &key, 2).await;
    // 1 CPU for db, 2.7 for the filler: once db-1 goes, 0.8 for its 1-CPU successor.
    filler(&w, 2700).await;
    w.policy("auto", json!({ "apply": { "strategy": "rollout" } }))
        .await;
    w.recommend(&key, res(1000, 2000, 256, 512)).await;
    let mut agent = w.agent().await;
    drive(&mut agent, "applied", |a| {
        a.state(&key)
            .is_some_and(|s| s.phase == Phase::Applied && s.watch.is_some())
    })
    .await;
    let stuck = pending(&w, &key).await;
    assert_eq!(
        stuck, "db-1",
        "the StatefulSet replaces its highest ordinal first"
    );
    noted(&mut agent, &key, 1, 1).await;
    w.hub.clock.advance(STALL_AFTER_MS + 60_000);
    drive(&mut agent, "rolled back", |a| rolled_back(a, &key)).await;
    // The controller waits for a broken pod forever; the rollback replaces it.
    rolled_out_again(&mut agent, &key).await;
    w.deliver(&agent).await;
    let events = w.audit().await;
    let e = one(&events, "db", "RolloutStalled");
    assert_eq!(e["details"]["stall"], "PodsPending");
    assert_eq!(e["details"]["pod"], "db-1");
    for p in ready(&w, &key, 2).await {
        assert_eq!(
            p.status("app").and_then(|s| s.resources),
            Some(res(500, 1000, 256, 512)),
            "{}",
            p.pod.name
        );
    }
    assert_eq!(
        workload(&w, &key).await.containers[0].resources,
        res(500, 1000, 256, 512)
    );
}
