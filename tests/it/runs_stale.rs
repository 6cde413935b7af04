//! Stale marking through the real binary: a workload the datasource stops reporting keeps
//! its last recommendation and is marked stale, while the others stay fresh. Two real
//! Prometheus servers (backfilled with recent data) stand for "before" and "after": the
//! cluster is relinked from the first to the second between runs.

use serde_json::{json, Value};

use crate::support::prometheus::{OpenMetrics, Prometheus};
use crate::support::series::deployment;
use crate::support::{client, Api, DataDir};

async fn workloads(api: &Api) -> Vec<Value> {
    let (s, page) = api.get("/v1/workloads?cluster=east").await;
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
    let kerf = data.start();
    let api = kerf.api(&admin);
    let http = client();
    let base = kerf.url("");
    let mut ids = Vec::new();
    for (name, prom) in [("before", &prom_before), ("after", &prom_after)] {
        let (s, ds) = api.call("POST", "/v1/datasources", Some(json!({"name": name, "type": "prometheus", "url": prom.url, "clusterLabel": "cluster"})))
        .await;
        assert_eq!(s, 201, "{ds}");
        ids.push(ds["id"].as_i64().expect("id"));
    }
    let link = |id: i64| {
        let api = api.clone();
        async move {
            let (s, body) = api
                .call(
                    "PUT",
                    "/v1/clusters/east/datasource",
                    Some(json!({"datasourceId": id})),
                )
                .await;
            assert_eq!(s, 200, "{body}");
        }
    };

    link(ids[0]).await;
    let first = api.run_to_end("east").await;
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
    let seen = workloads(&api).await;
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
    let second = api.run_to_end("east").await;
    assert_ne!(second["status"], "failed", "{second}");
    let seen = workloads(&api).await;
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
