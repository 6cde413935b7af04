//! Defect 0 of "the truth after acting": under the shipped defaults (a 7-day lookback at
//! 60 s, a 7-day learning period, confidence 70, in place) a workload with exactly seven
//! days of gapless history in a real Prometheus gets its recommendation applied. Before
//! the fix its 10,080 samples "covered" 6 d 23 h 59 m and every workload was `blocked
//! LearningPeriod` forever. The same week in the hub's embedded store (no Prometheus) is
//! applied under the same defaults.

use k8s_openapi::api::apps::v1::ReplicaSet;
use kerf::agent::state::Phase;
use kube::api::{Api, ListParams};
use serde_json::{json, Value};

use std::collections::BTreeMap;
use std::sync::Arc;

use kerf::agent::Hub as _;
use kerf::cluster::WorkloadKey;
use kerf::server::in_process::InProcessHub;
use kerf::wire::remote_write::{self, WriteRequest};

use super::world::{deployment, drive, ready, res, World, MIB};
use crate::support::prometheus::{OpenMetrics, Prometheus};

const MIN: i64 = 60_000;
const WEEK_SAMPLES: i64 = 7 * 24 * 60;

/// A week of kube-state-metrics and cAdvisor scrapes of `pods` (name, uid) of
/// Deployment `web` (ReplicaSet `rs`), one a minute, the last at `end`: 250m ± 10m of
/// CPU and 100 MiB of memory each, under 1 CPU / 512 MiB requests and 2 CPU / 1 GiB limits.
/// Each sample goes to `om` (metric, labels, value, ms).
fn week(
    w: &World,
    rs: &str,
    pods: &[(String, String)],
    end: i64,
    om: &mut impl FnMut(&str, &[(&str, &str)], f64, i64),
) {
    let (cluster, ns) = (w.cluster.as_str(), w.ns.name.as_str());
    let first = end - (WEEK_SAMPLES - 1) * MIN;
    let deploy = [
        ("cluster", cluster),
        ("namespace", ns),
        ("deployment", "web"),
    ];
    let rs_owner = [
        ("cluster", cluster),
        ("namespace", ns),
        ("replicaset", rs),
        ("owner_kind", "Deployment"),
        ("owner_name", "web"),
    ];
    for k in 0..WEEK_SAMPLES {
        let t = first + k * MIN;
        om(
            "kube_deployment_created",
            &deploy,
            ((first - 60 * MIN) / 1000) as f64,
            t,
        );
        om(
            "kube_deployment_spec_replicas",
            &deploy,
            pods.len() as f64,
            t,
        );
        om("kube_replicaset_owner", &rs_owner, 1.0, t);
    }
    for (i, (pod, uid)) in pods.iter().enumerate() {
        let base = [
            ("cluster", cluster),
            ("namespace", ns),
            ("pod", pod.as_str()),
            ("uid", uid.as_str()),
        ];
        let mut owner = base.to_vec();
        owner.extend([
            ("owner_kind", "ReplicaSet"),
            ("owner_name", rs),
            ("owner_is_controller", "true"),
        ]);
        let setting = |resource: &'static str| {
            let mut l = base.to_vec();
            l.extend([("container", "app"), ("resource", resource)]);
            l
        };
        let container = [
            ("cluster", cluster),
            ("namespace", ns),
            ("pod", pod.as_str()),
            ("container", "app"),
            ("id", "c1"),
        ];
        let mut cpu_seconds = 0.0;
        for k in 0..WEEK_SAMPLES {
            let t = first + k * MIN;
            om("kube_pod_owner", &owner, 1.0, t);
            om("kube_pod_created", &base, (first / 1000) as f64, t);
            for (metric, resource, value) in [
                ("kube_pod_container_resource_requests", "cpu", 1.0),
                (
                    "kube_pod_container_resource_requests",
                    "memory",
                    512.0 * MIB as f64,
                ),
                ("kube_pod_container_resource_limits", "cpu", 2.0),
                (
                    "kube_pod_container_resource_limits",
                    "memory",
                    1024.0 * MIB as f64,
                ),
            ] {
                om(metric, &setting(resource), value, t);
            }
            // 240..=260 millicores, a fixed pattern per pod.
            let millicores = 240.0 + ((k * 7 + i as i64 * 3) % 21) as f64;
            if k > 0 {
                cpu_seconds += millicores / 1000.0 * 60.0;
            }
            om(
                "container_cpu_usage_seconds_total",
                &container,
                cpu_seconds,
                t,
            );
            om(
                "container_memory_working_set_bytes",
                &container,
                100.0 * MIB as f64,
                t,
            );
        }
    }
}

/// The web Deployment (2 replicas) created and running: its key, ReplicaSet and pods.
async fn web(w: &World) -> (WorkloadKey, String, Vec<(String, String)>) {
    let key = w
        .create(&deployment("web", 2, res(1000, 2000, 512, 1024)))
        .await;
    let live = ready(w, &key, 2).await;
    let sets = Api::<ReplicaSet>::namespaced(w.admin.clone(), &w.ns.name)
        .list(&ListParams::default())
        .await
        .expect("replicasets");
    let rs = sets.items[0]
        .metadata
        .name
        .clone()
        .expect("replicaset name");
    let pods = live
        .iter()
        .map(|p| (p.pod.name.clone(), p.uid.clone()))
        .collect();
    (key, rs, pods)
}

