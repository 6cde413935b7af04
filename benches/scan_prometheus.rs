//! Issue 15: `kerf scan` (the release binary, as a user runs it) against a real
//! Prometheus holding 1,000 Deployments × 1 replica × 2 containers, 7 days at 60 s
//! (`tests/it/support/fleet_tsdb.rs`, `SCAN_BENCH`, generated once and cached), for 300
//! workloads (`--namespace` six of the twenty namespaces) and for all 1,000: wall time, kerf's peak RSS (`ru_maxrss` of the child) and the queries it
//! issued, per protocol. Figures are printed, never asserted.
//!
//! `cargo bench --bench scan_prometheus`.

mod support;

use support::{child, fleet_tsdb as dataset, prometheus};

use std::path::{Path, PathBuf};

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"))
}

fn main() {
    prometheus::ensure_installed();
    let (tsdb, generation_s) = dataset::ensure(&dataset::SCAN_BENCH, &target_dir());
    if generation_s > 0.0 {
        println!("data generation + backfill: {generation_s:.1} s (cached for later runs)");
    }
    let prom = prometheus::Prometheus::serve_existing_with(
        &tsdb,
        &["--storage.tsdb.max-block-duration=24h"],
    );
    let end = kerf::timestamp::format_ms(dataset::END_S * 1000);
    let six: Vec<String> = (0..6)
        .flat_map(|n| ["--namespace".to_string(), format!("team-{n:02}")])
        .collect();
    println!(
        "cluster: {} Deployments × {} replicas × {} containers, {} days at {} s; kerf scan --format json --quiet",
        dataset::SCAN_BENCH.workloads,
        dataset::SCAN_BENCH.replicas,
        dataset::SCAN_BENCH.containers.len(),
        dataset::DAYS,
        dataset::STEP_S
    );
    println!(
        "{:<12} {:>10} {:>10} {:>10} {:>12} {:>8} {:>10}",
        "protocol", "workloads", "wall s", "peak MiB", "containers", "queries", "samples"
    );
    for protocol in ["auto", "queryRange"] {
        for subset in [true, false] {
            let mut args = vec![
                "--prometheus".to_string(),
                prom.url.clone(),
                "--end".into(),
                end.clone(),
                "--format".into(),
                "json".into(),
                "--quiet".into(),
                "--protocol".into(),
                protocol.into(),
            ];
            if subset {
                args.extend(six.iter().cloned());
            }
            let scan: Vec<String> = std::iter::once("scan".to_string()).chain(args).collect();
            let run = child::measured(Path::new(env!("CARGO_BIN_EXE_kerf")), &scan);
            let (seconds, rss) = (run.seconds, run.peak_mib);
            let doc: serde_json::Value = serde_json::from_slice(&run.stdout).expect("json");
            println!(
                "{:<12} {:>10} {:>10.1} {:>10.0} {:>12} {:>8} {:>10}",
                doc["collect"]["protocol"].as_str().unwrap_or(protocol),
                doc["totals"]["workloads"],
                seconds,
                rss,
                doc["totals"]["containers"],
                doc["collect"]["queries"],
                doc["collect"]["samples"],
            );
        }
    }
}
