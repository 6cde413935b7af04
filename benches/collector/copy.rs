//! Part 2: the run benchmark's week (`fleet_tsdb::BENCH`: 1,000 Deployments × 3
//! replicas × 2 containers, 7 days at 60 s, and its kube-state-metrics series) copied
//! sample for sample from its Prometheus (remote read of every series of every metric)
//! into a cluster's embedded store by remote write, through the agent's hub client. The
//! two stores then hold the same samples, so a run over each can be set side by side.
//! The copy goes two hours at a time, oldest first, every series of each two hours
//! before the next: the order a collector or a Prometheus remote writer sends them in.

use std::time::{Duration, Instant};

use bytes::Bytes;
use kerf::agent::http_hub::HttpHub;
use kerf::agent::Hub;
use kerf::datasource::prometheus::remote_read::{MatchType, Matcher, ReadQuery};
use kerf::wire::remote_write::{encode, series, WriteRequest};

use crate::support::procfs::{cpu_seconds, status_mib};

/// Samples per write: well under the hub's body limit.
const SAMPLES_PER_WRITE: usize = 20_000;
/// The copy's step: one chunk slot of the store.
const SLOT_MS: i64 = 7_200_000;

pub struct Copied {
    pub series: u64,
    pub samples: u64,
    pub writes: u64,
    pub wall_s: f64,
    pub hub_cpu_s: f64,
    pub hub_idle_mib: f64,
    pub hub_peak_mib: f64,
}

/// Every metric name the Prometheus at `url` holds.
async fn metric_names(url: &str) -> Vec<String> {
    let body: serde_json::Value = reqwest::get(format!("{url}/api/v1/label/__name__/values"))
        .await
        .expect("label values")
        .json()
        .await
        .expect("json");
    body["data"]
        .as_array()
        .expect("names")
        .iter()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect()
}

/// Copies `[start_ms, end_ms]` of every series at `prometheus` into cluster `cluster`
/// of the hub at `hub_url` (process `pid`).
pub async fn copy(
    prometheus: &str,
    (hub_url, pid): (&str, &str),
    (cluster, token): (&str, String),
    (start_ms, end_ms): (i64, i64),
) -> Copied {
    let source = crate::support::prometheus::source_at(prometheus, Duration::from_secs(600), 1);
    let hub =
        HttpHub::new(hub_url, cluster, token, None, Duration::from_secs(60)).expect("hub client");
    let hub_idle_mib = status_mib(pid, "VmRSS:");
    let hub_cpu_before = cpu_seconds(pid);
    let mut hub_peak_mib = hub_idle_mib;
    let started = Instant::now();
    let (mut samples, mut writes) = (0u64, 0u64);
    let mut request = WriteRequest::default();
    let names = metric_names(prometheus).await;
    let mut seen = std::collections::BTreeSet::new();
    let mut from = start_ms - start_ms.rem_euclid(SLOT_MS);
    while from <= end_ms {
        let to = (from + SLOT_MS - 1).min(end_ms);
        for name in &names {
            let query = ReadQuery {
                start_ms: from.max(start_ms),
                end_ms: to,
                matchers: vec![Matcher::new(MatchType::Eq, "__name__", name)],
            };
            let mut stream = source
                .client()
                .remote_read(std::slice::from_ref(&query))
                .await
                .expect("remote read");
            while let Some(read) = stream.next().await.expect("a series") {
                assert!(read.fault.is_none(), "{name}: {:?}", read.fault);
                let points: Vec<(i64, f64)> = read
                    .samples
                    .iter()
                    .map(|s| (s.timestamp, s.value))
                    .collect();
                // Remote read answers whole chunks: only this slot's samples.
                let points: Vec<(i64, f64)> = points
                    .into_iter()
                    .filter(|p| p.0 >= query.start_ms && p.0 <= to)
                    .collect();
                if points.is_empty() {
                    continue;
                }
                seen.insert(read.labels.clone());
                request.timeseries.push(series(&read.labels, &points));
                if request.sample_count() >= SAMPLES_PER_WRITE {
                    samples += request.sample_count() as u64;
                    writes += 1;
                    let body = encode(&std::mem::take(&mut request)).expect("encodes");
                    hub.write(Bytes::from(body))
                        .await
                        .expect("the hub takes it");
                    if writes % 64 == 0 {
                        hub_peak_mib = hub_peak_mib.max(status_mib(pid, "VmRSS:"));
                    }
                }
            }
        }
        from += SLOT_MS;
    }
    if !request.timeseries.is_empty() {
        samples += request.sample_count() as u64;
        writes += 1;
        let body = encode(&request).expect("encodes");
        hub.write(Bytes::from(body))
            .await
            .expect("the hub takes it");
    }
    hub_peak_mib = hub_peak_mib.max(status_mib(pid, "VmRSS:"));
    Copied {
        series: seen.len() as u64,
        samples,
        writes,
        wall_s: started.elapsed().as_secs_f64(),
        hub_cpu_s: cpu_seconds(pid) - hub_cpu_before,
        hub_idle_mib,
        hub_peak_mib,
    }
}
