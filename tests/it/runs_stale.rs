//! Stale marking through the real binary: a workload the datasource stops reporting keeps
//! its last recommendation and is marked stale, while the others stay fresh. Two real
//! Prometheus servers (backfilled with recent data) stand for "before" and "after": the
//! cluster is relinked from the first to the second between runs.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::prometheus::{OpenMetrics, Prometheus};
use crate::support::{client, DataDir, Kerf};

const MIN: i64 = 60_000;

/// A Deployment with one ready pod and one container, sampled every 30 s over the last
/// three hours (ending a minute ago, so every sample lies before the run's window end).
pub fn deployment(om: &mut OpenMetrics, name: &str, now: i64) {
    let (from, to) = (now - 180 * MIN, now - MIN);
    let rs = format!("{name}-7d9f");
    let pod = format!("{rs}-x1");
    let uid = format!("{name}-pod-uid");
    let base = [
        ("cluster", "east"),
        ("namespace", "shop"),
        ("pod", pod.as_str()),
        ("uid", uid.as_str()),
    ];
    let mut owner = base.to_vec();
    owner.extend([
        ("owner_kind", "ReplicaSet"),
        ("owner_name", rs.as_str()),
        ("owner_is_controller", "true"),
    ]);
    let deploy = [
        ("cluster", "east"),
        ("namespace", "shop"),
        ("deployment", name),
    ];
    let rs_owner = [
        ("cluster", "east"),
        ("namespace", "shop"),
        ("replicaset", rs.as_str()),
        ("owner_kind", "Deployment"),
        ("owner_name", name),
    ];
    let container = [
        ("cluster", "east"),
        ("namespace", "shop"),
        ("pod", pod.as_str()),
        ("container", "app"),
        ("id", "c1"),
    ];
    let mut requests = base.to_vec();
    requests.extend([("container", "app"), ("resource", "cpu")]);
    let mut t = from;
    let mut cpu = 0.0;
    while t <= to {
        om.sample("kube_pod_owner", &owner, 1.0, t);
        om.sample("kube_pod_created", &base, (from / 1000) as f64, t);
        om.sample("kube_replicaset_owner", &rs_owner, 1.0, t);
        om.sample(
            "kube_deployment_created",
            &deploy,
            ((from - 60 * MIN) / 1000) as f64,
            t,
        );
        om.sample("kube_deployment_spec_replicas", &deploy, 1.0, t);
        om.sample("kube_pod_container_resource_requests", &requests, 1.0, t);
        cpu += 0.2 * 30.0;
        om.sample("container_cpu_usage_seconds_total", &container, cpu, t);
        om.sample(
            "container_memory_working_set_bytes",
            &container,
            64.0 * 1024.0 * 1024.0,
            t,
        );
        t += 30_000;
    }
}

