//! Issues 4 and 16: a full recommendation run of a 1,000-workload cluster (× 3 replicas
//! × 2 containers, 7 days at 60 s) against a real Prometheus, through the real run
//! engine (collect → analyze → store into a temp SQLite), once per protocol: the default
//! (`auto`: streamed remote read on Prometheus) and `query_range`.
//!
//! `cargo bench --bench run_prometheus [-- auto|queryRange]`; `KERF_BENCH_MAX_CONCURRENT`,
//! `KERF_BENCH_MAX_SAMPLES` and `KERF_BENCH_MAX_SERIES` try another load budget. The first run generates
//! and backfills the data (`dataset`, cached under `~/.cache/kerf/bench-data/`). Each
//! measured run happens in a fresh child process with a fresh Prometheus on the cached
//! TSDB (the TSDB files are read once beforehand so both start from a warm page cache),
//! so kerf's peak RSS (VmHWM) is its own, and Prometheus's CPU seconds and peak RSS are
//! those of the run. Figures are printed, never asserted.

#[path = "../../tests/it/support/fleet_tsdb.rs"]
mod dataset;
#[path = "../../tests/it/support/prometheus.rs"]
mod prometheus;

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kerf::clock::ManualClock;
use kerf::datasource::plan::{DEFAULT_SAMPLES_PER_REQUEST, DEFAULT_SERIES_PER_REQUEST};
use kerf::datasource::prometheus::{ClientAuth, ClientConfig, PrometheusSource, ProtocolChoice};
use kerf::datasource::{Budget, Datasource};
use kerf::runs::{Runs, Trigger};
use kerf::store::{self, Store, StoreOptions};

const CHILD_ENV: &str = "KERF_BENCH_RUN_PROMETHEUS_CHILD";
const PROTOCOLS: [&str; 2] = ["auto", "queryRange"];
const CLUSTER: &str = "bench";

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"))
}

fn main() {
    if let Some(protocol) = std::env::var_os(CHILD_ENV) {
        measured_run(&protocol.to_string_lossy());
        return;
    }
    prometheus::ensure_installed();
    let (_, generation_s) = dataset::ensure(&dataset::BENCH, &target_dir());
    if generation_s > 0.0 {
        println!("data generation + backfill: {generation_s:.1} s (cached for later runs)");
    } else {
        println!("data generation + backfill: cached");
    }
    warm_page_cache(&dataset::ensure(&dataset::BENCH, &target_dir()).0);
    let chosen: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| PROTOCOLS.contains(&a.as_str()))
        .collect();
    let exe = std::env::current_exe().expect("current exe");
    for protocol in PROTOCOLS
        .iter()
        .filter(|p| chosen.is_empty() || chosen.iter().any(|c| c == *p))
    {
        println!("\n== protocol setting: {protocol} ==");
        let status = Command::new(&exe)
            .env(CHILD_ENV, protocol)
            .status()
            .expect("run the measured child");
        assert!(status.success(), "measured run failed: {status}");
    }
}

/// RSS of an idle `kerf serve` (HTTP API, UI, scheduler and jobs started, no run), in
/// MiB: what the hub holds beyond this benchmark's run engine and store.
fn hub_idle_mib() -> f64 {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = dir.path().join("serve.log");
    let mut child = Command::new(env!("CARGO_BIN_EXE_kerf"))
        .arg("--data-dir")
        .arg(dir.path())
        .arg("serve")
        // kerf reads KERF_* variables as configuration and refuses unknown ones (this
        // benchmark's own): start it with nothing but its listen address.
        .env_clear()
        .env("KERF_LISTEN", "127.0.0.1:0")
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&log).expect("log"))
        .spawn()
        .expect("start kerf serve");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !std::fs::read_to_string(&log)
        .unwrap_or_default()
        .contains("listening")
    {
        assert!(Instant::now() < deadline, "kerf serve did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let rss = status_mib(&child.id().to_string(), "VmRSS:");
    let _ = child.kill();
    let _ = child.wait();
    rss
}

/// Reads every TSDB file once, so each protocol's run starts from the same warm cache.
fn warm_page_cache(dir: &std::path::Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            warm_page_cache(&path);
        } else if let Ok(mut f) = std::fs::File::open(&path) {
            let _ = std::io::copy(&mut f, &mut std::io::sink());
        }
    }
}

/// A budget figure from the environment (to try other settings), else the default.
fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
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

