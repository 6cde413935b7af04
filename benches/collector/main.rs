//! Issue 30: kerf without a Prometheus, measured. Two parts, each against the release
//! `kerf serve`:
//! 1. `collect`: the agent's collector at 30 s over the in-process sim holding 1,000
//!    Deployments × 3 replicas × 2 containers on 30 nodes, `KERF_BENCH_HOURS` (default
//!    4) of its clock, shipped by remote write through the agent's hub client. Prints
//!    the hub's ingest CPU seconds per hour of data, its RSS beyond idle, its bytes on
//!    disk per sample, and the agent's cost per node and collection.
//! 2. `copy` and two runs: the run benchmark's week (`fleet_tsdb::BENCH`, 7 days at
//!    60 s) copied from its Prometheus into a cluster's embedded store, sample for
//!    sample; then a 7-day recommendation run over the embedded store and one over the
//!    same Prometheus (remote read), in the same hub, and the bytes on disk per sample
//!    of each store for the same samples.
//!
//! `cargo bench --bench collector [-- collect|copy]`. Figures are printed, never
//! asserted (the collector's scrapes all answering is checked).

mod collect;
mod copy;
// Its run and budget are the run benchmark's; the hub it starts and its commands are
// shared.
#[allow(dead_code)]
#[path = "../run_prometheus/serve.rs"]
mod serve;
#[path = "../support/mod.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::procfs::cpu_seconds;
use support::{fleet_tsdb as dataset, prometheus, Api};

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"))
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

fn main() {
    kerf::tls::install_crypto_provider();
    prometheus::ensure_installed();
    serve::ensure_faketime();
    let parts: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a == "collect" || a == "copy")
        .collect();
    let wanted = |p: &str| parts.is_empty() || parts.iter().any(|a| a == p);
    if wanted("collect") {
        part_collect();
    }
    if wanted("copy") {
        part_copy();
    }
}

/// Bytes of the usage store's files (the database and its write-ahead log).
fn usage_bytes(data_dir: &Path) -> u64 {
    ["usage.db", "usage.db-wal"]
        .iter()
        .filter_map(|f| std::fs::metadata(data_dir.join(f)).ok())
        .map(|m| m.len())
        .sum()
}

