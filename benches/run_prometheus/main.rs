//! Issues 4 and 16: a full recommendation run of a 1,000-workload cluster (× 3 replicas
//! × 2 containers, 7 days at 60 s) inside a real hub: the release `kerf serve` (its
//! clock at the data's window end, `serve.rs`), a datasource linked and one run
//! triggered over the API. Once per protocol: the default (`auto`: streamed remote read
//! on Prometheus), range selectors over the query API on the same Prometheus (setting
//! `queryRange`), and VictoriaMetrics's export API (`vmExport`, the same data imported
//! into a real VictoriaMetrics, `vm.rs`). Every protocol reads the raw samples, so each
//! run's bytes are set against the TSDB's own chunk bytes of those samples.
//!
//! `cargo bench --bench run_prometheus [-- auto|queryRange|vmExport]`;
//! `KERF_BENCH_MAX_CONCURRENT`, `KERF_BENCH_MAX_SAMPLES` and `KERF_BENCH_MAX_SERIES` set
//! another load budget (else the product's defaults). The first run generates and
//! backfills the data (`dataset`, cached under `~/.cache/kerf/bench-data/`), and imports
//! it into VictoriaMetrics once. Each run gets a fresh server on the cached data (its
//! files read once beforehand, so every run starts from a warm page cache) and a fresh
//! `kerf serve`, so kerf's peak RSS (the serve process's VmHWM: API, store, jobs and the
//! run) and the server's CPU seconds and peak RSS are those of the run. The machine's
//! load average is printed with the figures (it is shared with other builds). Figures
//! are printed, never asserted.

mod serve;
#[path = "../support/mod.rs"]
mod support;
mod vm;

use support::procfs::{cpu_seconds, status_mib};
use support::{child, fleet_tsdb as dataset, prometheus};

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const PROTOCOLS: [&str; 3] = ["auto", "queryRange", "vmExport"];
const CLUSTER: &str = "bench";
/// The hub's clock when it starts: 30 s after the window end (runs round down to it).
const CLOCK_S: i64 = dataset::END_S + 30;

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"))
}

fn main() {
    // The bench's HTTP clients need the process's TLS provider, as kerf installs it.
    kerf::tls::install_crypto_provider();
    prometheus::ensure_installed();
    serve::ensure_faketime();
    let (tsdb, generation_s) = dataset::ensure(&dataset::BENCH, &target_dir());
    if generation_s > 0.0 {
        println!("data generation + backfill: {generation_s:.1} s (cached for later runs)");
    } else {
        println!("data generation + backfill: cached");
    }
    let chosen: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| PROTOCOLS.contains(&a.as_str()))
        .collect();
    let budget = serve::Budget {
        concurrent: env("KERF_BENCH_MAX_CONCURRENT"),
        samples: env("KERF_BENCH_MAX_SAMPLES"),
        series: env("KERF_BENCH_MAX_SERIES"),
    };
    println!("load budget: {budget:?} (None: the product's default)");
    let chunks = {
        warm_page_cache(&tsdb);
        let prom = prometheus::Prometheus::serve_existing_with(
            &tsdb,
            &["--storage.tsdb.max-block-duration=24h"],
        );
        runtime().block_on(bytes_by_metric(&prom.url))
    };
    for protocol in PROTOCOLS
        .iter()
        .filter(|p| chosen.is_empty() || chosen.iter().any(|c| c == *p))
    {
        println!("\n== protocol setting: {protocol} ==");
        if *protocol == "vmExport" {
            let cache = dataset::cache_dir(&target_dir());
            let data = {
                let prom = prometheus::Prometheus::serve_existing_with(
                    &tsdb,
                    &["--storage.tsdb.max-block-duration=24h"],
                );
                vm::ensure(&cache, &prom.url)
            };
            warm_page_cache(&data);
            let server = vm::Victoria::serve_cached(&data);
            measure(
                &server.url,
                &server.pid(),
                (protocol, budget, chunks),
                "victoria-metrics",
            );
        } else {
            warm_page_cache(&tsdb);
            // 24 h blocks stay as backfilled: no compaction competes with the run.
            let prom = prometheus::Prometheus::serve_existing_with(
                &tsdb,
                &["--storage.tsdb.max-block-duration=24h"],
            );
            measure(
                &prom.url,
                &prom.pid().to_string(),
                (protocol, budget, chunks),
                "prometheus",
            );
            if *protocol == "auto" {
                on_disk(&tsdb);
                scan_per_build(&prom.url);
            }
        }
    }
}

