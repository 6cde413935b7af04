//! A real Prometheus 2.42 in agent mode (`--enable-feature=agent`) scrapes a target this
//! test serves (a counter that counts the scrapes it answered) every 250 ms and
//! remote-writes everything to the hub's `POST /v1/clusters/{cluster}/write` with the
//! cluster's token. Mid-stream the hub is killed with SIGKILL, the target is scraped on
//! while it is away (Prometheus keeps the samples in its WAL and retries), and the hub is
//! started again on the same address. Then the target stops answering (so no scrape is
//! half done), and the store must hold the counter's samples 1, 2, …, N exactly once,
//! N being the scrapes the target answered, then the staleness marker Prometheus wrote
//! when the scrapes failed: every sample Prometheus sent, none twice.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;
use axum::routing::get;
use kerf::store::usage::{SeriesQuery, UsageOptions, UsageStore};

use crate::support::prometheus::ensure_installed;
use crate::support::wait::{eventually_every, within_every};
use crate::support::{secs, DataDir, Kerf};

const COUNTER: &str = "kerf_test_scrapes_total";

/// The scrape target: answers with the number of scrapes answered so far, or 503 once
/// frozen (a failed scrape stores no sample of the counter).
#[derive(Default)]
struct Target {
    answered: AtomicU64,
    refused: AtomicU64,
    frozen: AtomicBool,
}

async fn serve_target(target: Arc<Target>) -> String {
    let app = axum::Router::new().route(
        "/metrics",
        get(move || {
            let t = target.clone();
            async move {
                if t.frozen.load(Ordering::SeqCst) {
                    t.refused.fetch_add(1, Ordering::SeqCst);
                    return (StatusCode::SERVICE_UNAVAILABLE, String::new());
                }
                let n = t.answered.fetch_add(1, Ordering::SeqCst) + 1;
                (
                    StatusCode::OK,
                    format!("# TYPE {COUNTER} counter\n{COUNTER} {n}\n"),
                )
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr.to_string()
}

/// Prometheus in agent mode, scraping `target` and writing to `write_url`.
struct AgentPrometheus {
    child: std::process::Child,
    dir: tempfile::TempDir,
}

impl AgentPrometheus {
    fn start(target: &str, write_url: &str, token: &str) -> AgentPrometheus {
        ensure_installed();
        let dir = tempfile::tempdir().expect("tempdir");
        let config = dir.path().join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 250ms\n  scrape_timeout: 200ms\n\
                 scrape_configs:\n  - job_name: target\n    static_configs:\n      \
                 - targets: ['{target}']\n\
                 remote_write:\n  - url: {write_url}\n    authorization:\n      \
                 credentials: {token}\n    queue_config:\n      batch_send_deadline: 200ms\n      \
                 min_backoff: 50ms\n      max_backoff: 500ms\n"
            ),
        )
        .expect("config");
        let log = std::fs::File::create(dir.path().join("prometheus.log")).expect("log");
        let child = std::process::Command::new("prometheus")
            .arg("--enable-feature=agent")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.agent.path={}",
                dir.path().join("wal").display()
            ))
            .arg("--web.listen-address=127.0.0.1:0")
            .arg("--log.level=info")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(log)
            .spawn()
            .expect("spawn prometheus");
        AgentPrometheus { child, dir }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("prometheus.log")).unwrap_or_default()
    }
}

impl Drop for AgentPrometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_millis() as i64
}

/// The counter's values in the store, in time order (the hub may be running: SQLite
/// readers of another process see what it committed).
async fn stored(data: &DataDir, from_ms: i64) -> Vec<(i64, f64)> {
    let usage = UsageStore::open_and_migrate(
        &data.path().join("usage.db"),
        &UsageOptions::default(),
        now_ms(),
    )
    .expect("open the usage store");
    let series = usage
        .reading(move |r| {
            r.select(&SeriesQuery::new("edge", [COUNTER]).between(from_ms, now_ms() + 60_000))
        })
        .await
        .expect("select");
    assert!(series.len() <= 1, "one series of the counter: {series:?}");
    series
        .into_iter()
        .flat_map(|s| s.samples)
        .map(|s| (s.timestamp, s.value))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn prometheus_in_agent_mode_writes_every_sample_once_across_a_hub_restart() {
    let data = DataDir::new();
    let token = data.create_cluster("edge");
    let kerf = data.start();
    let addr = kerf.addr.to_string();
    let target = Arc::new(Target::default());
    let target_addr = serve_target(target.clone()).await;
    let started = now_ms() - 1_000;
    let prometheus =
        AgentPrometheus::start(&target_addr, &kerf.url("/v1/clusters/edge/write"), &token);
    let answered = |n: u64| {
        let target = target.clone();
        async move || target.answered.load(Ordering::SeqCst) >= n
    };
    let every = Duration::from_millis(20);
    eventually_every("20 scrapes answered", secs(60), every, answered(20)).await;
    within_every("samples stored", secs(60), every, async || {
        !stored(&data, started).await.is_empty()
    })
    .await
    .unwrap_or_else(|e| panic!("{e}\n{}", prometheus.log()));

    kerf.kill();
    let down_at = target.answered.load(Ordering::SeqCst);
    eventually_every(
        "scrapes while the hub is away",
        secs(60),
        every,
        answered(down_at + 8),
    )
    .await;
    let kerf = Kerf::builder(data.path()).listen(&addr).start();
    eventually_every("60 scrapes answered", secs(120), every, answered(60)).await;

    // No scrape is left half done: the next two are refused.
    target.frozen.store(true, Ordering::SeqCst);
    eventually_every("two refused scrapes", secs(60), every, async || {
        target.refused.load(Ordering::SeqCst) >= 2
    })
    .await;
    let n = target.answered.load(Ordering::SeqCst);
    // The refused scrapes end the series with a staleness marker, sent after sample n.
    let samples = within_every(
        "sample n and the marker stored",
        secs(120),
        every,
        async || {
            let s = stored(&data, started).await;
            let ends = s.len() >= 2 && s[s.len() - 1].1.is_nan() && s[s.len() - 2].1 == n as f64;
            ends.then_some(s)
        },
    )
    .await
    .unwrap_or_else(|e| panic!("{e}\n{}", prometheus.log()));
    drop(prometheus);
    assert_eq!(kerf.stop(), Some(0));

    let marker = samples.last().expect("the marker").1.to_bits();
    assert_eq!(
        marker, 0x7ff0_0000_0000_0002,
        "Prometheus's staleness marker, bit for bit"
    );
    let values: Vec<f64> = samples[..samples.len() - 1].iter().map(|s| s.1).collect();
    let expected: Vec<f64> = (1..=n).map(|k| k as f64).collect();
    assert_eq!(
        values, expected,
        "every scrape's sample, once, in order (the hub was away after scrape {down_at})"
    );
    assert!(
        samples.windows(2).all(|w| w[0].0 < w[1].0),
        "the scrape timestamps, increasing"
    );
    eprintln!(
        "{n} samples scraped and stored exactly once; the hub was killed after scrape {down_at} \
         and came back 8 scrapes later"
    );
}
