//! The agent on the sim's in-process cluster of `kerf demo` (face 2), with a hub on a
//! manual clock reading the demo datasource: the demo's shape, deterministically.

use std::sync::Arc;

use kerf::agent::state::Phase;
use kerf::agent::{Agent, Options, Outbox};
use kerf::cluster::{Cluster, View};
use kerf::runs::Trigger;
use kerf::server::in_process::InProcessHub;
use kerf::sim::in_process::SimCluster;
use kerf::sim::live::Live;
use serde_json::json;

use crate::support::hub::hub_live;

#[tokio::test]
async fn the_demo_world_gets_its_auto_patch_workloads_applied() {
    let live = Live::default();
    let h = hub_live("demo-east", live.clone()).await;
    let (s, v) = h
        .as_token(&h.admin)
        .call(
            "POST",
            "/v1/policies",
            Some(json!({
            "name": "auto-web", "priority": 10,
            "selector": { "clusters": ["demo-east"], "namespaces": ["web"] },
            "mode": { "cpu": "auto-patch", "memory": "auto-patch" },
            "guardrails": { "learningPeriod": "3d", "minConfidence": 50 } })),
        )
        .await;
    assert_eq!(s, 201, "{v}");
    let run = h
        .runs
        .run_to_end("demo-east", Trigger::Manual)
        .await
        .expect("run");
    assert_eq!(run.status.as_str(), "succeeded");
    let sim = SimCluster::demo("demo-east", 7, h.clock.clone(), live)
        .expect("builds")
        .expect("known");
    let hub = Arc::new(InProcessHub::new(h.state.clone(), "demo-east"));
    let options = Options {
        cluster: "demo-east".into(),
        namespaces: Vec::new(),
        agent_version: "test".into(),
    };
    let mut agent = Agent::start(
        sim.clone(),
        hub,
        h.clock.clone(),
        options,
        Outbox::new(1000, Default::default()),
    )
    .await
    .expect("start");
    agent.pass().await;
    for _ in 0..10 {
        h.clock.advance(1000);
        agent.advance_all().await;
    }
    let view = sim.watch(&[]).await.expect("view");
    let snap = view.snapshot();
    let web: Vec<_> = snap
        .workloads
        .iter()
        .filter(|w| w.key.namespace == "web")
        .collect();
    assert!(web.len() >= 5, "{} web workloads", web.len());
    for w in &web {
        let s = agent.state(&w.key).expect("decided");
        assert_eq!(
            s.phase,
            Phase::Applied,
            "{}: {:?} {}",
            w.key,
            s.last_reason,
            s.last_message
        );
    }
    // Delivered: one applied event per web workload, in place.
    let flushed = agent
        .outbox()
        .flush(&InProcessHub::new(h.state.clone(), "demo-east"))
        .await;
    assert!(matches!(
        flushed,
        kerf::agent::outbox::Flushed::Empty { .. }
    ));
    let (_, audit) = h
        .as_token(&h.admin)
        .call("GET", "/v1/audit?type=applied&limit=100", None)
        .await;
    let items = audit["items"].as_array().expect("items");
    assert_eq!(items.len(), web.len());
    assert!(items
        .iter()
        .all(|e| e["strategy"] == "in-place" && e["workload"]["namespace"] == "web"));
    // The next run reads the values now in force from the demo datasource.
    let e = &items[0];
    let name = e["workload"]["name"].as_str().expect("name");
    h.clock.advance(5 * 60_000);
    h.runs
        .run_to_end("demo-east", Trigger::Manual)
        .await
        .expect("second run");
    let (_, list) = h
        .as_token(&h.admin)
        .call(
            "GET",
            &format!("/v1/workloads?cluster=demo-east&q={name}"),
            None,
        )
        .await;
    let w = list["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|w| w["namespace"] == "web")
        .expect("workload")
        .clone();
    let (_, detail) = h
        .as_token(&h.admin)
        .call(
            "GET",
            &format!("/v1/workloads/{}", w["id"].as_str().expect("id")),
            None,
        )
        .await;
    let applied_cpu = e["containers"][0]["to"]["requests"]["cpu"]
        .as_str()
        .expect("cpu request changed");
    let want = kerf::cluster::quantity::cpu_millis(applied_cpu).expect("quantity") as f64;
    let now = detail["current"][0]["cpu"]["request"]["value"]
        .as_f64()
        .expect("current");
    assert_eq!(now, want, "{detail}");
}
