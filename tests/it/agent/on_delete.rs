//! An `OnDelete` StatefulSet through the agent: the template is applied (field manager
//! `kerf`), then the outdated pods are evicted through the Eviction API one at a time,
//! each replacement Ready before the next eviction, until every pod runs the new values.
//! An agent restarted mid-eviction resumes where it was: one `applied` event, no second
//! apply.

use std::collections::BTreeSet;

use kerf::agent::state::{Phase, Step};
use kerf::cluster::WorkloadKind;
use serde_json::{json, Value};

use super::world::{deployment, drive, pods, ready, res, Spec, TestAgent, World};

fn evicting(a: &TestAgent, key: &kerf::cluster::WorkloadKey) -> bool {
    a.state(key)
        .and_then(|s| s.operation.as_ref())
        .is_some_and(|op| matches!(op.step, Step::Evicting { .. }))
}

#[tokio::test(flavor = "multi_thread")]
async fn an_on_delete_statefulset_gets_its_pods_evicted_one_at_a_time_across_a_restart() {
    let w = World::new("agent-on-delete", 4000, 8192).await;
    let old = res(500, 1000, 256, 512);
    let new = res(300, 600, 192, 384);
    let key = w
        .create(&Spec {
            kind: WorkloadKind::StatefulSet,
            on_delete: true,
            ..deployment("db", 3, old)
        })
        .await;
    let before = ready(&w, &key, 3).await;
    let first_uids: BTreeSet<String> = before.iter().map(|p| p.uid.clone()).collect();
    w.policy("rollout", json!({ "apply": { "strategy": "rollout" } }))
        .await;
    let rec = w.recommend(&key, new).await;

    // Applied, and at least one outdated pod evicted and replaced.
    let mut agent = w.agent().await;
    drive(&mut agent, "the first eviction", |a| evicting(a, &key)).await;
    let every = std::time::Duration::from_millis(200);
    crate::support::wait::eventually_every(
        "a pod evicted",
        crate::support::secs(90),
        every,
        async || {
            let p = pods(&w, &key).await;
            if p.iter().any(|p| !first_uids.contains(&p.uid)) {
                return Ok(());
            }
            agent.advance_all().await;
            Err(p)
        },
    )
    .await;
    assert!(evicting(&agent, &key), "still evicting the others");
    w.deliver(&agent).await;
    drop(agent);

    // A new agent (the write-ahead operation in the record) finishes the evictions,
    // never having more than one pod down at a time.
    let mut agent = w.agent().await;
    let mut worst_down = 0;
    agent.pass().await;
    let every = std::time::Duration::from_millis(100);
    crate::support::wait::eventually_every(
        "every pod replaced",
        crate::support::secs(90),
        every,
        async || {
            let state = agent.state(&key);
            if state.is_some_and(|s| s.phase == Phase::Applied && s.operation.is_none()) {
                return Ok(());
            }
            let seen = state.map(|s| (s.phase, s.operation.is_some()));
            let up = pods(&w, &key).await.iter().filter(|p| p.ready).count();
            worst_down = worst_down.max(3 - up.min(3));
            if agent.busy() {
                agent.advance_all().await;
            } else {
                agent.pass().await;
            }
            Err(seen)
        },
    )
    .await;
    assert!(worst_down <= 1, "{worst_down} pods were down at once");
    let after = ready(&w, &key, 3).await;
    for p in &after {
        assert!(
            !first_uids.contains(&p.uid),
            "{} was not replaced",
            p.pod.name
        );
        assert_eq!(p.containers[0].resources, new, "{}", p.pod.name);
        assert_eq!(p.revision, after[0].revision, "one revision");
    }
    assert_ne!(after[0].revision, before[0].revision);
    w.deliver(&agent).await;
    let events = w.audit().await;
    let applied: Vec<&Value> = events.iter().filter(|e| e["type"] == "applied").collect();
    assert_eq!(
        applied.len(),
        1,
        "applied once, across the restart: {events:#?}"
    );
    assert_eq!(applied[0]["strategy"], "rollout");
    assert_eq!(applied[0]["recommendationID"], rec.as_str());
    assert!(!events.iter().any(|e| e["type"] == "failed"), "{events:#?}");
}
