//! Issue 4, Done-means 4: a full recommendation run of a 1,000-workload cluster
//! (× 3 replicas × 2 containers, 7 days at 60 s) against a real Prometheus, through the
//! real run engine (collect → analyze → store into a temp SQLite).
//!
//! `cargo bench --bench run_prometheus`. The first run generates and backfills the data
//! (`dataset`, cached under `<target>/bench-data/`); the measured run then happens in a
//! fresh child process, so the peak RSS (VmHWM) printed is kerf's own and nothing of the
//! generation. Prometheus's RSS after the run is printed as the load it carried.
//! Figures are printed, never asserted.

mod dataset;
#[path = "../../tests/it/support/prometheus.rs"]
mod prometheus;

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kerf::clock::ManualClock;
use kerf::datasource::prometheus::{ClientAuth, ClientConfig, PrometheusSource};
use kerf::datasource::Datasource;
use kerf::runs::{Runs, Trigger};
use kerf::store::{self, Store, StoreOptions};

const CHILD_ENV: &str = "KERF_BENCH_RUN_PROMETHEUS_CHILD";
const CLUSTER: &str = "bench";

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"))
}

fn main() {
    if std::env::var_os(CHILD_ENV).is_some() {
        measured_run();
        return;
    }
    prometheus::ensure_installed();
    let (_, generation_s) = dataset::ensure(&target_dir());
    if generation_s > 0.0 {
        println!("data generation + backfill: {generation_s:.1} s (cached for later runs)");
    } else {
        println!("data generation + backfill: cached");
    }
    let exe = std::env::current_exe().expect("current exe");
    let status = Command::new(exe)
        .env(CHILD_ENV, "1")
        .status()
        .expect("run the measured child");
    assert!(status.success(), "measured run failed: {status}");
}

/// `VmHWM` / `VmRSS` of a process, in MiB.
fn status_mib(pid: &str, field: &str) -> f64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    text.lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map(|kb| kb / 1024.0)
        .unwrap_or(f64::NAN)
}

/// CPU seconds (user + system) a process has used so far.
fn cpu_seconds(pid: &str) -> f64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name (which may hold spaces): utime is the 12th, stime 13th.
    let rest = text.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<f64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0.0))
        .collect();
    (f.get(11).copied().unwrap_or(0.0) + f.get(12).copied().unwrap_or(0.0)) / 100.0
}

fn measured_run() {
    let (tsdb, _) = dataset::ensure(&target_dir());
    let started = Instant::now();
    // 24 h blocks stay as backfilled: no compaction competes with the run.
    let prom = prometheus::Prometheus::serve_existing_with(
        &tsdb,
        &["--storage.tsdb.max-block-duration=24h"],
    );
    let prom_pid = prom.pid().to_string();
    println!(
        "prometheus ready in {:.1} s (RSS {:.0} MiB before the run)",
        started.elapsed().as_secs_f64(),
        status_mib(&prom_pid, "VmRSS:")
    );

    let dir = tempfile::tempdir().expect("tempdir");
    let opts = StoreOptions {
        readers: 2,
        busy_timeout_ms: 5000,
    };
    let store = Store::open_and_migrate(&dir.path().join("kerf.db"), &opts, 0).expect("store");
    store
        .write_blocking(|c| {
            store::insert_cluster(
                c,
                &store::NewCluster {
                    name: CLUSTER,
                    token_sha256: "bench",
                },
                0,
            )
        })
        .expect("cluster");
    let source = PrometheusSource::new(ClientConfig {
        url: prom.url.clone(),
        auth: ClientAuth::None,
        headers: Vec::new(),
        ca_pem: None,
        insecure_skip_verify: false,
        timeout: Duration::from_secs(300),
        max_concurrent_queries: 4,
    })
    .expect("client");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let clock = Arc::new(ManualClock::new(dataset::END_S * 1000));
    let runs = Runs::new(store, clock).with_source(Datasource::Prometheus(source));
    let rss_before = status_mib("self", "VmRSS:");
    let (kerf_cpu, prom_cpu) = (cpu_seconds("self"), cpu_seconds(&prom_pid));

    let started = Instant::now();
    let run = runtime
        .block_on(runs.run_to_end(CLUSTER, Trigger::Manual))
        .expect("run");
    let total = started.elapsed();

    let phase: serde_json::Value = serde_json::from_str(&run.phase_ms).expect("json");
    let stats: serde_json::Value = serde_json::from_str(&run.collect_stats).expect("json");
    let errors: serde_json::Value = serde_json::from_str(&run.errors).expect("json");
    println!(
        "cluster: {} workloads × {} replicas × {} containers, {} days at {} s",
        dataset::WORKLOADS,
        dataset::REPLICAS,
        dataset::CONTAINERS.len(),
        dataset::DAYS,
        dataset::STEP_S
    );
    println!(
        "run: status {}, {} workloads, {} recommendations, {} failed, {} stale",
        run.status,
        run.workloads_total,
        run.recommendations,
        run.workloads_failed,
        run.workloads_stale
    );
    if errors.as_array().is_some_and(|e| !e.is_empty()) {
        let text = errors.to_string();
        println!("errors: {}", &text[..text.len().min(600)]);
    }
    println!("total: {:.1} s", total.as_secs_f64());
    println!(
        "phases (ms): collect {} | analyze {} | store {}",
        phase["collect"], phase["analyze"], phase["store"]
    );
    println!("datasource phases (ms): {}", stats["phaseMs"]);
    println!(
        "queries: {} | series: {} | samples: {}",
        stats["queries"], stats["series"], stats["samples"]
    );
    println!(
        "kerf peak RSS (VmHWM): {:.0} MiB (RSS {:.0} MiB before the run)",
        status_mib("self", "VmHWM:"),
        rss_before
    );
    println!(
        "prometheus RSS after the run: {:.0} MiB (peak {:.0} MiB)",
        status_mib(&prom_pid, "VmRSS:"),
        status_mib(&prom_pid, "VmHWM:")
    );
    println!(
        "CPU during the run: kerf {:.1} s, prometheus {:.1} s (2 cores shared)",
        cpu_seconds("self") - kerf_cpu,
        cpu_seconds(&prom_pid) - prom_cpu
    );
    drop(runs);
    drop(prom);
}
