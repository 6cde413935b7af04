//! `kerf scan` (the real binary) against a real Prometheus backfilled with a
//! 300-workload fleet (600 containers, 7 days at 60 s; `support::fleet_tsdb`): one line
//! per container, plain when piped, progress on stderr, and every figure equal to what
//! a hub run (the run engine and store, at the window end) made of the same data under
//! the same policy. And its exit codes: 2 on bad input, 1 when the Prometheus cannot be
//! used, each with its reason.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::Arc;
use std::time::Duration;

use kerf::api::workloads::workload_json;
use kerf::clock::ManualClock;
use kerf::datasource::Datasource;
use kerf::runs::{Runs, Trigger};
use kerf::store::{self, Store, StoreOptions, WorkloadFilter};
use serde_json::Value;

use crate::support::fleet_tsdb::{self, SCAN_TEST};
use crate::support::prometheus::{OpenMetrics, Prometheus};

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"))
}

fn scan(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kerf"))
        .arg("scan")
        .args(args)
        .env_remove("NO_COLOR")
        .output()
        .expect("run kerf scan")
}

fn end() -> String {
    kerf::timestamp::format_ms(fleet_tsdb::END_S * 1000)
}

/// What a hub run stored, per workload: (namespace/name) → the list item's JSON.
fn hub_run(url: &str) -> BTreeMap<String, Value> {
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = StoreOptions {
        readers: 2,
        busy_timeout_ms: 5000,
    };
    let store = Store::open_and_migrate(&dir.path().join("kerf.db"), &opts, 0).expect("store");
    store
        .writing_blocking(|tx| {
            tx.insert_cluster(
                &store::NewCluster {
                    name: "scan",
                    token_sha256: "scan",
                },
                &Default::default(),
                0,
            )
        })
        .expect("cluster");
    let source = crate::support::prometheus::source_at(url, Duration::from_secs(120), 4);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let clock = Arc::new(ManualClock::new(fleet_tsdb::END_S * 1000));
    let runs = Runs::new(store.clone(), clock).with_source(Datasource::Prometheus(source));
    let run = runtime
        .block_on(runs.run_to_end("scan", Trigger::Manual))
        .expect("run");
    assert_eq!(run.status.as_str(), "succeeded", "{}", run.errors);
    let filter = WorkloadFilter {
        limit: 1_000,
        ..WorkloadFilter::default()
    };
    let page = runtime
        .block_on(store.reading(move |r| r.list_workload_page(&filter)))
        .expect("list");
    assert!(page.next.is_none());
    page.items
        .iter()
        .map(|i| {
            let item = workload_json(&i.row, i.summary.as_deref(), None).expect("item");
            let v = serde_json::to_value(&item).expect("json");
            (format!("{}/{}", item.namespace, item.name), v)
        })
        .collect()
}

