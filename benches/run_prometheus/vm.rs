//! The benchmark's cluster in a real VictoriaMetrics (Debian's `victoria-metrics`), for
//! the export-API path: every series of the cached Prometheus TSDB read over remote read
//! (kerf's own reader) and imported into VictoriaMetrics as JSON lines, once; the data
//! dir is cached beside the TSDB (`<version>-vm`, completed by a `complete` marker).
//! Each measured run starts a fresh VictoriaMetrics on a copy of it.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use kerf::datasource::prometheus::remote_read::{MatchType, Matcher, ReadQuery};

use crate::dataset;

/// A running VictoriaMetrics on its own data dir; killed on drop.
pub struct Victoria {
    child: Child,
    pub url: String,
    _copy: Option<tempfile::TempDir>,
}

impl Victoria {
    pub fn pid(&self) -> String {
        self.child.id().to_string()
    }

    fn start(data: &Path, copy: Option<tempfile::TempDir>) -> Victoria {
        let port = TcpListener::bind("127.0.0.1:0")
            .expect("bind")
            .local_addr()
            .expect("addr")
            .port();
        let child = Command::new("victoria-metrics")
            .arg(format!("-storageDataPath={}", data.display()))
            .arg(format!("-httpListenAddr=127.0.0.1:{port}"))
            .arg("-retentionPeriod=100y")
            .arg("-loggerLevel=ERROR")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start victoria-metrics (scripts/ensure-victoria-metrics.sh)");
        let vm = Victoria {
            child,
            url: format!("http://127.0.0.1:{port}"),
            _copy: copy,
        };
        let health = format!("{}/health", vm.url);
        let what = "victoria-metrics to start";
        crate::support::wait::eventually_sync(what, Duration::from_secs(120), || get_ok(&health));
        vm
    }

    /// A fresh server on a copy of the cached data.
    pub fn serve_cached(cached: &Path) -> Victoria {
        let copy = tempfile::tempdir().expect("tempdir");
        let status = Command::new("cp")
            .arg("-a")
            .arg(cached)
            .arg(copy.path().join("data"))
            .status()
            .expect("cp");
        assert!(status.success(), "copy the VictoriaMetrics data");
        let data = copy.path().join("data");
        Victoria::start(&data, Some(copy))
    }
}

impl Drop for Victoria {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

/// Whether a GET of `url` answers 2xx.
fn get_ok(url: &str) -> bool {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        reqwest::get(url)
            .await
            .is_ok_and(|r| r.status().is_success())
    })
}

/// JSON text of a float as VictoriaMetrics's import reads it.
fn number(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        "null".into()
    }
}

/// The cached VictoriaMetrics data dir, imported from the Prometheus at `prom_url` first
/// when missing.
pub fn ensure(cache: &Path, prom_url: &str) -> PathBuf {
    let root = cache.join(format!("{}-vm", dataset::GENERATOR_VERSION));
    let data = root.join("data");
    if root.join("complete").exists() {
        return data;
    }
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).expect("vm cache dir");
    eprintln!("importing the benchmark cluster into VictoriaMetrics (once)");
    let started = Instant::now();
    let vm = Victoria::start(&data, None);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let source = crate::support::prometheus::source_at(prom_url, Duration::from_secs(600), 1);
    let http = reqwest::Client::new();
    let samples = runtime.block_on(async {
        let mut samples = 0u64;
        for ns in 0..dataset::BENCH.namespaces {
            let query = ReadQuery {
                start_ms: (dataset::START_S - 86_400) * 1000,
                end_ms: (dataset::END_S + 60) * 1000,
                matchers: vec![Matcher::new(
                    MatchType::Eq,
                    "namespace",
                    &format!("team-{ns:02}"),
                )],
            };
            let mut stream = source
                .client()
                .remote_read(std::slice::from_ref(&query))
                .await
                .expect("remote read");
            let mut batch = String::new();
            loop {
                let next = stream.next().await.expect("series");
                if let Some(s) = &next {
                    samples += s.samples.len() as u64;
                    let metric = serde_json::to_string(&s.labels).expect("labels");
                    let values: Vec<String> = s.samples.iter().map(|x| number(x.value)).collect();
                    let times: Vec<String> =
                        s.samples.iter().map(|x| x.timestamp.to_string()).collect();
                    batch.push_str(&format!(
                        "{{\"metric\":{metric},\"values\":[{}],\"timestamps\":[{}]}}\n",
                        values.join(","),
                        times.join(",")
                    ));
                }
                if batch.len() > 32 << 20 || (next.is_none() && !batch.is_empty()) {
                    let resp = http
                        .post(format!("{}/api/v1/import", vm.url))
                        .body(std::mem::take(&mut batch))
                        .send()
                        .await
                        .expect("import");
                    assert!(resp.status().is_success(), "import: {}", resp.status());
                }
                if next.is_none() {
                    break;
                }
            }
        }
        samples
    });
    // Flushed, then stopped with SIGTERM (which writes everything to disk).
    assert!(get_ok(&format!("{}/internal/force_flush", vm.url)), "flush");
    drop(vm);
    std::fs::write(root.join("complete"), dataset::GENERATOR_VERSION).expect("marker");
    eprintln!(
        "  {samples} samples imported in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    data
}
