//! Issue 35: the agent's long poll. An agent whose clock stands still never reaches its
//! next pass by time; only the long poll on the hub's feeds can wake it. An approval made
//! in the hub then reaches the agent in moments, and the agent acts on it, through the
//! same in-process hub `mode = "all-in-one"` uses.

use std::sync::Arc;
use std::time::{Duration, Instant};

use kerf::agent::record::{state_of, workload_of};
use kerf::agent::state::Phase;
use kerf::agent::{Agent, Options, Outbox};
use kerf::cluster::Cluster;
use kerf::runs::Trigger;
use kerf::server::in_process::InProcessHub;
use kerf::sim::in_process::SimCluster;
use kerf::sim::live::Live;
use serde_json::{json, Value};

use crate::support::hub::{hub_live, Hub};

const CLUSTER: &str = "demo-east";

/// The cluster's audit events about workload `name` (newest first).
async fn events_of(h: &Hub, name: &str) -> Vec<Value> {
    let (s, v) = h
        .as_token(&h.admin)
        .call(
            "GET",
            &format!("/v1/audit?cluster={CLUSTER}&limit=500"),
            None,
        )
        .await;
    assert_eq!(s, 200, "{v}");
    v["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter(|e| e["workload"]["name"] == name)
        .cloned()
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approval_wakes_an_agent_whose_next_pass_is_not_due() {
    let live = Live::default();
    let h = hub_live(CLUSTER, live.clone()).await;
    let run = h
        .runs
        .run_to_end(CLUSTER, Trigger::Manual)
        .await
        .expect("run");
    assert_eq!(run.status.as_str(), "succeeded", "{:?}", run.errors);
    let sim = SimCluster::demo(CLUSTER, 42, h.clock.clone(), live)
        .expect("builds")
        .expect("known");
    let hub = Arc::new(InProcessHub::new(h.state.clone(), CLUSTER));
    let options = Options {
        cluster: CLUSTER.into(),
        namespaces: Vec::new(),
        agent_version: "test".into(),
    };
    let world = sim.clone();
    let agent = Agent::start(
        sim,
        hub,
        h.clock.clone(),
        options,
        Outbox::new(1000, Default::default()),
    )
    .await
    .expect("start");
    let mut jobs = kerf::jobs::Jobs::new(kerf::jobs::Board::default());
    jobs.spawn("agent", move |stop| agent.run(stop));

    // The first pass: a workload in audit mode is reported skipped.
    let (s, feed) = h
        .as_token(&h.agent)
        .call(
            "GET",
            &format!("/v1/clusters/{CLUSTER}/recommendations?limit=500"),
            None,
        )
        .await;
    assert_eq!(s, 200, "{feed}");
    let item = feed["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|i| i["workload"]["namespace"] == "shop")
        .cloned()
        .expect("a shop workload with a recommendation");
    let name = item["workload"]["name"].as_str().expect("name").to_string();
    crate::support::wait::eventually_every(
        "the first pass's report",
        crate::support::secs(30),
        Duration::from_millis(100),
        async || {
            let seen = events_of(&h, &name).await;
            if seen.iter().any(|e| e["reason"] == "ModeAudit") {
                Ok(())
            } else {
                Err(seen)
            }
        },
    )
    .await;

    // The clock stands still: no pass is due. The approval must wake the agent.
    let body = json!({"recommendationId": item["recommendationId"], "reason": "long poll"});
    let path = format!(
        "/v1/workloads/{}/approve",
        item["workloadId"].as_str().expect("id")
    );
    let (s, approval) = h.as_token(&h.admin).call("POST", &path, Some(body)).await;
    assert_eq!(s, 201, "{approval}");
    let approved = Instant::now();
    // What the agent did about it, from its own record of the workload: the change is
    // under way or done, started by the approval (the sim's kubelet finishes an in-place
    // resize only as its clock moves, and this clock stands still).
    let acted = crate::support::wait::eventually_every(
        "the agent acts on the approval",
        crate::support::secs(30),
        Duration::from_millis(50),
        async || {
            let records = world.records(&[]).await.expect("records");
            let state = records
                .iter()
                .find(|r| workload_of(r).is_some_and(|k| k.name == name))
                .and_then(state_of);
            match state {
                Some(s) if s.phase == Phase::Applying || s.phase == Phase::Applied => Ok(s),
                other => Err(other.map(|s| (s.phase, s.last_reason))),
            }
        },
    )
    .await;
    assert_eq!(
        acted.last_reason,
        Some(kerf::wire::Reason::ApprovedOnce),
        "{acted:?}"
    );
    println!(
        "an approval reached the agent, stopped between passes, in {} ms",
        approved.elapsed().as_millis()
    );
    let failures = jobs.stop(Duration::from_secs(5)).await;
    assert!(failures.is_empty(), "{failures:?}");
}