#[test]
fn a_scan_prints_every_container_with_the_figures_of_a_hub_run_on_the_same_data() {
    crate::support::prometheus::ensure_installed();
    let (tsdb, _) = fleet_tsdb::ensure(&SCAN_TEST, &target_dir());
    let prom = Prometheus::serve_existing(&tsdb);
    let json = scan(&[
        "--prometheus",
        &prom.url,
        "--end",
        &end(),
        "--format",
        "json",
    ]);
    assert!(
        json.status.success(),
        "{}",
        String::from_utf8_lossy(&json.stderr)
    );
    let stderr = String::from_utf8_lossy(&json.stderr);
    assert!(stderr.contains("group 1/"), "progress on stderr: {stderr}");
    let doc: Value = serde_json::from_slice(&json.stdout).expect("json output");
    let scanned = doc["workloads"].as_array().expect("workloads");
    assert_eq!(scanned.len() as u64, SCAN_TEST.workloads);
    let hub = hub_run(&prom.url);
    assert_eq!(hub.len(), scanned.len());
    let mut changed = 0;
    for w in scanned {
        let key = format!(
            "{}/{}",
            w["namespace"].as_str().unwrap(),
            w["name"].as_str().unwrap()
        );
        let h = &hub[&key];
        assert_eq!(
            w["monthlyCostDelta"], h["estimatedMonthlyCostDelta"],
            "{key}"
        );
        assert_eq!(w["dataQuality"], h["dataQuality"], "{key}");
        let containers = w["containers"].as_array().expect("containers");
        let resources = h["resources"].as_array().expect("resources");
        assert_eq!(containers.len(), SCAN_TEST.containers.len(), "{key}");
        for (c, r) in containers.iter().zip(resources) {
            for field in ["name", "cpu", "memory"] {
                assert_eq!(c[field], r[field], "{key} {field}");
            }
            changed += usize::from(c["cpu"]["request"]["recommended"].is_number());
        }
    }
    assert!(changed > 0, "some CPU request changes");
    // The table: one line per container (and the header and the totals), no colour when
    // piped.
    let table = scan(&["--prometheus", &prom.url, "--end", &end(), "--quiet"]);
    assert!(table.status.success());
    assert!(
        table.stderr.is_empty(),
        "--quiet: {}",
        String::from_utf8_lossy(&table.stderr)
    );
    let text = String::from_utf8(table.stdout).expect("utf-8");
    assert!(!text.contains('\x1b'), "colour only on a terminal");
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("NAMESPACE"), "{}", lines[0]);
    let body: Vec<&&str> = lines[1..].iter().take_while(|l| !l.is_empty()).collect();
    assert_eq!(
        body.len() as u64,
        SCAN_TEST.workloads * SCAN_TEST.containers.len() as u64
    );
    for w in scanned.iter().take(20) {
        let name = format!("Deployment/{}", w["name"].as_str().unwrap());
        assert_eq!(
            body.iter()
                .filter(|l| l.contains(&format!(" {name} ")))
                .count(),
            2,
            "{name}"
        );
    }
    assert!(text.contains("300 workloads, 600 containers"), "{text}");
    let forced = scan(&[
        "--prometheus",
        &prom.url,
        "--end",
        &end(),
        "--quiet",
        "--color",
        "always",
        "--namespace",
        "team-00",
    ]);
    assert!(String::from_utf8_lossy(&forced.stdout).contains("\x1b["));
}

fn reason(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).trim().to_string()
}

#[test]
fn bad_input_exits_2_and_an_unusable_prometheus_exits_1_each_with_the_reason() {
    let cases: [&[&str]; 6] = [
        &["--prometheus", "ftp://x"],
        &["--prometheus", "http://127.0.0.1:1", "--history", "often"],
        &["--prometheus", "http://127.0.0.1:1", "--end", "yesterday"],
        &["--prometheus", "http://127.0.0.1:1", "--preset", "cheap"],
        &["--prometheus", "http://127.0.0.1:1", "--format", "xml"],
        &["--prometheus", "http://127.0.0.1:1", "--namespace", "Shop"],
    ];
    let flags = [
        "--prometheus",
        "--history",
        "--end",
        "--preset",
        "--format",
        "--namespace",
    ];
    for (args, flag) in cases.iter().zip(flags) {
        let out = scan(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", reason(&out));
        assert!(reason(&out).contains(flag), "{args:?}: {}", reason(&out));
        assert_eq!(reason(&out).lines().count(), 1);
    }
    // Nothing listens on a port just freed.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let url = format!("http://127.0.0.1:{port}");
    let out = scan(&["--prometheus", &url, "--quiet"]);
    assert_eq!(out.status.code(), Some(1), "{}", reason(&out));
    assert!(
        reason(&out).contains("cannot use the Prometheus"),
        "{}",
        reason(&out)
    );
    // A Prometheus with cAdvisor but no kube-state-metrics: nothing to discover.
    let mut om = OpenMetrics::new();
    let now = kerf::clock::Clock::now_ms(&kerf::clock::SystemClock);
    for i in 0..120 {
        let t = now - (120 - i) * 60_000;
        let labels = [
            ("namespace", "shop"),
            ("pod", "api-1"),
            ("container", "app"),
        ];
        om.sample("container_memory_working_set_bytes", &labels, 1e8, t);
    }
    let prom = Prometheus::with_data(&om, false);
    let out = scan(&["--prometheus", &prom.url, "--quiet", "--history", "1h"]);
    assert_eq!(out.status.code(), Some(1), "{}", reason(&out));
    assert!(
        reason(&out).contains("kube-state-metrics"),
        "{}",
        reason(&out)
    );
}