/// The last scrape at or before the hub's now: 10,080 scrapes inside the 7-day window.
fn week_end(w: &World) -> i64 {
    let now = kerf::clock::Clock::now_ms(w.hub.clock.as_ref());
    now - now % MIN
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_week_of_history_in_prometheus_is_applied_under_the_shipped_defaults() {
    let w = World::now("defaults", 4000, 8192).await;
    let (key, rs, pods) = web(&w).await;
    let mut om = OpenMetrics::new();
    week(&w, &rs, &pods, week_end(&w), &mut |n, l, v, t| {
        om.sample(n, l, v, t)
    });
    let prom = Prometheus::with_data(&om, false);
    let api = w.hub.as_token(&w.hub.admin);
    api.link_prometheus(&w.cluster, "prom", &prom.url).await;
    applied_under_the_shipped_defaults(&w, &key).await;
}

/// The same week in the hub's embedded store (a cluster with no Prometheus, its usage
/// remote-written as the agent's collector writes it): applied under the same defaults.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_week_of_history_in_the_embedded_store_is_applied_under_the_shipped_defaults() {
    let clock = kerf::clock::Clock::now_ms(&kerf::clock::SystemClock);
    let w = World::timed(
        "defaults-emb",
        4000,
        8192,
        Arc::new(kerf::clock::ManualClock::new(clock)),
    )
    .await;
    let (key, rs, pods) = web(&w).await;
    let mut series: BTreeMap<BTreeMap<String, String>, Vec<(i64, f64)>> = BTreeMap::new();
    week(&w, &rs, &pods, week_end(&w), &mut |n, l, v, t| {
        let labels = l
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .chain([("__name__".to_string(), n.to_string())])
            .collect();
        series.entry(labels).or_default().push((t, v));
    });
    let hub = InProcessHub::new(w.hub.state.clone(), &w.cluster);
    for (labels, points) in &series {
        for part in points.chunks(5_000) {
            let request = WriteRequest {
                timeseries: vec![remote_write::series(labels, part)],
            };
            let body = remote_write::encode(&request).expect("encodes");
            hub.write(body.into()).await.expect("the hub stores it");
        }
    }
    applied_under_the_shipped_defaults(&w, &key).await;
}

/// Under the defaults but an auto-patch policy, a run covers the whole week and the agent
/// applies the change, near the week's P95 × 1.15.
async fn applied_under_the_shipped_defaults(w: &World, key: &WorkloadKey) {
    let api = w.hub.as_token(&w.hub.admin);
    // Only the mode differs from what a new hub ships: the lookback, the learning
    // period, the confidence, the tolerance and the strategy are the defaults.
    let (s, body) = api
        .call(
            "POST",
            "/v1/policies",
            Some(json!({
                "name": "auto",
                "selector": { "clusters": [w.cluster], "namespaces": [w.ns.name] },
                "mode": { "cpu": "auto-patch", "memory": "auto-patch" },
            })),
        )
        .await;
    assert_eq!(s, 201, "{body}");
    let run = api.run_to_end(&w.cluster).await;
    assert_eq!(run["status"], "succeeded", "{run}");

    let feed = w.hub.as_token(&w.hub.agent);
    let (s, page) = feed
        .get(&format!("/v1/clusters/{}/recommendations", w.cluster))
        .await;
    assert_eq!(s, 200, "{page}");
    let items = page["items"].as_array().expect("items");
    let item: &Value = items
        .iter()
        .find(|i| i["workload"]["name"] == "web")
        .unwrap_or_else(|| panic!("web in {page}"));
    assert_eq!(
        item["dataCoverage"]["coveredSeconds"], 604_800,
        "a gapless week covers the week: {item}"
    );
    assert_eq!(item["dataCoverage"]["covered"], "7d", "{item}");
    assert_eq!(item["hasChanges"], true, "{item}");

    let mut agent = w.agent().await;
    drive(&mut agent, "applied under the shipped defaults", |a| {
        a.state(key)
            .is_some_and(|s| s.phase == Phase::Applied && s.operation.is_none())
    })
    .await;
    w.deliver(&agent).await;
    let events = w.audit().await;
    let applied: Vec<&Value> = events.iter().filter(|e| e["type"] == "applied").collect();
    assert_eq!(applied.len(), 1, "{events:#?}");
    assert_eq!(applied[0]["reason"], "RecommendationApplied");
    assert_eq!(applied[0]["strategy"], "in-place");
    assert!(
        !events.iter().any(|e| e["reason"] == "LearningPeriod"),
        "{events:#?}"
    );
    // The new CPU request sits near the week's P95 × 1.15 (about 300m), not at 1 CPU.
    let cpu = applied[0]["containers"][0]["to"]["requests"]["cpu"]
        .as_str()
        .expect("a new CPU request");
    let millicores: u64 = cpu.trim_end_matches('m').parse().expect("millicores");
    assert!((280..=320).contains(&millicores), "{cpu}");
}
