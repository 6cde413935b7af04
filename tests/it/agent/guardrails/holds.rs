//! Workload guardrails against the real API server: a single replica that an in-place
//! resize would restart, and an in-place change whose rollout fallback would take the
//! only pod down (`SingleReplicaUnsafe`, pods untouched); an `OnDelete` StatefulSet
//! whose PodDisruptionBudget refuses the eviction (`PodDisruptionBudget`, the outdated
//! pod still there, and never reported `applied`: its pods run the old values); an HPA with coordination off (`HPACoupled`, neither the HPA nor
//! the Deployment changed) and one coordinated (its target moved by exactly the ratio).

use kerf::agent::state::Phase;
use kerf::cluster::{UpdateStrategy, WorkloadKind};
use serde_json::json;

use super::super::world::{deployment, drive, pods, ready, res, Spec, World};
use super::{fingerprint, hpa, hpas, kinds, of, one, pair, pdb, workload};

#[tokio::test]
async fn a_single_replica_is_not_restarted_by_an_in_place_resize() {
    let w = World::now("guard-single", 4000, 8192).await;
    let spec = deployment("solo", 1, res(500, 1000, 256, 512)).container(json!({
        "resizePolicy": [{ "resourceName": "memory", "restartPolicy": "RestartContainer" }],
    }));
    let key = w.create(&spec).await;
    let before = ready(&w, &key, 1).await;
    let template = workload(&w, &key).await;
    w.policy("auto", json!({})).await;
    w.recommend(&key, res(500, 1000, 200, 400)).await;
    let mut agent = w.agent().await;
    drive(&mut agent, "SingleReplicaUnsafe", |a| {
        a.state(&key).is_some_and(|s| s.phase == Phase::Blocked)
    })
    .await;
    for _ in 0..3 {
        agent.pass().await;
    }
    w.deliver(&agent).await;
    let events = w.audit().await;
    assert_eq!(
        kinds(&of(&events, "solo")),
        [pair("blocked", "SingleReplicaUnsafe")]
    );
    let e = one(&events, "solo", "SingleReplicaUnsafe");
    assert_eq!(e["details"]["cause"], "restart");
    assert_eq!(e["details"]["replicas"], "1");
    assert!(
        e["message"]
            .as_str()
            .is_some_and(|m| m.contains("allow-disruption")),
        "{e}"
    );
    // The pod was not touched: same uid, generation and restarts; the template neither.
    assert_eq!(fingerprint(&pods(&w, &key).await), fingerprint(&before));
    assert_eq!(workload(&w, &key).await.generation, template.generation);
}

#[tokio::test]
async fn an_in_place_change_whose_fallback_would_leave_no_ready_pod_is_refused() {
    let w = World::now("guard-fallback", 4000, 8192).await;
    // Guaranteed (requests = limits): the new values make it Burstable, which a resize
    // may not do, so in place falls back to a rollout — and Recreate has no surge.
    let spec = deployment("solo", 1, res(500, 500, 256, 256))
        .patch(json!({ "spec": { "strategy": { "type": "Recreate" } } }));
    let key = w.create(&spec).await;
    let before = ready(&w, &key, 1).await;
    let template = workload(&w, &key).await;
    assert_eq!(template.strategy, UpdateStrategy::Recreate);
    w.policy("auto", json!({})).await;
    w.recommend(&key, res(250, 500, 200, 256)).await;
    let mut agent = w.agent().await;
    drive(&mut agent, "the fallback refused", |a| {
        a.state(&key).is_some_and(|s| s.phase == Phase::Blocked)
    })
    .await;
    for _ in 0..3 {
        agent.pass().await;
    }
    w.deliver(&agent).await;
    let events = w.audit().await;
    assert_eq!(
        kinds(&of(&events, "solo")),
        [pair("blocked", "SingleReplicaUnsafe")]
    );
    let e = one(&events, "solo", "SingleReplicaUnsafe");
    assert_eq!(e["details"]["fallbackReason"], "ResizeInfeasible");
    assert_eq!(e["details"]["cause"], "rollout without surge");
    assert_eq!(fingerprint(&pods(&w, &key).await), fingerprint(&before));
    let after = workload(&w, &key).await;
    assert_eq!(after.generation, template.generation, "no rollout");
    assert_eq!(
        after.containers[0].resources,
        template.containers[0].resources
    );
}

