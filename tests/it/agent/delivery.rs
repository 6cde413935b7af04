//! The agent's outbox against a real hub (`kerf serve`, over HTTP with the cluster's
//! token): a full buffer drops the oldest and counts them in
//! `kerf_agent_events_dropped_total{reason="buffer_full"}`; a 400 `invalid_item` drops
//! exactly the listed items and the rest are stored; a 413 splits the batch, and an event
//! too large on its own is dropped (`reason="invalid"`) while the others arrive.

use std::time::Duration;

use kerf::agent::http_hub::HttpHub;
use kerf::agent::outbox::{Flushed, Outbox};
use kerf::metrics::Metrics;
use kerf::wire::AgentEvent;
use serde_json::json;

use crate::support::{event, uuid, DataDir, Kerf};

/// A hub with cluster `edge`: the running server, the agent's client and an admin token.
fn hub(env: &[(&str, &str)]) -> (DataDir, Kerf, HttpHub, String) {
    let data = DataDir::new();
    let token = data.create_cluster("edge");
    let admin = data.admin_token();
    let kerf = Kerf::builder(data.path()).envs(env).start();
    let hub =
        HttpHub::new(&kerf.url(""), "edge", token, None, Duration::from_secs(10)).expect("client");
    (data, kerf, hub, admin)
}

fn typed(v: serde_json::Value) -> AgentEvent {
    serde_json::from_value(v).expect("an agent event")
}

/// The ids the hub stored, sorted.
async fn stored(kerf: &Kerf, admin: &str) -> Vec<String> {
    let items = kerf.api(admin).audit_all("&cluster=edge").await;
    let mut ids: Vec<String> = items
        .iter()
        .map(|e| e["id"].as_str().expect("id").to_string())
        .collect();
    ids.sort();
    ids
}

/// `kerf_agent_events_dropped_total{reason=...}` as rendered.
fn dropped(metrics: &Metrics, reason: &str) -> u64 {
    let want = format!("kerf_agent_events_dropped_total{{reason=\"{reason}\"}} ");
    metrics
        .render()
        .lines()
        .find_map(|l| l.strip_prefix(want.as_str()))
        .map_or(0, |n| n.trim().parse().expect("a count"))
}

fn sorted(mut ids: Vec<String>) -> Vec<String> {
    ids.sort();
    ids
}

