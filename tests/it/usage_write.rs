//! Prometheus remote write into the hub's usage store, through the real binary
//! (`POST /v1/clusters/{cluster}/write`): retries stored once, bad samples refused by
//! reason and counted in `/metrics` while the rest is stored, every bad body answered
//! with the status a remote-write client understands, the series limit named, and a
//! SIGKILL mid-stream losing no acknowledged sample. The store is read back with
//! kerf's own `UsageStore` once the server has stopped.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use kerf::store::usage::{SeriesQuery, UsageOptions, UsageStore};
use kerf::wire::remote_write::{encode, series, WriteRequest};
use serde_json::Value;

use crate::support::wait::eventually_every;
use crate::support::{client, error_code, secs, DataDir, Kerf};

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

fn labels(name: &str, pod: &str) -> BTreeMap<String, String> {
    [
        ("__name__", name),
        ("namespace", "shop"),
        ("pod", pod),
        ("container", "app"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// A write of `pods` series, each with `samples` at `t0`, `t0 + 15 s`, ...
fn write(pods: usize, t0: i64, samples: usize) -> Vec<u8> {
    let request = WriteRequest {
        timeseries: (0..pods)
            .map(|p| {
                let s: Vec<(i64, f64)> = (0..samples)
                    .map(|i| (t0 + i as i64 * 15_000, (p * 1000 + i) as f64))
                    .collect();
                series(
                    &labels("container_memory_working_set_bytes", &format!("web-{p}")),
                    &s,
                )
            })
            .collect(),
    };
    encode(&request).expect("encode")
}

async fn post(kerf: &Kerf, token: &str, cluster: &str, body: Vec<u8>) -> (u16, Value) {
    post_with(
        kerf,
        token,
        cluster,
        body,
        "snappy",
        "application/x-protobuf",
    )
    .await
}

async fn post_with(
    kerf: &Kerf,
    token: &str,
    cluster: &str,
    body: Vec<u8>,
    encoding: &str,
    content_type: &str,
) -> (u16, Value) {
    let resp = client()
        .post(kerf.url(&format!("/v1/clusters/{cluster}/write")))
        .bearer_auth(token)
        .header("content-encoding", encoding)
        .header("content-type", content_type)
        .header("x-prometheus-remote-write-version", "0.1.0")
        .body(body)
        .send()
        .await
        .expect("post");
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap_or_default();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// The store of a stopped server's data dir.
fn usage_of(data: &DataDir) -> UsageStore {
    UsageStore::open_and_migrate(
        &data.path().join("usage.db"),
        &UsageOptions::default(),
        now_ms(),
    )
    .expect("open the usage store")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_retried_write_is_stored_once_and_bad_samples_are_refused_by_reason() {
    let data = DataDir::new();
    let token = data.create_cluster("prod");
    let kerf = data.start();
    let t0 = now_ms() - 10 * 60_000;
    let (s, body) = post(&kerf, &token, "prod", write(3, t0, 4)).await;
    assert_eq!(s, 204, "{body}");
    // The writer did not see the answer and sends the same write again.
    let (s, body) = post(&kerf, &token, "prod", write(3, t0, 4)).await;
    assert_eq!(s, 204, "{body}");

    // One series: a sample out of order, one too old, and one that conflicts.
    let pod0 = labels("container_memory_working_set_bytes", "web-0");
    let bad = WriteRequest {
        timeseries: vec![series(
            &pod0,
            &[
                (t0 + 7_000, 1.0),
                (t0 - 30 * 86_400_000, 1.0),
                (t0, 99.0),
                (t0 + 60_000, 4.0),
            ],
        )],
    };
    let (s, body) = post(&kerf, &token, "prod", encode(&bad).unwrap()).await;
    assert_eq!(s, 400, "{body}");
    assert_eq!(error_code(&body), "partial_write");
    let d = &body["error"]["details"];
    assert_eq!(d["refused"]["out_of_order"], 1, "{body}");
    assert_eq!(d["refused"]["too_old"], 1, "{body}");
    assert_eq!(d["refused"]["conflict"], 1, "{body}");
    assert_eq!(d["stored"], 1, "{body}");
    assert!(d["examples"].as_array().is_some_and(|e| !e.is_empty()));

    for reason in ["out_of_order", "too_old", "conflict"] {
        let labels = [("cluster", "prod"), ("reason", reason)];
        let refused = kerf
            .metric("kerf_usage_samples_refused_total", &labels)
            .await;
        assert_eq!(refused, 1.0, "{reason}");
    }
    let stored = kerf
        .metric("kerf_usage_samples_stored_total", &[("cluster", "prod")])
        .await;
    assert_eq!(stored, 13.0);
    let dups = kerf
        .metric(
            "kerf_usage_samples_duplicates_total",
            &[("cluster", "prod")],
        )
        .await;
    assert_eq!(dups, 12.0);
    let partial = kerf
        .metric(
            "kerf_usage_write_requests_total",
            &[("cluster", "prod"), ("outcome", "partial")],
        )
        .await;
    assert_eq!(partial, 1.0);

    assert_eq!(kerf.stop(), Some(0));
    let usage = usage_of(&data);
    let got = usage
        .reading(move |r| {
            r.select(
                &SeriesQuery::new("prod", ["container_memory_working_set_bytes"])
                    .between(t0 - 86_400_000, t0 + 3_600_000),
            )
        })
        .await
        .unwrap();
    assert_eq!(got.len(), 3);
    let web0 = got.iter().find(|s| s.labels["pod"] == "web-0").unwrap();
    let times: Vec<i64> = web0.samples.iter().map(|s| s.timestamp - t0).collect();
    assert_eq!(times, vec![0, 15_000, 30_000, 45_000, 60_000]);
    assert_eq!(
        web0.samples[0].value, 0.0,
        "the conflicting value was not taken"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_writes_get_the_status_a_remote_write_client_understands() {
    let data = DataDir::new();
    let prod = data.create_cluster("prod");
    let stage = data.create_cluster("stage");
    let kerf = Kerf::builder(data.path())
        .env("KERF_USAGE__MAX_WRITE_BYTES", "65536")
        .start();
    let good = write(1, now_ms() - 60_000, 2);

    let (s, body) = post(&kerf, "kerf_ct_0000", "prod", good.clone()).await;
    assert_eq!((s, error_code(&body).as_str()), (401, "unauthorized"));
    let (s, body) = post(&kerf, &stage, "prod", good.clone()).await;
    assert_eq!(s, 403, "another cluster's token: {body}");
    error_code(&body);

    let not_snappy = b"\xff\xff\xff\xff\xff\xff".to_vec();
    let (s, body) = post(&kerf, &prod, "prod", not_snappy).await;
    assert_eq!((s, error_code(&body).as_str()), (400, "invalid_write"));
    let not_proto = snap::raw::Encoder::new()
        .compress_vec(b"\x0a\x05\x0a\x03abc\xff")
        .unwrap();
    let (s, body) = post(&kerf, &prod, "prod", not_proto).await;
    assert_eq!((s, error_code(&body).as_str()), (400, "invalid_write"));
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("WriteRequest"));

    // Larger than max_write_bytes as sent, and a bomb whose header claims 1 GiB.
    let (s, body) = post(&kerf, &prod, "prod", vec![0u8; 70_000]).await;
    assert_eq!((s, error_code(&body).as_str()), (413, "payload_too_large"));
    let bomb = vec![0x80, 0x80, 0x80, 0x80, 0x04, 0x00];
    let (s, body) = post(&kerf, &prod, "prod", bomb).await;
    assert_eq!((s, error_code(&body).as_str()), (413, "payload_too_large"));

    let (s, body) = post_with(
        &kerf,
        &prod,
        "prod",
        good.clone(),
        "gzip",
        "application/x-protobuf",
    )
    .await;
    assert_eq!((s, error_code(&body).as_str()), (415, "unsupported_write"));
    let v2 = "application/x-protobuf;proto=io.prometheus.write.v2.Request";
    let (s, body) = post_with(&kerf, &prod, "prod", good.clone(), "snappy", v2).await;
    assert_eq!((s, error_code(&body).as_str()), (415, "unsupported_write"));

    let (s, body) = post(&kerf, &prod, "prod", good).await;
    assert_eq!(s, 204, "the same hub still stores a good write: {body}");
    let invalid = kerf
        .metric(
            "kerf_usage_write_requests_total",
            &[("cluster", "prod"), ("outcome", "invalid")],
        )
        .await;
    assert_eq!(invalid, 4.0);
}

#[tokio::test(flavor = "multi_thread")]
async fn series_past_the_clusters_limit_are_refused_named_and_counted() {
    let data = DataDir::new();
    let token = data.create_cluster("prod");
    let kerf = Kerf::builder(data.path())
        .env("KERF_USAGE__MAX_SERIES_PER_CLUSTER", "1000")
        .start();
    let (s, body) = post(&kerf, &token, "prod", write(1000, now_ms() - 60_000, 1)).await;
    assert_eq!(s, 204, "{body}");
    let (s, body) = post(&kerf, &token, "prod", write(1003, now_ms() - 30_000, 1)).await;
    assert_eq!(s, 400, "{body}");
    assert_eq!(
        body["error"]["details"]["refused"]["series_limit"], 3,
        "{body}"
    );
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("web-100"),
        "the refused series are named: {message}"
    );
    let limited = kerf
        .metric(
            "kerf_usage_samples_refused_total",
            &[("cluster", "prod"), ("reason", "series_limit")],
        )
        .await;
    assert_eq!(limited, 3.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_sigkill_mid_stream_loses_no_acknowledged_sample() {
    const WRITERS: usize = 3;
    const WRITES: usize = 40;
    let data = DataDir::new();
    let token = data.create_cluster("prod");
    let kerf = data.start();
    let url = Arc::new(std::sync::Mutex::new(kerf.url("")));
    let t0 = now_ms() - 3_600_000;
    let acked = Arc::new(AtomicUsize::new(0));
    // Each writer owns its pods; write k carries their samples at t0 + k × 15 s. An
    // acknowledged write is recorded before the next is sent; a failed one is retried
    // until acknowledged, as a remote-write client does.
    let acknowledged: Arc<std::sync::Mutex<Vec<(usize, usize)>>> = Arc::default();
    let mut tasks = Vec::new();
    for w in 0..WRITERS {
        let (url, token, acked, acknowledged) = (
            url.clone(),
            token.clone(),
            acked.clone(),
            acknowledged.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let http = client();
            for k in 0..WRITES {
                let request = WriteRequest {
                    timeseries: (0..20)
                        .map(|p| {
                            let pod = format!("w{w}-{p}");
                            let t = t0 + k as i64 * 15_000;
                            series(
                                &labels("container_memory_working_set_bytes", &pod),
                                &[(t, k as f64)],
                            )
                        })
                        .collect(),
                };
                let body = encode(&request).unwrap();
                loop {
                    let base = url.lock().unwrap().clone();
                    let sent = http
                        .post(format!("{base}/v1/clusters/prod/write"))
                        .bearer_auth(&token)
                        .header("content-encoding", "snappy")
                        .header("content-type", "application/x-protobuf")
                        .timeout(Duration::from_secs(5))
                        .body(body.clone())
                        .send()
                        .await;
                    if sent.is_ok_and(|r| r.status() == 204) {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                acknowledged.lock().unwrap().push((w, k));
                acked.fetch_add(1, Ordering::SeqCst);
            }
        }));
    }
    let third = WRITERS * WRITES / 3;
    eventually_every(
        "a third of the writes acknowledged",
        secs(60),
        Duration::from_millis(2),
        async || acked.load(Ordering::SeqCst) >= third,
    )
    .await;
    let before_kill = acknowledged.lock().unwrap().clone();
    kerf.kill();
    let kerf = data.start();
    *url.lock().unwrap() = kerf.url("");
    for t in tasks {
        t.await.expect("writer");
    }
    assert_eq!(kerf.stop(), Some(0));

    let usage = usage_of(&data);
    let stored = usage
        .reading(move |r| {
            r.select(
                &SeriesQuery::new("prod", ["container_memory_working_set_bytes"])
                    .between(t0 - 1, t0 + 3_600_000),
            )
        })
        .await
        .unwrap();
    let by_pod: BTreeMap<String, Vec<(i64, f64)>> = stored
        .iter()
        .map(|s| {
            let samples = s.samples.iter().map(|x| (x.timestamp, x.value)).collect();
            (s.labels["pod"].clone(), samples)
        })
        .collect();
    assert!(before_kill.len() >= third);
    for w in 0..WRITERS {
        for p in 0..20 {
            // Every write was acknowledged in the end, those before the kill included:
            // each sample is there exactly once, with its value.
            let want: Vec<(i64, f64)> = (0..WRITES)
                .map(|k| (t0 + k as i64 * 15_000, k as f64))
                .collect();
            assert_eq!(by_pod[&format!("w{w}-{p}")], want, "pod w{w}-{p}");
        }
    }
}