fn measured_run(protocol: &str) {
    let (tsdb, _) = dataset::ensure(&dataset::BENCH, &target_dir());
    let started = Instant::now();
    // 24 h blocks stay as backfilled: no compaction competes with the run.
    let prom = prometheus::Prometheus::serve_existing_with(
        &tsdb,
        &["--storage.tsdb.max-block-duration=24h"],
    );
    let prom_pid = prom.pid().to_string();
    let prom_rss_before = status_mib(&prom_pid, "VmRSS:");
    println!(
        "prometheus ready in {:.1} s (RSS {prom_rss_before:.0} MiB before the run)",
        started.elapsed().as_secs_f64(),
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
        max_concurrent_queries: env_or("KERF_BENCH_MAX_CONCURRENT", 4) as usize,
    })
    .expect("client")
    .with_protocol(ProtocolChoice::parse(protocol).expect("protocol"))
    .with_budget(Budget {
        samples_per_request: env_or("KERF_BENCH_MAX_SAMPLES", DEFAULT_SAMPLES_PER_REQUEST),
        series_per_request: env_or("KERF_BENCH_MAX_SERIES", DEFAULT_SERIES_PER_REQUEST),
    });
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
        dataset::BENCH.workloads,
        dataset::BENCH.replicas,
        dataset::BENCH.containers.len(),
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
    let samples = stats["samples"].as_f64().unwrap_or(0.0);
    let bytes = stats["bytes"].as_f64().unwrap_or(0.0);
    println!("protocol used: {}", stats["protocol"]);
    println!("run wall time: {:.1} s", total.as_secs_f64());
    println!(
        "phases (ms): collect {} | analyze {} | store {}",
        phase["collect"], phase["analyze"], phase["store"]
    );
    println!("datasource phases (ms): {}", stats["phaseMs"]);
    println!(
        "requests: {} | series: {} | samples: {} | samples decoded: {}",
        stats["queries"], stats["series"], stats["samples"], stats["samplesDecoded"]
    );
    println!(
        "bytes received: {:.1} MB ({:.2} bytes per sample)",
        bytes / 1e6,
        bytes / samples.max(1.0)
    );
    println!(
        "kerf peak RSS (VmHWM): {:.0} MiB (RSS {:.0} MiB before the run)",
        status_mib("self", "VmHWM:"),
        rss_before
    );
    println!(
        "prometheus peak RSS (VmHWM): {:.0} MiB (after the run: {:.0} MiB, of which {:.0} MiB \
         mapped TSDB files and {:.0} MiB heap; {:.0} MiB before it)",
        status_mib(&prom_pid, "VmHWM:"),
        status_mib(&prom_pid, "VmRSS:"),
        status_mib(&prom_pid, "RssFile:"),
        status_mib(&prom_pid, "RssAnon:"),
        prom_rss_before
    );
    let hub = hub_idle_mib();
    println!(
        "kerf serve idle RSS: {hub:.0} MiB → peak with the hub's own fixed cost ≈ {:.0} MiB",
        status_mib("self", "VmHWM:") + (hub - rss_before).max(0.0)
    );
    println!(
        "CPU during the run: kerf {:.1} s, prometheus {:.1} s (2 cores shared)",
        cpu_seconds("self") - kerf_cpu,
        cpu_seconds(&prom_pid) - prom_cpu
    );
    if stats["protocol"] == "remote-read" {
        runtime.block_on(bytes_by_metric(&prom.url));
    }
    drop(runs);
    drop(prom);
}

/// What each usage metric costs over remote read (whole cluster, one request each): XOR
/// chunks store a repeated or integer value in a few bits, a fractional counter in ~7
/// bytes.
async fn bytes_by_metric(url: &str) {
    use kerf::datasource::prometheus::remote_read::{MatchType, Matcher, ReadQuery};
    for metric in [
        "container_cpu_usage_seconds_total",
        "container_memory_working_set_bytes",
    ] {
        let source = PrometheusSource::new(ClientConfig {
            url: url.to_string(),
            auth: ClientAuth::None,
            headers: Vec::new(),
            ca_pem: None,
            insecure_skip_verify: false,
            timeout: Duration::from_secs(300),
            max_concurrent_queries: 1,
        })
        .expect("client");
        let query = ReadQuery {
            start_ms: dataset::START_S * 1000,
            end_ms: dataset::END_S * 1000,
            matchers: vec![Matcher::new(MatchType::Eq, "__name__", metric)],
        };
        let mut stream = source
            .client()
            .remote_read(std::slice::from_ref(&query))
            .await
            .expect("remote read");
        while stream.next().await.expect("series").is_some() {}
        let c = stream.counts;
        println!(
            "  {metric}: {:.1} MB for {} samples ({:.2} bytes per sample)",
            c.bytes as f64 / 1e6,
            c.samples,
            c.bytes as f64 / c.samples.max(1) as f64
        );
    }
}
