//! The demo's guardrail workloads (`sim::guarded`) under the demo's own policies, on the
//! sim's in-process cluster of `kerf demo` with a hub reading the demo datasource, on a
//! manual clock: within ten minutes of demo time the audit holds at least six distinct
//! `blocked`/`fallback` reasons (a ResourceQuota with no room among them) and the
//! rollbacks of an OOM-killed change and of a stalled rollout, and each workload's
//! record says why it is held.

use std::collections::BTreeSet;
use std::sync::Arc;

use kerf::agent::{Agent, Options, Outbox};
use kerf::runs::Trigger;
use kerf::server::in_process::InProcessHub;
use kerf::sim::in_process::SimCluster;
use kerf::sim::live::Live;
use serde_json::Value;

use crate::support::hub::hub_live;

#[tokio::test]
async fn the_demo_shows_six_guardrails_and_a_rollback_within_ten_minutes() {
    let live = Live::default();
    let h = hub_live("demo-east", live.clone()).await;
    for spec in kerf::demo::demo_policies() {
        let body = serde_json::to_value(&spec).expect("policy json");
        let (s, v) = h
            .as_token(&h.admin)
            .call("POST", "/v1/policies", Some(body))
            .await;
        assert_eq!(s, 201, "{v}");
    }
    let run = h
        .runs
        .run_to_end("demo-east", Trigger::Manual)
        .await
        .expect("run");
    assert_eq!(run.status.as_str(), "succeeded", "{:?}", run.errors);
    // The feed carries the covered history as a duration and the hub's flags.
    let (s, feed) = h
        .as_token(&h.agent)
        .call(
            "GET",
            "/v1/clusters/demo-east/recommendations?limit=500",
            None,
        )
        .await;
    assert_eq!(s, 200, "{feed}");
    let item = |name: &str| -> Value {
        feed["items"]
            .as_array()
            .expect("items")
            .iter()
            .find(|i| i["workload"]["name"] == name && i["workload"]["namespace"] == "guardrails")
            .cloned()
            .unwrap_or_else(|| panic!("{name} in the feed"))
    };
    assert_eq!(
        item("orders-java")["flags"],
        serde_json::json!(["jvm-fixed-heap"])
    );
    assert_eq!(item("solo-cache")["flags"], serde_json::json!([]));
    let covered = item("solo-cache")["dataCoverage"]["covered"]
        .as_str()
        .expect("covered")
        .to_string();
    assert!(
        covered.ends_with('d') || covered.contains("d "),
        "{covered}"
    );
    let sim = SimCluster::demo("demo-east", 42, h.clock.clone(), live)
        .expect("builds")
        .expect("known");
    let hub = Arc::new(InProcessHub::new(h.state.clone(), "demo-east"));
    let options = Options {
        cluster: "demo-east".into(),
        namespaces: vec![kerf::sim::guarded::NAMESPACE.into()],
        agent_version: "test".into(),
    };
    let mut agent = Agent::start(
        sim,
        hub.clone(),
        h.clock.clone(),
        options,
        Outbox::new(1000, Default::default()),
    )
    .await
    .expect("start");
    // The demo's first minute: the run, while the in-process pods start.
    h.clock.advance(60_000);
    // Then nine minutes of the demo: a pass every 30 s, the changes in flight advanced
    // every second between them.
    for second in 0..540 {
        if second % 30 == 0 {
            agent.pass().await;
        } else {
            agent.advance_all().await;
        }
        h.clock.advance(1000);
    }
    let flushed = agent.outbox().flush(hub.as_ref()).await;
    assert!(matches!(
        flushed,
        kerf::agent::outbox::Flushed::Empty { .. }
    ));
    let (_, audit) = h
        .as_token(&h.admin)
        .call("GET", "/v1/audit?limit=500", None)
        .await;
    let items = audit["items"].as_array().expect("items");
    let of = |t: &str| -> BTreeSet<String> {
        items
            .iter()
            .filter(|e| e["type"] == t)
            .filter_map(|e| e["reason"].as_str().map(str::to_string))
            .collect()
    };
    let held: BTreeSet<String> = of("blocked").union(&of("fallback")).cloned().collect();
    let summary: Vec<String> = items
        .iter()
        .filter(|e| e["workload"]["namespace"] == kerf::sim::guarded::NAMESPACE)
        .map(|e| {
            format!(
                "{} {} {}: {}",
                e["workload"]["name"], e["type"], e["reason"], e["message"]
            )
        })
        .collect();
    assert!(held.len() >= 6, "{held:?}\n{summary:#?}");
    assert!(of("rolled_back").contains("OOMKills"), "{summary:#?}");
    // slow-start's new pods never become Ready: its Deployment gives up after 90 s and
    // the agent rolls it back at once.
    assert!(of("rolled_back").contains("RolloutStalled"), "{summary:#?}");
    for want in [
        "SingleReplicaUnsafe",
        "HPACoupled",
        "Throttled",
        "JVMFixedHeap",
        "RestartPolicyRequired",
        "PodDisruptionBudget",
        "ResizeInfeasible",
        "ResourceQuota",
    ] {
        assert!(held.contains(want), "{want} missing: {summary:#?}");
    }
    // Every event says why, in words.
    assert!(items
        .iter()
        .all(|e| e["message"].as_str().is_some_and(|m| m.len() > 20)));
}