pub async fn call(
    http: &reqwest::Client,
    method: reqwest::Method,
    url: String,
    token: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut req = http.request(method, url).bearer_auth(token);
    if let Some(b) = body {
        req = req.json(&b);
    }
    let resp = req.send().await.expect("send");
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

pub async fn run_once(http: &reqwest::Client, base: &str, token: &str) -> Value {
    let (s, run) = call(
        http,
        reqwest::Method::POST,
        format!("{base}/v1/clusters/east/runs"),
        token,
        None,
    )
    .await;
    assert_eq!(s, 202, "{run}");
    let id = run["id"].as_str().expect("run id").to_string();
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        let (_, r) = call(
            http,
            reqwest::Method::GET,
            format!("{base}/v1/runs/{id}"),
            token,
            None,
        )
        .await;
        if r["status"] != "running" {
            return r;
        }
        assert!(Instant::now() < deadline, "run {id} never finished");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn workloads(http: &reqwest::Client, base: &str, token: &str) -> Vec<Value> {
    let (s, page) = call(
        http,
        reqwest::Method::GET,
        format!("{base}/v1/workloads?cluster=east"),
        token,
        None,
    )
    .await;
    assert_eq!(s, 200, "{page}");
    page["items"].as_array().cloned().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workload_the_datasource_stops_reporting_is_marked_stale_and_keeps_its_recommendation() {
    let now = kerf::clock::Clock::now_ms(&kerf::clock::SystemClock);
    let mut before = OpenMetrics::new();
    deployment(&mut before, "api", now);
    deployment(&mut before, "web", now);
    let mut after = OpenMetrics::new();
    deployment(&mut after, "api", now);
    let (prom_before, prom_after) = (
        Prometheus::with_data(&before, false),
        Prometheus::with_data(&after, false),
    );

    let data = DataDir::new();
    data.create_cluster("east");
    let admin = data.admin_token();
    let kerf = Kerf::start(data.path(), &[]);
    let (http, base) = (client(), kerf.url(""));
    let mut ids = Vec::new();
    for (name, prom) in [("before", &prom_before), ("after", &prom_after)] {
        let (s, ds) = call(
            &http,
            reqwest::Method::POST,
            format!("{base}/v1/datasources"),
            &admin,
            Some(json!({"name": name, "type": "prometheus", "url": prom.url, "clusterLabel": "cluster"})),
        )
        .await;
        assert_eq!(s, 201, "{ds}");
        ids.push(ds["id"].as_i64().expect("id"));
    }
    let link = |id: i64| {
        let (http, base, admin) = (http.clone(), base.clone(), admin.clone());
        async move {
            let (s, body) = call(
                &http,
                reqwest::Method::PUT,
                format!("{base}/v1/clusters/east/datasource"),
                &admin,
                Some(json!({"datasourceId": id})),
            )
            .await;
            assert_eq!(s, 200, "{body}");
        }
    };

    link(ids[0]).await;
    let first = run_once(&http, &base, &admin).await;
    assert_eq!(first["status"], "succeeded", "{first}");
    // Prometheus streams remote read; the run says so and counts what it received, and
    // /metrics sums it per cluster and protocol.
    let collect = &first["collect"];
    assert_eq!(collect["protocol"], "remote-read", "{collect}");
    let bytes = collect["bytes"].as_u64().unwrap_or(0);
    assert!(
        bytes > 0 && collect["samplesDecoded"].as_u64().unwrap_or(0) > 0,
        "{collect}"
    );
    let exposition = http
        .get(format!("{base}/metrics"))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("metrics text");
    let line = format!(
        "kerf_datasource_received_bytes_total{{cluster=\"east\",protocol=\"remote-read\"}} {bytes}"
    );
    assert!(exposition.contains(&line), "{line} not in:\n{exposition}");
    let seen = workloads(&http, &base, &admin).await;
    let names: Vec<&str> = seen.iter().filter_map(|w| w["name"].as_str()).collect();
    assert!(
        names.contains(&"api") && names.contains(&"web"),
        "{names:?}"
    );
    assert!(seen.iter().all(|w| w["stale"] == false), "{seen:?}");
    let web_before = seen
        .iter()
        .find(|w| w["name"] == "web")
        .expect("web")
        .clone();

    link(ids[1]).await;
    let second = run_once(&http, &base, &admin).await;
    assert_ne!(second["status"], "failed", "{second}");
    let seen = workloads(&http, &base, &admin).await;
    let web = seen
        .iter()
        .find(|w| w["name"] == "web")
        .expect("web is kept");
    let api = seen.iter().find(|w| w["name"] == "api").expect("api");
    assert_eq!(web["stale"], true, "{web}");
    assert!(
        web["staleReason"].as_str().is_some_and(|r| !r.is_empty()),
        "{web}"
    );
    assert_eq!(api["stale"], false, "{api}");
    assert_eq!(
        web["latestRecommendationId"], web_before["latestRecommendationId"],
        "keeps its last recommendation"
    );
}
