//! Issue 30, "done means" 1: kerf with no Prometheus at all. The hub (a cluster without
//! a datasource: usage from its embedded store) and the agent with its collector on
//! `auto`, composed as `mode = "all-in-one"` composes them, against the real API server
//! with the sim kubelet serving `/metrics/cadvisor` over HTTPS. An hour of the kubelet's
//! and the hub's clocks passes in minute steps (the kubelet's first, so each collection
//! finds it at its time); every remote write the collector sends is also written,
//! byte for byte, to a real Prometheus. A run over the embedded store recommends every
//! workload with the hour covered, and a run over that Prometheus (remote read) makes
//! the same recommendations; the agent then applies them under a policy whose learning
//! period is that hour.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use kerf::agent::collector::{Enabled, Settings};
use kerf::agent::{FeedPage, Hub, HubError};
use kerf::clock::{Clock, ManualClock};
use kerf::cluster::WorkloadKind;
use kerf::metrics::CollectorMetrics;
use kerf::server::in_process::InProcessHub;
use kerf::wire::remote_write::decode;
use kerf::wire::{AgentEvent, ConfigFeed, Heartbeat, Readiness};
use serde_json::{json, Value};

use super::world::{deployment, ready, res, World};
use crate::support::prometheus::{remote_write, Prometheus};
use crate::support::{eventually, secs};

const MIN: i64 = 60_000;
/// The lookback and the learning period: an hour, the shortest lookback there is.
const HOUR_S: i64 = 3_600;

/// The hub in process, and every remote write also to a real Prometheus.
struct Tee {
    hub: InProcessHub,
    prometheus: String,
    http: reqwest::Client,
    /// The newest sample time written, per metric name.
    newest: Mutex<BTreeMap<String, i64>>,
}

impl Hub for Tee {
    async fn config(&self, since: Option<String>) -> Result<ConfigFeed, HubError> {
        self.hub.config(since).await
    }
    async fn recommendations(
        &self,
        since: Option<String>,
        next: Option<String>,
    ) -> Result<FeedPage, HubError> {
        self.hub.recommendations(since, next).await
    }
    async fn heartbeat(&self, beat: &Heartbeat) -> Result<Readiness, HubError> {
        self.hub.heartbeat(beat).await
    }
    async fn send_events(&self, batch: &[AgentEvent]) -> Result<(), HubError> {
        self.hub.send_events(batch).await
    }
    async fn write(&self, body: Bytes) -> Result<(), HubError> {
        remote_write(&self.http, &self.prometheus, body.to_vec()).await;
        self.hub.write(body.clone()).await?;
        let request = decode(&body).expect("a remote-write body");
        let mut newest = self.newest.lock().unwrap();
        for s in request.timeseries {
            let name = s
                .labels
                .iter()
                .find(|l| l.name == "__name__")
                .map(|l| l.value.clone())
                .unwrap_or_default();
            let t = s.samples.iter().map(|x| x.timestamp).max().unwrap_or(0);
            let at = newest.entry(name).or_insert(t);
            *at = (*at).max(t);
        }
        Ok(())
    }

    async fn report_policies(
        &self,
        report: &kerf::wire::cluster_policies::ClusterPolicies,
    ) -> Result<kerf::wire::cluster_policies::ClusterPolicyVerdicts, HubError> {
        self.hub.report_policies(report).await
    }
}

impl Tee {
    fn newest(&self, metric: &str) -> i64 {
        self.newest
            .lock()
            .unwrap()
            .get(metric)
            .copied()
            .unwrap_or(i64::MIN)
    }
}

