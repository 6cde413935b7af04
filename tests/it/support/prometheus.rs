//! A real Prometheus for tests and benchmarks: OpenMetrics written here, backfilled with
//! `promtool tsdb create-blocks-from openmetrics`, served on 127.0.0.1 at a free port
//! from a temp dir (optionally behind basic auth), polled until `/-/ready`, killed on drop.

#![allow(dead_code)]

use std::fmt::Write as _;
use std::io::Write as _;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// Password behind [`BASIC_AUTH_HASH`] (bcrypt, cost 4).
pub const BASIC_AUTH_USER: &str = "kerf";
pub const BASIC_AUTH_PASSWORD: &str = "kerf-Distinctive-Pa55word-7f3e";
pub const BASIC_AUTH_HASH: &str = "$2a$04$n/6sueK9EaR3F2hEWYxpsOqS2wUlH.PSna/MiAhMRrGLzxScgvuOe";

/// Installs Prometheus through the project's script when it is missing.
pub fn ensure_installed() {
    if which("prometheus") && which("promtool") {
        return;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/ensure-prometheus.sh");
    let status = Command::new("bash")
        .arg(script)
        .status()
        .expect("run ensure-prometheus.sh");
    assert!(status.success(), "scripts/ensure-prometheus.sh failed");
}

fn which(bin: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {bin}")])
        .stdout(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// OpenMetrics text being built: each series' samples must be added contiguously.
#[derive(Default)]
pub struct OpenMetrics {
    text: String,
}

impl OpenMetrics {
    pub fn new() -> Self {
        Self::default()
    }

    /// One sample; `ts_ms` in Unix milliseconds.
    pub fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: f64, ts_ms: i64) {
        self.text.push_str(name);
        self.text.push('{');
        for (i, (k, v)) in labels.iter().enumerate() {
            if i > 0 {
                self.text.push(',');
            }
            let _ = write!(self.text, "{k}=\"{v}\"");
        }
        let _ = writeln!(self.text, "}} {value} {}.{:03}", ts_ms / 1000, ts_ms % 1000);
    }

    pub fn len(&self) -> usize {
        self.text.len()
    }

    /// The same samples in the Prometheus text format (millisecond timestamps), for
    /// servers that import that instead.
    pub fn prometheus_text(&self) -> String {
        let mut out = String::with_capacity(self.text.len());
        for line in self.text.lines() {
            let (rest, ts) = line.rsplit_once(' ').expect("a sample line");
            let (secs, millis) = ts.split_once('.').unwrap_or((ts, "000"));
            let _ = writeln!(out, "{rest} {secs}{millis:0<3}");
        }
        out
    }

    /// Writes the file with its `# EOF` terminator.
    pub fn write_to(&self, path: &Path) {
        let mut f = std::fs::File::create(path).expect("create openmetrics file");
        f.write_all(self.text.as_bytes())
            .expect("write openmetrics");
        f.write_all(b"# EOF\n").expect("write eof");
    }
}

/// Backfills `om` into a TSDB at `tsdb_dir`.
pub fn backfill(om_file: &Path, tsdb_dir: &Path) {
    ensure_installed();
    let out = Command::new("promtool")
        .args([
            "tsdb",
            "create-blocks-from",
            "openmetrics",
            "--max-block-duration=24h",
        ])
        .arg(om_file)
        .arg(tsdb_dir)
        .output()
        .expect("run promtool");
    assert!(
        out.status.success(),
        "promtool failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A running Prometheus; killed (and its temp dir removed) on drop.
pub struct Prometheus {
    child: Child,
    pub url: String,
    dir: tempfile::TempDir,
    pub tsdb: PathBuf,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

impl Prometheus {
    /// Backfills `om` into a fresh temp TSDB and serves it.
    pub fn with_data(om: &OpenMetrics, basic_auth: bool) -> Prometheus {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("data.om");
        om.write_to(&file);
        let tsdb = dir.path().join("tsdb");
        backfill(&file, &tsdb);
        Self::serve(dir, tsdb, basic_auth, &[])
    }

    /// An empty TSDB that takes remote write (samples with the writer's timestamps,
    /// staleness markers included).
    pub fn remote_write_receiver() -> Prometheus {
        Self::remote_write_receiver_with(&[])
    }

    /// As [`Prometheus::remote_write_receiver`], with extra command-line flags; its
    /// TSDB is `dir()/tsdb`.
    pub fn remote_write_receiver_with(extra: &[&str]) -> Prometheus {
        let dir = tempfile::tempdir().expect("tempdir");
        let tsdb = dir.path().join("tsdb");
        let flags: Vec<&str> = ["--web.enable-remote-write-receiver"]
            .into_iter()
            .chain(extra.iter().copied())
            .collect();
        Self::serve(dir, tsdb, false, &flags)
    }

    /// Serves an existing TSDB directory (the benchmark's cache) from a copy-free path.
    pub fn serve_existing(tsdb: &Path) -> Prometheus {
        Self::serve_existing_with(tsdb, &[])
    }

    /// As [`Prometheus::serve_existing`], with extra command-line flags.
    pub fn serve_existing_with(tsdb: &Path, extra: &[&str]) -> Prometheus {
        let dir = tempfile::tempdir().expect("tempdir");
        Self::serve(dir, tsdb.to_path_buf(), false, extra)
    }

    fn serve(
        dir: tempfile::TempDir,
        tsdb: PathBuf,
        basic_auth: bool,
        extra: &[&str],
    ) -> Prometheus {
        ensure_installed();
        let config = dir.path().join("prometheus.yml");
        std::fs::write(
            &config,
            "global:\n  scrape_interval: 1h\nscrape_configs: []\n",
        )
        .expect("config");
        let log = dir.path().join("prometheus.log");
        let port = free_port();
        let mut cmd = Command::new("prometheus");
        cmd.arg(format!("--config.file={}", config.display()))
            .arg(format!("--storage.tsdb.path={}", tsdb.display()))
            .arg("--storage.tsdb.retention.time=100y")
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .arg("--query.max-samples=200000000")
            .arg("--log.level=warn")
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).expect("log file"));
        if basic_auth {
            let web = dir.path().join("web.yml");
            let users = format!("basic_auth_users:\n  {BASIC_AUTH_USER}: {BASIC_AUTH_HASH}\n");
            std::fs::write(&web, users).expect("web config");
            cmd.arg(format!("--web.config.file={}", web.display()));
        }
        let child = cmd.spawn().expect("spawn prometheus");
        let mut p = Prometheus {
            child,
            url: format!("http://127.0.0.1:{port}"),
            dir,
            tsdb,
        };
        if let Err(e) = p.wait_ready(Duration::from_secs(60)) {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            panic!("prometheus did not start: {e}\n{text}");
        }
        p
    }

    /// Polls `/-/ready` until 200 (or 401 behind basic auth: listening and checking).
    fn wait_ready(&mut self, limit: Duration) -> Result<(), String> {
        let addr = self.url.trim_start_matches("http://").to_string();
        let mut exited = None;
        let ready = super::wait::within_sync("prometheus to be ready", limit, || {
            if let Ok(Some(status)) = self.child.try_wait() {
                exited = Some(status);
                return Ok(());
            }
            if let Ok(mut s) = std::net::TcpStream::connect(&addr) {
                let req = format!("GET /-/ready HTTP/1.0\r\nHost: {addr}\r\n\r\n");
                let _ = s.write_all(req.as_bytes());
                let mut buf = String::new();
                let _ = std::io::Read::read_to_string(&mut s, &mut buf);
                let status = buf.split_whitespace().nth(1).unwrap_or("");
                if status == "200" || status == "401" {
                    return Ok(());
                }
            }
            Err("not ready")
        });
        match (ready, exited) {
            (_, Some(status)) => Err(format!("prometheus exited with {status}")),
            (Ok(()), None) => Ok(()),
            (Err(_), None) => Err("not ready in time".into()),
        }
    }

    /// The server's process id (its RSS is the benchmark's measure of load).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Posts one remote-write 1.0 body (the snappy block of a `WriteRequest`) to the
/// receiver at `url` (`/api/v1/write`), failing with the server's answer if refused.
pub async fn remote_write(http: &reqwest::Client, url: &str, body: Vec<u8>) {
    let resp = http
        .post(format!("{url}/api/v1/write"))
        .header("Content-Encoding", "snappy")
        .header("Content-Type", "application/x-protobuf")
        .header("X-Prometheus-Remote-Write-Version", "0.1.0")
        .body(body)
        .send()
        .await
        .expect("remote write");
    let status = resp.status();
    let text = resp.text().await.unwrap_or_default();
    assert!(
        status.is_success(),
        "remote write to {url}: {status} {text}"
    );
}

/// kerf's own client of the server at `url`, as a plain datasource (no credentials, no
/// extra headers) with `timeout` and `concurrent` queries at most.
pub fn source_at(
    url: &str,
    timeout: std::time::Duration,
    concurrent: usize,
) -> kerf::datasource::prometheus::PrometheusSource {
    use kerf::datasource::prometheus::{ClientAuth, ClientConfig, PrometheusSource};
    PrometheusSource::new(ClientConfig {
        url: url.to_string(),
        auth: ClientAuth::None,
        headers: Vec::new(),
        ca_pem: None,
        insecure_skip_verify: false,
        timeout,
        max_concurrent_queries: concurrent,
        outbound: Default::default(),
    })
    .expect("a client of the server")
}
