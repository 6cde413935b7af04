//! What the agent remembers, in the cluster and nowhere else: done means 3 (emit only
//! on change over 100 passes and across a restart), a restart in the middle of a change
//! (finished once, its event stored once, no event lost), and in-place values kept on
//! pods created after the change until the user's own rollout moves the template.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::Deployment;
use kerf::agent::state::Phase;
use kerf::cluster::kube::KubeCluster;
use kerf::cluster::{Cluster, Record};
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use serde_json::{json, Value};

use super::world::{deployment, drive, ready, res, Rec, World};

fn count(events: &[Value]) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for e in events {
        let k = format!(
            "{}/{}",
            e["workload"]["name"].as_str().unwrap_or(""),
            e["reason"].as_str().unwrap_or("")
        );
        *out.entry(k).or_insert(0) += 1;
    }
    out
}

#[tokio::test]
async fn emit_only_on_change_holds_over_100_passes_and_a_restart() {
    let w = World::new("agent-quiet", 4000, 8192).await;
    let base = res(500, 1000, 256, 512);
    let off = w.create(&deployment("off", 1, base)).await;
    let young = w.create(&deployment("young", 1, base)).await;
    let steady = w.create(&deployment("steady", 1, base)).await;
    w.policy("auto", json!({})).await;
    w.policy(
        "p-off",
        json!({ "priority": 20, "selector": { "names": ["off"] },
                              "mode": { "cpu": "off", "memory": "off" } }),
    )
    .await;
    let short = Rec {
        covered_seconds: 3600,
        ..Rec::default()
    };
    w.recommend(&off, res(250, 500, 200, 400)).await;
    w.recommend_with(&young, res(250, 500, 200, 400), short)
        .await;
    w.recommend(&steady, res(495, 1000, 256, 512)).await;
    let mut agent = w.agent().await;
    for _ in 0..100 {
        agent.pass().await;
    }
    w.deliver(&agent).await;
    let want: BTreeMap<String, usize> = [
        ("off/ModeOff", 1),
        ("steady/NoSignificantChange", 1),
        ("young/LearningPeriod", 1),
    ]
    .into_iter()
    .map(|(k, n)| (k.to_string(), n))
    .collect();
    assert_eq!(count(&w.audit().await), want);
    // A restart: the memory is in the records, so nothing is reported again.
    drop(agent);
    let mut agent = w.agent().await;
    for _ in 0..10 {
        agent.pass().await;
    }
    w.deliver(&agent).await;
    assert_eq!(count(&w.audit().await), want);
    // A new recommendation id with values within the tolerance: still quiet; values
    // that moved beyond it: reported again, once.
    w.recommend_with(&young, res(255, 505, 204, 404), short)
        .await;
    agent.pass().await;
    w.deliver(&agent).await;
    assert_eq!(count(&w.audit().await), want);
    w.recommend_with(&young, res(350, 700, 300, 600), short)
        .await;
    for _ in 0..5 {
        agent.pass().await;
    }
    w.deliver(&agent).await;
    let mut moved = want.clone();
    moved.insert("young/LearningPeriod".into(), 2);
    assert_eq!(count(&w.audit().await), moved);
}

#[tokio::test]
async fn a_restart_mid_apply_finishes_the_change_once_and_loses_no_event() {
    let w = World::new("agent-crash", 4000, 8192).await;
    let key = w
        .create(&deployment("web", 2, res(500, 1000, 256, 512)))
        .await;
    let off = w
        .create(&deployment("off", 1, res(500, 1000, 256, 512)))
        .await;
    let before = ready(&w, &key, 2).await;
    ready(&w, &off, 1).await;
    w.policy("auto", json!({})).await;
    w.policy(
        "p-off",
        json!({ "priority": 20, "selector": { "names": ["off"] },
                              "mode": { "cpu": "off", "memory": "off" } }),
    )
    .await;
    w.recommend(&key, res(250, 500, 200, 400)).await;
    w.recommend(&off, res(250, 500, 200, 400)).await;
    let admin = KubeCluster::new(w.admin.clone());
    let record = |name: &'static str| {
        let admin = admin.clone();
        let ns = w.ns.name.clone();
        async move {
            admin
                .records(&[ns])
                .await
                .expect("records")
                .into_iter()
                .find(|r| r.name == name)
                .expect("record")
        }
    };
    // First agent: one pass starts the change (written ahead, pods patched) and
    // reports `off` — then it dies before delivering anything.
    let mut first = w.agent().await;
    first.pass().await;
    let written_ahead: Record = record("deployment-web").await;
    let op = &written_ahead.status["agent"]["operation"];
    assert_eq!(op["strategy"], "in-place", "{written_ahead:?}");
    let event_id = op["eventId"].as_str().expect("event id").to_string();
    assert_eq!(
        record("deployment-off").await.status["agent"]["unsent"][0]["reason"],
        "ModeOff"
    );
    drop(first);
    // Second agent: finishes the change from the record, re-sends what was unsent.
    let mut second = w.agent().await;
    drive(&mut second, "applied after the restart", |a| {
        a.state(&key)
            .is_some_and(|s| s.phase == Phase::Applied && s.operation.is_none())
    })
    .await;
    w.deliver(&second).await;
    let after = ready(&w, &key, 2).await;
    let generations: Vec<i64> = after.iter().map(|p| p.generation).collect();
    // A third agent starts from a record as if the second had died right after
    // applying, before writing it down: the change is finished again, changes nothing
    // on the pods, and its event (same id) is stored once.
    let stale = Record {
        status: written_ahead.status.clone(),
        ..record("deployment-web").await
    };
    KubeCluster::new(w.admin.clone())
        .with_field_manager("kerf")
        .apply_record_status(&stale)
        .await
        .expect("put the written-ahead status back");
    drop(second);
    let mut third = w.agent().await;
    drive(&mut third, "applied again from the record", |a| {
        a.state(&key)
            .is_some_and(|s| s.phase == Phase::Applied && s.operation.is_none())
    })
    .await;
    w.deliver(&third).await;
    let events = w.audit().await;
    let applied: Vec<&Value> = events.iter().filter(|e| e["type"] == "applied").collect();
    assert_eq!(applied.len(), 1, "{events:#?}");
    assert_eq!(applied[0]["id"], event_id.as_str());
    assert_eq!(count(&events)["off/ModeOff"], 1);
    let last = ready(&w, &key, 2).await;
    for (p, b) in last.iter().zip(&before) {
        assert_eq!(p.uid, b.uid, "never replaced");
        assert_eq!(
            p.status("app").and_then(|s| s.resources),
            Some(res(250, 500, 200, 400))
        );
        assert_eq!(p.status("app").map(|s| s.restart_count), Some(0));
    }
    assert_eq!(
        last.iter().map(|p| p.generation).collect::<Vec<_>>(),
        generations,
        "not resized twice"
    );
}