#[tokio::test]
async fn a_pdb_refusing_the_eviction_of_an_outdated_pod_is_reported_once() {
    let w = World::now("guard-pdb", 4000, 8192).await;
    let spec = Spec {
        kind: WorkloadKind::StatefulSet,
        on_delete: true,
        ..deployment("db", 2, res(500, 1000, 256, 512))
    }
    // Disruption accepted by the owner; the PodDisruptionBudget still protects it.
    .patch(
        json!({ "metadata": { "annotations": { "kerf.getkerf.dev/allow-disruption": "true" } } }),
    );
    let key = w.create(&spec).await;
    let before = ready(&w, &key, 2).await;
    pdb(&w, "db", 2).await;
    w.policy("auto", json!({ "apply": { "strategy": "rollout" } }))
        .await;
    w.recommend(&key, res(250, 500, 200, 400)).await;
    let mut agent = w.agent().await;
    drive(&mut agent, "PodDisruptionBudget", |a| {
        a.state(&key).is_some_and(|s| {
            s.reported
                .iter()
                .any(|r| r.reason == kerf::wire::Reason::PodDisruptionBudget)
        })
    })
    .await;
    for _ in 0..5 {
        agent.advance_all().await;
    }
    w.deliver(&agent).await;
    let events = w.audit().await;
    // The rollout never started: no pod was evicted, so nothing was applied (issue 27:
    // the hub counted a saving its pods never made).
    assert_eq!(
        kinds(&of(&events, "db")),
        [pair("blocked", "PodDisruptionBudget")]
    );
    let state = agent.state(&key).expect("tracked");
    assert_ne!(state.phase, Phase::Applied, "{state:?}");
    let e = one(&events, "db", "PodDisruptionBudget");
    let pod = e["details"]["pod"].as_str().expect("details.pod");
    assert!(pod.starts_with("db-"), "{e}");
    // The template has the new values; the pods were not evicted.
    assert_eq!(
        workload(&w, &key).await.containers[0].resources,
        res(250, 500, 200, 400)
    );
    assert_eq!(fingerprint(&pods(&w, &key).await), fingerprint(&before));
}

#[tokio::test]
async fn an_hpa_with_coordination_off_holds_the_change_and_nothing_moves() {
    let w = World::now("guard-hpa-off", 4000, 8192).await;
    let key = w
        .create(&deployment("api", 2, res(500, 1000, 256, 512)))
        .await;
    let before = ready(&w, &key, 2).await;
    hpa(&w, "api", 50).await;
    w.policy("auto", json!({ "hpaCoordination": false })).await;
    w.recommend(&key, res(250, 500, 256, 512)).await;
    let template = workload(&w, &key).await;
    let hpa_before = hpas(&w).await;
    let mut agent = w.agent().await;
    drive(&mut agent, "HPACoupled", |a| {
        a.state(&key).is_some_and(|s| s.phase == Phase::Blocked)
    })
    .await;
    agent.pass().await;
    w.deliver(&agent).await;
    let events = w.audit().await;
    assert_eq!(kinds(&of(&events, "api")), [pair("blocked", "HPACoupled")]);
    assert_eq!(one(&events, "api", "HPACoupled")["details"]["hpa"], "api");
    assert_eq!(hpas(&w).await, hpa_before, "the HPA is as it was");
    assert_eq!(workload(&w, &key).await.generation, template.generation);
    assert_eq!(fingerprint(&pods(&w, &key).await), fingerprint(&before));
}

#[tokio::test]
async fn a_coordinated_hpa_keeps_its_absolute_target() {
    let w = World::now("guard-hpa", 4000, 8192).await;
    let key = w
        .create(&deployment("api", 2, res(500, 1000, 256, 512)))
        .await;
    ready(&w, &key, 2).await;
    hpa(&w, "api", 40).await;
    w.policy("auto", json!({})).await;
    w.recommend(&key, res(250, 500, 256, 512)).await;
    let mut agent = w.agent().await;
    drive(&mut agent, "applied with the HPA", |a| {
        a.state(&key)
            .is_some_and(|s| s.phase == Phase::Applied && s.operation.is_none())
    })
    .await;
    w.deliver(&agent).await;
    let events = w.audit().await;
    let e = one(&events, "api", "RecommendationApplied");
    assert_eq!(e["details"]["hpa"], "api");
    assert_eq!(e["details"]["hpaResource"], "cpu");
    assert_eq!(e["details"]["hpaTargetFrom"], "40");
    // 500m → 250m halves the request: the target doubles, the absolute target stays.
    assert_eq!(e["details"]["hpaTargetTo"], "80");
    let h = hpas(&w).await;
    assert_eq!(h[0].metrics[0].target_utilization, Some(80));
    assert!(h[0].metric_managers.contains(&"kerf".to_string()), "{h:?}");
    for p in ready(&w, &key, 2).await {
        assert_eq!(
            p.status("app").and_then(|s| s.resources),
            Some(res(250, 500, 256, 512))
        );
    }
}
