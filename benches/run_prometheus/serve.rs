//! The measured run inside a real hub: the release `kerf serve` on a fresh data dir, its
//! clock set to the dataset's window end with libfaketime (the data is a fixed week in
//! the past; monotonic time is left alone, so timers behave), a datasource linked over
//! the API, one run triggered over the API and polled to its end. kerf's peak RSS is
//! the serve process's `VmHWM`: HTTP API, store, scheduler, jobs and the run together.

use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::procfs::{cpu_seconds, status_mib};
use crate::support::Kerf;

/// Where Debian's `libfaketime` puts the preload library.
const FAKETIME_LIB: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

/// Installs `faketime` (Debian's package) when the library is missing.
pub fn ensure_faketime() {
    if std::path::Path::new(FAKETIME_LIB).exists() {
        return;
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/ensure-faketime.sh");
    let status = Command::new("bash")
        .arg(script)
        .status()
        .expect("run the install script");
    assert!(status.success(), "scripts/ensure-faketime.sh failed");
}

/// The load budget the datasource is created with (`None`: the product's default).
#[derive(Debug, Clone, Copy, Default)]
pub struct Budget {
    pub concurrent: Option<u64>,
    pub samples: Option<u64>,
    pub series: Option<u64>,
}

/// What one run in `kerf serve` gave.
pub struct Served {
    pub run: Value,
    pub wall_s: f64,
    pub hwm_mib: f64,
    /// Peaks of the two parts of RSS, sampled every 100 ms during the run: anonymous
    /// memory (heap, stacks: what a pod's memory limit cannot take back) and file
    /// pages (the binary's own code and data: clean, reclaimable under pressure).
    pub anon_peak_mib: f64,
    pub file_peak_mib: f64,
    pub rss_before_mib: f64,
    pub cpu_s: f64,
}

/// The environment that sets kerf's clock to `now_s` (Unix seconds).
fn clock_env(now_s: i64) -> Vec<(&'static str, String)> {
    vec![
        ("LD_PRELOAD", FAKETIME_LIB.to_string()),
        ("FAKETIME", format!("@{}", clock_text(now_s))),
        ("FAKETIME_DONT_FAKE_MONOTONIC", "1".to_string()),
    ]
}

/// `kerf` run with the clock at `now_s`, nothing else from this process's environment
/// (kerf refuses unknown `KERF_*` variables).
pub fn kerf(data_dir: &std::path::Path, now_s: i64) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kerf"));
    cmd.env_clear()
        .envs(clock_env(now_s))
        .arg("--data-dir")
        .arg(data_dir);
    cmd
}

/// `kerf serve` on `data_dir` with the clock at `now_s`, ready (its ready file).
pub fn start(data_dir: &std::path::Path, now_s: i64) -> Kerf {
    let clock = clock_env(now_s);
    let env: Vec<(&str, &str)> = clock.iter().map(|(k, v)| (*k, v.as_str())).collect();
    Kerf::builder(data_dir)
        .bin(std::path::Path::new(env!("CARGO_BIN_EXE_kerf")))
        .clear_env()
        .envs(&env)
        .env("TZ", "UTC")
        .start()
}

/// `YYYY-MM-DD hh:mm:ss` (UTC) of `s`, as `FAKETIME` takes it.
fn clock_text(s: i64) -> String {
    let output = Command::new("date")
        .env("TZ", "UTC")
        .args(["-d", &format!("@{s}"), "+%Y-%m-%d %H:%M:%S"])
        .output()
        .expect("date");
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

pub fn one_line(cmd: &mut Command) -> String {
    let out = cmd.output().expect("run kerf");
    assert!(
        out.status.success(),
        "kerf failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// One run of cluster `cluster` read from `url` with `protocol` and `budget`, in a
/// fresh `kerf serve` whose clock starts at `now_s`.
pub fn run(url: &str, protocol: &str, budget: Budget, cluster: &str, now_s: i64) -> Served {
    let dir = tempfile::tempdir().expect("tempdir");
    one_line(kerf(dir.path(), now_s).args(["clusters", "create", cluster]));
    let token = one_line(
        kerf(dir.path(), now_s).args(["token", "create", "--name", "bench", "--role", "admin"]),
    );
    let serve = start(dir.path(), now_s);
    let pid = serve.pid().to_string();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let api = serve.api(&token);
    let (mut anon_peak_mib, mut file_peak_mib) = (0f64, 0f64);
    let (run, wall_s, rss_before_mib, cpu_s) = runtime.block_on(async {
        let mut body = json!({"name": "bench", "type": "prometheus", "url": url,
            "protocol": protocol, "timeoutSeconds": 600});
        for (key, value) in [
            ("maxConcurrentQueries", budget.concurrent),
            ("maxSamplesPerQuery", budget.samples),
            ("maxSeriesPerQuery", budget.series),
        ] {
            if let Some(v) = value {
                body[key] = json!(v);
            }
        }
        let (s, ds) = api.post("/v1/datasources", body).await;
        assert_eq!(s, 201, "{ds}");
        let link = json!({"datasourceId": ds["id"]});
        let path = format!("/v1/clusters/{cluster}/datasource");
        let (s, body) = api.put(&path, link).await;
        assert_eq!(s, 200, "{body}");
        let rss_before = status_mib(&pid, "VmRSS:");
        let cpu_before = cpu_seconds(&pid);
        let started = Instant::now();
        let path = format!("/v1/clusters/{cluster}/runs");
        let (s, run) = api.call("POST", &path, None).await;
        let id = match s {
            202 => run["id"].as_str().expect("run id").to_string(),
            409 => run["error"]["details"]["runId"]
                .as_str()
                .expect("running run")
                .to_string(),
            _ => panic!("run not started: {s} {run}"),
        };
        loop {
            anon_peak_mib = anon_peak_mib.max(status_mib(&pid, "RssAnon:"));
            file_peak_mib = file_peak_mib.max(status_mib(&pid, "RssFile:"));
            let (_, r) = api.get(&format!("/v1/runs/{id}")).await;
            if r["status"] != "running" {
                let wall = started.elapsed().as_secs_f64();
                return (r, wall, rss_before, cpu_seconds(&pid) - cpu_before);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    // What went wrong in the hub, if anything, beside the figures.
    for line in serve.log_text().lines().filter(|l| l.contains("ERROR")) {
        eprintln!("kerf: {line}");
    }
    Served {
        run,
        wall_s,
        hwm_mib: status_mib(&pid, "VmHWM:"),
        anon_peak_mib,
        file_peak_mib,
        rss_before_mib,
        cpu_s,
    }
}