#[tokio::test]
async fn in_place_values_outlive_pod_churn_until_the_template_moves() {
    let w = World::new("agent-churn", 8000, 16384).await;
    let key = w
        .create(&deployment("web", 2, res(500, 1000, 256, 512)))
        .await;
    ready(&w, &key, 2).await;
    w.policy("auto", json!({})).await;
    w.recommend(&key, res(250, 500, 200, 400)).await;
    let mut agent = w.agent().await;
    drive(&mut agent, "applied in place", |a| {
        a.state(&key)
            .is_some_and(|s| s.phase == Phase::Applied && s.operation.is_none())
    })
    .await;
    // Scale up and lose a pod: two pods start from the template's old values. The
    // victim is one of the pods resized in place, chosen before the scale-up can add a
    // pod it might pick instead (which would leave one later pod, not two).
    let victim = ready(&w, &key, 2).await.remove(0);
    let api = Api::<Deployment>::namespaced(w.admin.clone(), &w.ns.name);
    api.patch(
        "web",
        &PatchParams::default(),
        &Patch::Merge(json!({ "spec": { "replicas": 3 } })),
    )
    .await
    .expect("scale");
    kube::Api::<k8s_openapi::api::core::v1::Pod>::namespaced(w.admin.clone(), &w.ns.name)
        .delete(&victim.pod.name, &DeleteParams::default())
        .await
        .expect("delete pod");
    drive(&mut agent, "later pods resized", |a| {
        a.state(&key)
            .and_then(|s| s.applied.as_ref())
            .is_some_and(|x| x.later_pods_resized >= 2)
    })
    .await;
    let every = std::time::Duration::from_millis(300);
    let what = "three pods at the applied values";
    crate::support::wait::eventually_every(what, crate::support::secs(60), every, async || {
        let p = ready(&w, &key, 3).await;
        if p.iter()
            .all(|p| p.status("app").and_then(|s| s.resources) == Some(res(250, 500, 200, 400)))
        {
            return Ok(());
        }
        agent.pass().await;
        Err(p)
    })
    .await;
    agent.pass().await;
    let admin = KubeCluster::new(w.admin.clone());
    let r = admin
        .records(std::slice::from_ref(&w.ns.name))
        .await
        .expect("records")
        .into_iter()
        .find(|r| r.name == "deployment-web")
        .expect("record");
    assert_eq!(r.status["applied"]["laterPodsResized"], 2);
    // The user's own rollout moves the template: its values are in force again, kerf
    // keeps nothing on the new pods, and sees a change to make (held by its cooldown).
    api.patch(
        "web",
        &PatchParams::apply("team-ci").force(),
        &Patch::Apply(json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": { "name": "web" },
            "spec": { "template": { "spec": { "containers": [{ "name": "app", "image": "registry.example/app:2",
                "resources": { "requests": { "cpu": "600m", "memory": "300Mi" }, "limits": { "cpu": "1200m", "memory": "600Mi" } } }] } } },
        })),
    )
    .await
    .expect("the user's rollout");
    drive(&mut agent, "the cooldown holds the next change", |a| {
        a.state(&key)
            .is_some_and(|s| s.last_reason == Some(kerf::wire::Reason::Cooldown))
    })
    .await;
    w.deliver(&agent).await;
    let events = count(&w.audit().await);
    assert_eq!(
        events.get("web/RecommendationApplied"),
        Some(&1),
        "{events:?}"
    );
    assert_eq!(events.get("web/Cooldown"), Some(&1), "{events:?}");
}