#[tokio::test(flavor = "multi_thread")]
async fn a_full_buffer_drops_the_oldest_and_counts_them() {
    let (_data, kerf, hub, admin) = hub(&[]);
    let metrics = Metrics::new();
    let outbox = Outbox::new(3, metrics.agent_events_dropped.clone());
    let ids: Vec<String> = (0..5).map(|_| uuid()).collect();
    for id in &ids {
        outbox.push(typed(event(id)));
    }
    assert_eq!(outbox.len(), 3);
    assert_eq!(dropped(&metrics, "buffer_full"), 2);
    let settled = sorted(outbox.take_settled());
    assert_eq!(
        settled,
        sorted(ids[..2].to_vec()),
        "the two oldest are settled"
    );
    assert_eq!(outbox.flush(&hub).await, Flushed::Empty { delivered: 3 });
    assert_eq!(stored(&kerf, &admin).await, sorted(ids[2..].to_vec()));
    assert_eq!(dropped(&metrics, "invalid"), 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_invalid_item_answer_drops_exactly_the_listed_items() {
    let (_data, kerf, hub, admin) = hub(&[]);
    let metrics = Metrics::new();
    let outbox = Outbox::new(100, metrics.agent_events_dropped.clone());
    let ids: Vec<String> = (0..6).map(|_| uuid()).collect();
    for (i, id) in ids.iter().enumerate() {
        let mut e = event(id);
        if i == 1 || i == 4 {
            // Valid JSON and a valid reason, but not a reason of type `applied`: the
            // hub refuses it by index.
            e["type"] = json!("applied");
        }
        outbox.push(typed(e));
    }
    assert_eq!(outbox.flush(&hub).await, Flushed::Empty { delivered: 4 });
    let good: Vec<String> = [0, 2, 3, 5].iter().map(|&i| ids[i].clone()).collect();
    assert_eq!(stored(&kerf, &admin).await, sorted(good));
    assert_eq!(dropped(&metrics, "invalid"), 2);
    assert!(outbox.is_empty());
    assert_eq!(sorted(outbox.take_settled()), sorted(ids));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_batch_too_large_is_split_and_an_event_too_large_alone_is_dropped() {
    // The smallest body limit the hub takes: six small events are over it.
    let (_data, kerf, hub, admin) = hub(&[("KERF_HTTP__MAX_BODY_BYTES", "1024")]);
    let metrics = Metrics::new();
    let outbox = Outbox::new(100, metrics.agent_events_dropped.clone());
    let ids: Vec<String> = (0..12).map(|_| uuid()).collect();
    for (i, id) in ids.iter().enumerate() {
        let mut e = event(id);
        if i == 7 {
            e["message"] = json!("x".repeat(1024));
        }
        outbox.push(typed(e));
    }
    assert_eq!(outbox.flush(&hub).await, Flushed::Empty { delivered: 11 });
    let small: Vec<String> = ids
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 7)
        .map(|(_, id)| id.clone())
        .collect();
    assert_eq!(stored(&kerf, &admin).await, sorted(small));
    assert_eq!(dropped(&metrics, "invalid"), 1);
    assert_eq!(dropped(&metrics, "buffer_full"), 0);
    // The hub did answer 413s: the split was its doing, not the outbox's guess.
    let text = kerf.metrics_text().await;
    let too_large: u64 = text
        .lines()
        .filter(|l| l.starts_with("kerf_http_requests_total{") && l.contains("status=\"413\""))
        .filter(|l| l.contains("/events"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum();
    assert!(too_large >= 2, "413 answers: {too_large}\n{text}");
}

/// A hub whose event transport breaks with a panic (a defect in a dependency); its
/// feeds are away, so the agent only reports `HubUnreachable`.
struct BrokenTransport;

impl kerf::agent::Hub for BrokenTransport {
    async fn config(
        &self,
        _: Option<String>,
    ) -> Result<kerf::wire::ConfigFeed, kerf::agent::HubError> {
        Err(kerf::agent::HubError::Unreachable("away".into()))
    }

    async fn report_policies(
        &self,
        _: &kerf::wire::cluster_policies::ClusterPolicies,
    ) -> Result<kerf::wire::cluster_policies::ClusterPolicyVerdicts, kerf::agent::HubError> {
        Err(kerf::agent::HubError::Unreachable("away".into()))
    }
    async fn recommendations(
        &self,
        _: Option<String>,
        _: Option<String>,
    ) -> Result<kerf::agent::FeedPage, kerf::agent::HubError> {
        Err(kerf::agent::HubError::Unreachable("away".into()))
    }
    async fn heartbeat(
        &self,
        _: &kerf::wire::Heartbeat,
    ) -> Result<kerf::wire::Readiness, kerf::agent::HubError> {
        Err(kerf::agent::HubError::Unreachable("away".into()))
    }
    async fn send_events(&self, _: &[AgentEvent]) -> Result<(), kerf::agent::HubError> {
        panic!("the event transport broke");
    }
    async fn write(&self, _: bytes::Bytes) -> Result<(), kerf::agent::HubError> {
        Err(kerf::agent::HubError::Unreachable("away".into()))
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_whose_delivery_dies_ends_as_a_failed_job_instead_of_deciding_on_alone() {
    let clock: std::sync::Arc<dyn kerf::clock::Clock> =
        std::sync::Arc::new(kerf::clock::ManualClock::new(1_800_000_000_000));
    let cluster = kerf::sim::in_process::SimCluster::new(7, clock.clone(), Vec::new());
    let options = kerf::agent::Options {
        cluster: "edge".into(),
        namespaces: Vec::new(),
        agent_version: "test".into(),
    };
    let outbox = Outbox::new(10, Metrics::new().agent_events_dropped.clone());
    let agent = kerf::agent::Agent::start(
        cluster,
        std::sync::Arc::new(BrokenTransport),
        clock,
        options,
        outbox.clone(),
    )
    .await
    .expect("agent starts");
    let mut jobs = kerf::jobs::Jobs::new(kerf::jobs::Board::default());
    jobs.spawn("agent", move |stop| agent.run(stop));
    outbox.push(typed(event(&uuid())));
    let failure = tokio::time::timeout(Duration::from_secs(30), jobs.failure())
        .await
        .expect("the agent job ends");
    assert_eq!(failure.job, "agent");
    assert!(
        failure.cause.contains("delivery ended") && failure.cause.contains("transport broke"),
        "{failure}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_event_already_buffered_is_buffered_once_and_one_that_left_can_come_back() {
    let (_data, kerf, hub, admin) = hub(&[]);
    let metrics = Metrics::new();
    let outbox = Outbox::new(2, metrics.agent_events_dropped.clone());
    let (a, b, c) = (uuid(), uuid(), uuid());
    outbox.push(typed(event(&a)));
    outbox.push(typed(event(&a)));
    assert_eq!(outbox.len(), 1, "the same id twice is buffered once");
    outbox.push(typed(event(&b)));
    outbox.push(typed(event(&c)));
    assert_eq!(outbox.take_settled(), vec![a.clone()], "the oldest dropped");
    // Dropped, it is no longer buffered: sent again (a record re-sending it), it is
    // taken, and the oldest left (b) makes room.
    outbox.push(typed(event(&a)));
    assert_eq!(outbox.take_settled(), vec![b.clone()]);
    assert_eq!(outbox.flush(&hub).await, Flushed::Empty { delivered: 2 });
    assert_eq!(stored(&kerf, &admin).await, sorted(vec![a, c]));
    assert_eq!(
        sorted(outbox.take_settled()).len(),
        2,
        "both delivered settle"
    );
}
