//! Ingest benchmark against the real server over loopback (issue: the appliance).
//! Prints: time from start to /readyz 200 on an empty data dir, idle RSS, and stored
//! events/s with 4 concurrent clients sending batches of 100 events (10 % duplicates).
//! Run: cargo bench --bench ingest   (KERF_BENCH_EVENTS sets the total, default 200000;
//! BENCH_V4_IDS=1 sends random v4 event ids, as agents before time-ordered ids did)

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const CLIENTS: usize = 4;
const BATCH: usize = 100;
const DUPLICATES_PER_BATCH: usize = 10;

fn main() {
    let bin = env!("CARGO_BIN_EXE_kerf");
    let total: usize = std::env::var("KERF_BENCH_EVENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200_000);
    kerf::tls::install_crypto_provider();
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let mut startups = Vec::new();
    for _ in 0..5 {
        let dir = tempfile::tempdir().expect("tempdir");
        let (mut child, port, ready_ms) = runtime.block_on(start(bin, dir.path()));
        startups.push(ready_ms);
        let _ = port;
        stop(&mut child);
    }
    startups.sort_by(f64::total_cmp);
    println!(
        "start to /readyz 200 (empty data dir): median {:.1} ms, min {:.1} ms, max {:.1} ms",
        startups[2], startups[0], startups[4]
    );

    let dir = tempfile::tempdir().expect("tempdir");
    let token = cli(bin, dir.path(), &["clusters", "create", "bench"]);
    let (mut child, port, _) = runtime.block_on(start(bin, dir.path()));
    std::thread::sleep(Duration::from_secs(1));
    println!("idle RSS after start: {:.1} MiB", rss_mib(child.id()));
    let (stored, elapsed, latencies) = runtime.block_on(ingest(port, &token, total));
    let ids = if v4_ids() { "v4" } else { "v7" };
    println!(
        "ingest: {stored} events stored in {:.2} s = {:.0} stored events/s ({} clients, batches of {BATCH}, {DUPLICATES_PER_BATCH}% duplicates, {ids} ids)",
        elapsed.as_secs_f64(),
        stored as f64 / elapsed.as_secs_f64(),
        CLIENTS,
    );
    println!(
        "batch latency: p50 {:.2} ms, p99 {:.2} ms; RSS after ingest: {:.1} MiB",
        latencies[latencies.len() / 2],
        latencies[latencies.len() * 99 / 100],
        rss_mib(child.id())
    );
    stop(&mut child);
}

fn cli(bin: &str, dir: &std::path::Path, args: &[&str]) -> String {
    let out = Command::new(bin)
        .env_remove("KERF_BENCH_EVENTS")
        .arg("--data-dir")
        .arg(dir)
        .args(args)
        .output()
        .expect("run kerf");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

async fn start(bin: &str, dir: &std::path::Path) -> (Child, u16, f64) {
    let port = free_port();
    let http = reqwest::Client::new();
    let t0 = Instant::now();
    let child = Command::new(bin)
        .env_remove("KERF_BENCH_EVENTS")
        .arg("--data-dir")
        .arg(dir)
        .args(["--listen", &format!("127.0.0.1:{port}"), "serve"])
        .env("KERF_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let url = format!("http://127.0.0.1:{port}/readyz");
    loop {
        if let Ok(r) = http.get(&url).send().await {
            if r.status() == 200 {
                break;
            }
        }
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "server never became ready"
        );
        tokio::time::sleep(Duration::from_micros(500)).await;
    }
    (child, port, t0.elapsed().as_secs_f64() * 1000.0)
}

fn stop(child: &mut Child) {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let _ = child.wait();
}

fn rss_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map(|kb| kb / 1024.0)
        .unwrap_or(f64::NAN)
}

fn event(id: &str, i: usize) -> Value {
    json!({
        "id": id,
        "type": "skipped",
        "time": "2026-11-04T10:15:00Z",
        "workload": {"namespace": format!("ns-{}", i % 20), "kind": "Deployment", "name": format!("app-{}", i % 500)},
        "reason": "NoSignificantChange",
        "resources": ["cpu"],
        "message": "recommended value within 5% tolerance",
        "details": {"tolerance": "5%"}
    })
}

/// Whether the bench sends random (v4) ids, `BENCH_V4_IDS=1`.
fn v4_ids() -> bool {
    std::env::var_os("BENCH_V4_IDS").is_some()
}

/// An event id as kerf's agent makes them (v7, time-ordered), or random (v4, as
/// earlier agents did) when `v4` is set.
fn event_id(v4: bool) -> String {
    if v4 {
        uuid::Uuid::new_v4().to_string()
    } else {
        uuid::Uuid::now_v7().to_string()
    }
}

async fn ingest(port: u16, token: &str, total: usize) -> (u64, Duration, Vec<f64>) {
    let v4_ids = v4_ids();
    let fresh_per_batch = BATCH - DUPLICATES_PER_BATCH;
    let batches_per_client = total / CLIENTS / fresh_per_batch;
    let http = reqwest::Client::new();
    let url = format!("http://127.0.0.1:{port}/v1/clusters/bench/events");
    // Bodies are encoded before the clock starts: the figure is the server's, not the
    // client's JSON encoding (both share this machine's two cores).
    let bodies: Vec<Vec<Vec<u8>>> = (0..CLIENTS)
        .map(|c| {
            let mut previous: Vec<Value> = Vec::new();
            (0..batches_per_client)
                .map(|b| {
                    let mut batch: Vec<Value> = (0..fresh_per_batch)
                        .map(|i| event(&event_id(v4_ids), c * 1_000_000 + b * BATCH + i))
                        .collect();
                    let source = if previous.is_empty() {
                        &batch
                    } else {
                        &previous
                    };
                    let dups = source[..DUPLICATES_PER_BATCH].to_vec();
                    batch.extend(dups);
                    let body = serde_json::to_vec(&batch).expect("encode");
                    previous = batch;
                    body
                })
                .collect()
        })
        .collect();
    let t0 = Instant::now();
    let mut tasks = Vec::new();
    for client_bodies in bodies {
        let (http, url, token) = (http.clone(), url.clone(), token.to_string());
        tasks.push(tokio::spawn(async move {
            let mut stored = 0u64;
            let mut lat = Vec::with_capacity(client_bodies.len());
            for body in client_bodies {
                let t = Instant::now();
                let resp = http
                    .post(&url)
                    .bearer_auth(&token)
                    .header("content-type", "application/json")
                    .body(body)
                    .send()
                    .await
                    .expect("send");
                assert_eq!(resp.status(), 200);
                let ack: Value = resp.json().await.expect("ack");
                lat.push(t.elapsed().as_secs_f64() * 1000.0);
                stored += ack["accepted"].as_u64().unwrap_or(0);
            }
            (stored, lat)
        }));
    }
    let mut stored = 0;
    let mut latencies = Vec::new();
    for t in tasks {
        let (s, l) = t.await.expect("client");
        stored += s;
        latencies.extend(l);
    }
    let elapsed = t0.elapsed();
    latencies.sort_by(f64::total_cmp);
    (stored, elapsed, latencies)
}