/// The recommendation feed's items by workload name, without what names the run or
/// the cluster (ids, times, the settings identity that includes the datasource).
async fn recommended(w: &World, cluster: &str, token: &str) -> BTreeMap<String, Value> {
    let feed = w.hub.as_token(token);
    let (s, page) = feed
        .get(&format!("/v1/clusters/{cluster}/recommendations"))
        .await;
    assert_eq!(s, 200, "{page}");
    page["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| {
            let mut i = i.clone();
            let o = i.as_object_mut().expect("an item");
            for run_bound in [
                "recommendationId",
                "workloadId",
                "createdAt",
                "runId",
                "settingsIdentity",
                "policyIdentity",
                "recommendationStale",
            ] {
                o.remove(run_bound);
            }
            (i["workload"]["name"].as_str().expect("name").to_string(), i)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_prometheus_the_agent_collects_and_kerf_recommends_as_a_prometheus_fed_the_same_samples_would(
) {
    // Whole minutes: the run's window ends on one.
    let now = kerf::clock::SystemClock.now_ms();
    let t0 = now - now % MIN;
    let kubelet_clock = Arc::new(ManualClock::new(t0));
    let w = World::timed("noprom", 4000, 8192, kubelet_clock.clone()).await;
    let web = w
        .create(&deployment("web", 2, res(1000, 2000, 512, 1024)).using(250.0, 100.0))
        .await;
    let mut db = deployment("db", 1, res(500, 1000, 1024, 1024)).using(120.0, 300.0);
    db.kind = WorkloadKind::StatefulSet;
    let db = w.create(&db).await;
    ready(&w, &web, 2).await;
    ready(&w, &db, 1).await;
    let admin = w.hub.as_token(&w.hub.admin);
    let mut settings = admin.get_ok("/v1/admin/settings/recommender").await;
    settings["lookbackSeconds"] = json!(HOUR_S);
    let (s, body) = admin
        .call("PUT", "/v1/admin/settings/recommender", Some(settings))
        .await;
    assert_eq!(s, 200, "{body}");

    let prom = Prometheus::remote_write_receiver();
    let tee = Arc::new(Tee {
        hub: InProcessHub::new(w.hub.state.clone(), &w.cluster),
        prometheus: prom.url.clone(),
        http: crate::support::client(),
        newest: Mutex::default(),
    });
    // The collector scrapes every node of the shared control plane (other tests' nodes
    // too, their kubelets gone or elsewhere): what it took from this test's kubelet is
    // checked by what arrived, collection by collection.
    let agent = w.agent_with(tee.clone()).await.with_collector(
        Settings {
            enabled: Enabled::Auto,
            interval: Duration::from_secs(60),
            ..Settings::default()
        },
        CollectorMetrics::default(),
    );
    let mut jobs = kerf::jobs::Jobs::new(kerf::jobs::Board::default());
    jobs.spawn("agent", move |stop| agent.run(stop));

    // An hour and two minutes in minute steps (a CPU counter's first scrape in the
    // window starts no rate; the engine wants an hour of rates): the kubelet's clock
    // first, then (once its page is at that time) the hub's and the agent's, and the
    // collection at that time written.
    let page = w.kubelet.metrics_url();
    let http = crate::support::client();
    for k in 0..=HOUR_S * 1000 / MIN + 2 {
        let t = t0 + k * MIN;
        kubelet_clock.set(t);
        let stamp = format!(" {t}");
        eventually("the kubelet at its time", secs(20), async || {
            let text = http.get(&page).send().await.map_err(|e| e.to_string())?;
            let text = text.text().await.map_err(|e| e.to_string())?;
            let working_sets: Vec<&str> = text
                .lines()
                .filter(|l| l.starts_with("container_memory_working_set_bytes{"))
                .filter(|l| l.contains(&format!("namespace=\"{}\"", w.ns.name)))
                .collect();
            // Three pods, each its container and its own cgroup.
            (working_sets.len() == 6 && working_sets.iter().all(|l| l.ends_with(&stamp)))
                .then_some(())
                .ok_or(text)
        })
        .await;
        w.hub.clock.set(t);
        eventually("the collection at that time", secs(20), async || {
            let (usage, kube_state) = (
                tee.newest("container_memory_working_set_bytes"),
                tee.newest("kube_pod_owner"),
            );
            (usage >= t && kube_state >= t)
                .then_some(())
                .ok_or((usage, kube_state))
        })
        .await;
    }

    // A run over the embedded store: every workload recommended, its hour covered.
    let run = admin.run_to_end(&w.cluster).await;
    assert_eq!(run["status"], "succeeded", "{run}");
    let embedded = recommended(&w, &w.cluster, &w.hub.agent).await;
    assert_eq!(
        embedded.keys().collect::<Vec<_>>(),
        ["db", "web"],
        "{embedded:#?}"
    );
    for (name, item) in &embedded {
        assert_eq!(
            item["dataCoverage"]["coveredSeconds"], HOUR_S,
            "{name}: {item}"
        );
        assert_eq!(item["hasChanges"], true, "{name}: {item}");
        // What the sim ran: 250m (web) and 120m (db), under requests of 1 and 0.5 CPU.
        let cpu = &item["containers"][0]["cpu"]["requests"];
        let (now, suggested) = (cpu["current"].as_f64(), cpu["suggested"].as_f64());
        let used = if name == "web" { 250.0 } else { 120.0 };
        assert!(
            suggested.is_some_and(|s| s > used && s < 2.0 * used && Some(s) < now),
            "{name}: {item}"
        );
    }

    // The same samples in Prometheus, read by remote read for a second cluster (it
    // has no agent, and its workloads are the same series): the same recommendations.
    let twin = format!("{}-prom", w.cluster);
    let (s, created) = admin
        .call("POST", "/v1/clusters", Some(json!({ "name": twin })))
        .await;
    assert_eq!(s, 201, "{created}");
    let twin_token = created["token"].as_str().expect("its agent token");
    let ds = admin
        .post_ok(
            "/v1/datasources",
            json!({ "name": "tee", "type": "prometheus", "url": prom.url }),
        )
        .await;
    let (s, body) = admin
        .put(
            &format!("/v1/clusters/{twin}/datasource"),
            json!({ "datasourceId": ds["id"] }),
        )
        .await;
    assert_eq!(s, 200, "{body}");
    let run = admin.run_to_end(&twin).await;
    assert_eq!(run["status"], "succeeded", "{run}");
    let prometheus = recommended(&w, &twin, twin_token).await;
    assert_eq!(embedded, prometheus);

    // Under a policy whose learning period is the hour, the agent applies both.
    w.policy(
        "learned",
        json!({ "guardrails": { "learningPeriod": "1h", "minConfidence": 0 } }),
    )
    .await;
    let run = admin.run_to_end(&w.cluster).await;
    assert_eq!(run["status"], "succeeded", "{run}");
    let applied = eventually("both applied", secs(60), async || {
        // The agent passes as its clock moves.
        kubelet_clock.advance(MIN);
        w.hub.clock.advance(MIN);
        let events = w.audit().await;
        let mut applied: Vec<String> = events
            .iter()
            .filter(|e| e["type"] == "applied")
            .filter_map(|e| e["workload"]["name"].as_str().map(str::to_string))
            .collect();
        applied.sort();
        (applied.len() == 2).then_some(applied).ok_or(events)
    })
    .await;
    assert_eq!(applied, ["db", "web"]);
    let failures = jobs.stop(Duration::from_secs(10)).await;
    assert!(failures.is_empty(), "{failures:?}");
}