/// The same collection and analysis as a run, as `kerf scan` of the whole cluster, by
/// the release binary and, with `KERF_BENCH_STATIC` (the path `packaging/build-static.sh`
/// prints), by the static binary a pod runs: its libc's allocator is not the release
/// build's, and the hub itself cannot be run at the data's time (libfaketime needs a
/// dynamic binary). Both must print the same recommendations.
fn scan_per_build(url: &str) {
    let mut builds = vec![("release", PathBuf::from(env!("CARGO_BIN_EXE_kerf")))];
    if let Some(path) = std::env::var_os("KERF_BENCH_STATIC") {
        builds.push(("static", PathBuf::from(path)));
    }
    let end = kerf::timestamp::format_ms(dataset::END_S * 1000);
    let args: Vec<String> = ["scan", "--prometheus", url, "--end", &end]
        .into_iter()
        .chain(["--format", "json", "--quiet"])
        .map(String::from)
        .collect();
    let mut first: Option<serde_json::Value> = None;
    for (name, bin) in builds {
        wait_for_quiet();
        let run = child::measured(&bin, &args);
        let mut doc: serde_json::Value = serde_json::from_slice(&run.stdout).expect("json");
        let recommendations = doc["workloads"].take();
        let same = first.get_or_insert_with(|| recommendations.clone()) == &recommendations;
        println!(
            "kerf scan, {name} build ({}): {:.1} s wall, peak RSS {:.1} MiB, CPU {:.1} s user + \
             {:.1} s system, {} minor page faults; {} workloads; same recommendations as the \
             release build: {}",
            bin.display(),
            run.seconds,
            run.peak_mib,
            run.user_s,
            run.system_s,
            run.minor_faults,
            doc["totals"]["workloads"],
            if same { "yes" } else { "NO" }
        );
    }
}