fn part_collect() {
    let hours: i64 = std::env::var("KERF_BENCH_HOURS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4);
    let now_s = kerf::clock::Clock::now_ms(&kerf::clock::SystemClock) / 1000;
    let dir = tempfile::tempdir().expect("tempdir");
    let token =
        serve::one_line(serve::kerf(dir.path(), now_s).args(["clusters", "create", "edge"]));
    let hub = serve::start(dir.path(), now_s);
    let pid = hub.pid().to_string();
    println!(
        "== part 1: the agent's collector, 1,000 workloads × 3 replicas × 2 containers on {} \
         nodes, every 30 s for {hours} h ==",
        collect::NODES
    );
    let kept = dir.path().join("bodies.bin");
    let rt = runtime();
    let c = rt.block_on(collect::collect(
        (&hub.url(""), &pid),
        ("edge", token),
        hours,
        now_s * 1000,
        &kept,
    ));
    let bytes = usage_bytes(dir.path());
    let per_round = c.samples as f64 / c.rounds as f64;
    println!(
        "sent: {} samples ({per_round:.0} a collection) in {} writes over {} collections; \
         {:.1} s wall",
        c.samples, c.writes, c.rounds, c.wall_s
    );
    println!(
        "hub ingest: {:.2} CPU s per hour of data ({:.1} s for {hours} h; {:.0} samples per CPU s)",
        c.hub_cpu_s / hours as f64,
        c.hub_cpu_s,
        c.samples as f64 / c.hub_cpu_s.max(1e-9)
    );
    println!(
        "hub RSS: {:.1} MiB idle, {:.1} MiB peak while ingesting = {:.1} MiB beyond idle",
        c.hub_idle_mib,
        c.hub_peak_mib,
        c.hub_peak_mib - c.hub_idle_mib
    );
    // The same bodies into a real Prometheus; a snapshot writes its head out as a
    // block, so its bytes for exactly these samples can be read.
    let prom = prometheus::Prometheus::remote_write_receiver_with(&["--web.enable-admin-api"]);
    let bodies = rt.block_on(collect::replay(&kept, &prom.url));
    let snapshot = rt.block_on(async {
        let r: Value = support::client()
            .post(format!("{}/api/v1/admin/tsdb/snapshot", prom.url))
            .send()
            .await
            .expect("snapshot")
            .json()
            .await
            .expect("json");
        r["data"]["name"]
            .as_str()
            .expect("a snapshot name")
            .to_string()
    });
    let (samples, chunks, all) = blocks(&prom.dir().join("tsdb/snapshots").join(snapshot));
    let per = |b: u64, n: u64| b as f64 / n.max(1) as f64;
    println!(
        "on disk: the usage store {:.1} MB = {:.3} B/sample; Prometheus (the same {bodies} \
         bodies, {samples} samples, its head written out by a snapshot) {:.1} MB = {:.3} \
         B/sample ({:.3} in chunks alone): {:.3} × Prometheus",
        bytes as f64 / 1e6,
        per(bytes, c.samples),
        all as f64 / 1e6,
        per(all, samples),
        per(chunks, samples),
        per(bytes, c.samples) / per(all, samples)
    );
    println!(
        "agent (collector + the in-process sim's kubelet pages): {:.1} ms CPU per collection \
         = {:.2} ms per node ({} pods a node)",
        c.agent_cpu_s * 1000.0 / c.rounds as f64,
        c.agent_cpu_s * 1000.0 / (c.rounds as f64 * collect::NODES as f64),
        3_000 / collect::NODES
    );
    hub.stop();
}

/// One run of `cluster`, polled to its end: the run, its wall time, the hub's CPU.
async fn run(api: &Api, cluster: &str, pid: &str) -> (Value, f64, f64) {
    let cpu = cpu_seconds(pid);
    let started = Instant::now();
    let (s, run) = api
        .call("POST", &format!("/v1/clusters/{cluster}/runs"), None)
        .await;
    assert_eq!(s, 202, "{run}");
    let path = format!("/v1/runs/{}", run["id"].as_str().expect("run id"));
    loop {
        let (_, r) = api.get(&path).await;
        if r["status"] != "running" {
            return (r, started.elapsed().as_secs_f64(), cpu_seconds(pid) - cpu);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Bytes of every block of the TSDB at `tsdb` (chunks, index, meta) and their samples.
fn blocks(tsdb: &Path) -> (u64, u64, u64) {
    let (mut samples, mut chunks, mut all) = (0u64, 0u64, 0u64);
    for entry in std::fs::read_dir(tsdb).into_iter().flatten().flatten() {
        let Ok(meta) = std::fs::read_to_string(entry.path().join("meta.json")) else {
            continue;
        };
        let meta: Value = serde_json::from_str(&meta).unwrap_or_default();
        samples += meta["stats"]["numSamples"].as_u64().unwrap_or(0);
        let size = |p: PathBuf| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        for file in std::fs::read_dir(entry.path().join("chunks"))
            .into_iter()
            .flatten()
            .flatten()
        {
            chunks += size(file.path());
        }
        all += size(entry.path().join("index")) + size(entry.path().join("meta.json"));
        all += size(entry.path().join("tombstones"));
    }
    (samples, chunks, all + chunks)
}

fn part_copy() {
    let (tsdb, generated) = dataset::ensure(&dataset::BENCH, &target_dir());
    if generated > 0.0 {
        println!("data generation + backfill: {generated:.1} s (cached for later runs)");
    }
    let prom = prometheus::Prometheus::serve_existing_with(
        &tsdb,
        &["--storage.tsdb.max-block-duration=24h"],
    );
    let now_s = dataset::END_S + 30;
    let dir = tempfile::tempdir().expect("tempdir");
    let token =
        serve::one_line(serve::kerf(dir.path(), now_s).args(["clusters", "create", "embedded"]));
    serve::one_line(serve::kerf(dir.path(), now_s).args(["clusters", "create", "remote"]));
    let admin = serve::one_line(
        serve::kerf(dir.path(), now_s)
            .args(["token", "create", "--name", "bench", "--role", "admin"]),
    );
    let hub = serve::start(dir.path(), now_s);
    let pid = hub.pid().to_string();
    println!(
        "\n== part 2: the run benchmark's week (1,000 × 3 × 2, 7 days at 60 s) in both stores =="
    );
    let rt = runtime();
    let window = (dataset::START_S * 1000, dataset::END_S * 1000);
    let c = rt.block_on(copy::copy(
        &prom.url,
        (&hub.url(""), &pid),
        ("embedded", token),
        window,
    ));
    let took = rt.block_on(hub.metric(
        "kerf_usage_samples_stored_total",
        &[("cluster", "embedded")],
    )) as u64;
    // Its clock back at the week's end (the copy took minutes of it): a fresh start on
    // the same data dir, as after an upgrade.
    hub.stop();
    let hub = serve::start(dir.path(), now_s);
    let pid = hub.pid().to_string();
    let api = hub.api(&admin);
    println!(
        "copied: {} series, {} samples in {} writes, {:.1} s wall; the hub stored {took}",
        c.series, c.samples, c.writes, c.wall_s
    );
    println!(
        "hub ingest: {:.1} CPU s = {:.0} samples per CPU s = {:.2} CPU s per hour of data; RSS \
         {:.1} MiB idle, {:.1} MiB peak = {:.1} MiB beyond idle",
        c.hub_cpu_s,
        c.samples as f64 / c.hub_cpu_s.max(1e-9),
        c.hub_cpu_s / (7.0 * 24.0),
        c.hub_idle_mib,
        c.hub_peak_mib,
        c.hub_peak_mib - c.hub_idle_mib
    );
    rt.block_on(async {
        let (s, ds) = api
            .post("/v1/datasources", json!({"name": "bench", "type": "prometheus", "url": prom.url, "timeoutSeconds": 600}))
            .await;
        assert_eq!(s, 201, "{ds}");
        let (s, body) = api
            .put("/v1/clusters/remote/datasource", json!({"datasourceId": ds["id"]}))
            .await;
        assert_eq!(s, 200, "{body}");
        for cluster in ["embedded", "remote"] {
            let (r, wall, cpu) = run(&api, cluster, &pid).await;
            println!(
                "7-day run over {}: {:.1} s wall, hub CPU {:.1} s; status {}, {} workloads, {} \
                 recommendations, {} failed; phases {}",
                if cluster == "embedded" { "the embedded store" } else { "Prometheus (remote read)" },
                wall,
                cpu,
                r["status"],
                r["workloads"]["total"],
                r["recommendations"],
                r["workloads"]["failed"],
                r["phaseMs"]
            );
        }
    });
    let bytes = usage_bytes(dir.path());
    let (samples, chunks, all) = blocks(&tsdb);
    let per = |b: u64, n: u64| b as f64 / n.max(1) as f64;
    println!(
        "on disk for the same samples: the usage store {:.1} MB = {:.3} B/sample; Prometheus's \
         blocks {:.1} MB = {:.3} B/sample ({:.3} B/sample in chunks alone): {:.3} × Prometheus \
         (this week's kube-state-metrics series are every 10 minutes: 12 samples in each of \
         the store's 2-hour chunks, where Prometheus cuts its chunks at 120)",
        bytes as f64 / 1e6,
        per(bytes, took),
        all as f64 / 1e6,
        per(all, samples),
        per(chunks, samples),
        per(bytes, took) / per(all, samples)
    );
    hub.stop();
}