/// A budget figure from the environment, if set.
fn env(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

/// Reads every file under `dir` once, so each run starts from the same warm cache.
fn warm_page_cache(dir: &Path) {
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

/// Waits (3 minutes at most) for the 1-minute load average to fall below 0.5: on a
/// 2-core machine a build still running beside the benchmark inflates both kerf's and
/// the server's CPU seconds (the two cores are shared), so figures are taken quiet.
fn wait_for_quiet() {
    let one_minute = || {
        std::fs::read_to_string("/proc/loadavg")
            .ok()
            .and_then(|l| l.split_whitespace().next()?.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    let started = Instant::now();
    while one_minute() >= 0.5 && started.elapsed() < Duration::from_secs(180) {
        std::thread::sleep(Duration::from_secs(5));
    }
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

/// One run in a fresh `kerf serve` against the server at `url` (process `pid`);
/// `chunks` is what the TSDB stores of the window's usage (bytes, samples).
fn measure(
    url: &str,
    pid: &str,
    (protocol, budget, chunks): (&str, serve::Budget, (u64, u64)),
    server: &str,
) {
    wait_for_quiet();
    let rss_before = status_mib(pid, "VmRSS:");
    let cpu_before = cpu_seconds(pid);
    println!("load average before the run: {}", load_average());
    let served = serve::run(url, protocol, budget, CLUSTER, CLOCK_S);
    let server_cpu = cpu_seconds(pid) - cpu_before;
    let run = &served.run;
    let stats = &run["collect"];
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
        run["status"],
        run["workloads"]["total"],
        run["recommendations"],
        run["workloads"]["failed"],
        run["workloads"]["stale"]
    );
    if run["errors"].as_array().is_some_and(|e| !e.is_empty()) {
        let text = run["errors"].to_string();
        println!("errors: {}", &text[..text.len().min(600)]);
    }
    let samples = stats["samples"].as_f64().unwrap_or(0.0);
    let bytes = stats["bytes"].as_f64().unwrap_or(0.0);
    println!("protocol used: {}", stats["protocol"]);
    println!(
        "run wall time: {:.1} s (trigger to finished, over the API)",
        served.wall_s
    );
    println!("phases (ms): {}", run["phaseMs"]);
    println!("datasource phases (ms): {}", stats["phaseMs"]);
    println!(
        "requests: {} | series: {} | samples: {} | samples decoded: {}",
        stats["queries"], stats["series"], stats["samples"], stats["samplesDecoded"]
    );
    println!(
        "bytes received: {:.1} MB ({:.2} bytes per sample) = {:.3} × the TSDB's chunk bytes \
         of the window's usage ({:.1} MB, {:.2} B/sample)",
        bytes / 1e6,
        bytes / samples.max(1.0),
        bytes / (chunks.0 as f64).max(1.0),
        chunks.0 as f64 / 1e6,
        chunks.0 as f64 / (chunks.1 as f64).max(1.0)
    );
    println!(
        "kerf serve peak RSS (VmHWM, whole process): {:.1} MiB (RSS {:.1} MiB before the run); \
         sampled peaks: {:.1} MiB anonymous, {:.1} MiB file pages (the binary); \
         kerf CPU during the run {:.1} s",
        served.hwm_mib,
        served.rss_before_mib,
        served.anon_peak_mib,
        served.file_peak_mib,
        served.cpu_s
    );
    println!(
        "{server} peak RSS (VmHWM): {:.0} MiB (after the run: {:.0} MiB, of which {:.0} MiB \
         mapped files and {:.0} MiB anonymous; {rss_before:.0} MiB before it); \
         {server} CPU during the run: {server_cpu:.1} s",
        status_mib(pid, "VmHWM:"),
        status_mib(pid, "VmRSS:"),
        status_mib(pid, "RssFile:"),
        status_mib(pid, "RssAnon:"),
    );
    println!("load average after the run: {}", load_average());
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

/// Where remote-read bytes go, per usage metric (whole cluster, one request each): the
/// wire bytes, the XOR chunk bytes inside them (what Prometheus stores), and the rest
/// (labels, protobuf, frames). Returns the chunk bytes and samples of both metrics.
async fn bytes_by_metric(url: &str) -> (u64, u64) {
    use kerf::datasource::prometheus::remote_read::{MatchType, Matcher, ReadQuery};
    println!("where remote-read bytes go (the whole window, one request per metric):");
    let mut total = (0, 0);
    for metric in [
        "container_cpu_usage_seconds_total",
        "container_memory_working_set_bytes",
    ] {
        let source = prometheus::source_at(url, Duration::from_secs(300), 1);
        let query = ReadQuery {
            start_ms: dataset::START_S * 1000,
            end_ms: dataset::END_S * 1000,
            matchers: vec![Matcher::new(MatchType::Eq, "__name__", metric)],
        };
        let started = Instant::now();
        let mut stream = source
            .client()
            .remote_read(std::slice::from_ref(&query))
            .await
            .expect("remote read");
        while stream.next().await.expect("series").is_some() {}
        let c = stream.counts;
        let per = |b: u64| b as f64 / c.samples.max(1) as f64;
        println!(
            "  {metric}: {} series, {} samples, {:.1} MB on the wire ({:.2} B/sample) = \
             {:.1} MB of XOR chunks ({:.2} B/sample) + {:.1} MB labels/protobuf/frames \
             ({:.2} B/sample); {:.1} s",
            c.series,
            c.samples,
            c.bytes as f64 / 1e6,
            per(c.bytes),
            c.chunk_bytes as f64 / 1e6,
            per(c.chunk_bytes),
            (c.bytes - c.chunk_bytes) as f64 / 1e6,
            per(c.bytes - c.chunk_bytes),
            started.elapsed().as_secs_f64()
        );
        total = (total.0 + c.chunk_bytes, total.1 + c.samples);
    }
    total
}

/// What the TSDB stores on disk: chunk file bytes per sample over all series (usage and
/// kube-state-metrics), from each block's `meta.json` and `chunks/` files.
fn on_disk(tsdb: &Path) {
    let (mut samples, mut series, mut chunks, mut bytes) = (0u64, 0u64, 0u64, 0u64);
    for entry in std::fs::read_dir(tsdb).into_iter().flatten().flatten() {
        let Ok(meta) = std::fs::read_to_string(entry.path().join("meta.json")) else {
            continue;
        };
        let meta: serde_json::Value = serde_json::from_str(&meta).unwrap_or_default();
        samples += meta["stats"]["numSamples"].as_u64().unwrap_or(0);
        series += meta["stats"]["numSeries"].as_u64().unwrap_or(0);
        chunks += meta["stats"]["numChunks"].as_u64().unwrap_or(0);
        for file in std::fs::read_dir(entry.path().join("chunks"))
            .into_iter()
            .flatten()
            .flatten()
        {
            bytes += file.metadata().map(|m| m.len()).unwrap_or(0);
        }
    }
    println!(
        "TSDB on disk: {samples} samples in {chunks} chunks ({series} series-blocks), chunk \
         files {:.1} MB = {:.2} B/sample (all series, kube-state-metrics included)",
        bytes as f64 / 1e6,
        bytes as f64 / samples.max(1) as f64
    );
}
