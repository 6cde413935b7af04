//! A real VictoriaMetrics (Debian's `victoria-metrics`) for tests: a Prometheus-compatible
//! server that refuses remote read. Started on 127.0.0.1 at a free port from a temp
//! dir, filled through `/api/v1/import/prometheus` (or remote write), polled until the data is searchable,
//! killed on drop.

#![allow(dead_code)]

use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::prometheus::OpenMetrics;

/// Installs VictoriaMetrics through the project's script when it is missing.
pub fn ensure_installed() {
    let present = Command::new("sh")
        .args(["-c", "command -v victoria-metrics"])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if present {
        return;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/ensure-victoria-metrics.sh");
    let status = Command::new("bash")
        .arg(script)
        .status()
        .expect("run the install script");
    assert!(
        status.success(),
        "scripts/ensure-victoria-metrics.sh failed"
    );
}

/// A running VictoriaMetrics; killed (and its temp dir removed) on drop.
pub struct Victoria {
    child: Child,
    pub url: String,
    _dir: tempfile::TempDir,
}

impl Victoria {
    /// An empty VictoriaMetrics, started and healthy.
    pub async fn empty() -> Victoria {
        ensure_installed();
        let dir = tempfile::tempdir().expect("tempdir");
        let port = TcpListener::bind("127.0.0.1:0")
            .expect("bind")
            .local_addr()
            .expect("addr")
            .port();
        let child = Command::new("victoria-metrics")
            .arg(format!(
                "-storageDataPath={}",
                dir.path().join("data").display()
            ))
            .arg(format!("-httpListenAddr=127.0.0.1:{port}"))
            .arg("-retentionPeriod=100y")
            .arg("-loggerLevel=ERROR")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn victoria-metrics");
        let vm = Victoria {
            child,
            url: format!("http://127.0.0.1:{port}"),
            _dir: dir,
        };
        let http = super::client();
        let health = format!("{}/health", vm.url);
        super::wait::eventually(
            "victoria-metrics to start",
            Duration::from_secs(60),
            async || match http.get(&health).send().await {
                Ok(r) if r.status().is_success() => Ok(()),
                other => Err(other.map(|r| r.status())),
            },
        )
        .await;
        vm
    }

    /// Serves `om` (imported with millisecond timestamps); returns once every series is
    /// searchable.
    pub async fn with_data(om: &OpenMetrics) -> Victoria {
        let vm = Victoria::empty().await;
        let text = om.prometheus_text();
        let series = text
            .lines()
            .filter_map(|l| l.rsplitn(3, ' ').nth(2))
            .collect::<std::collections::BTreeSet<_>>()
            .len();
        let resp = super::client()
            .post(format!("{}/api/v1/import/prometheus", vm.url))
            .body(text)
            .send()
            .await
            .expect("import");
        assert!(resp.status().is_success(), "import: {}", resp.status());
        vm.searchable(series).await;
        vm
    }

    /// Waits until `series` series are searchable (written rows become so after an
    /// in-memory flush: poll, never sleep).
    pub async fn searchable(&self, series: usize) {
        let http = super::client();
        let what = "the written series to become searchable";
        super::wait::eventually(what, Duration::from_secs(60), async || {
            let _ = http
                .get(format!("{}/internal/force_flush", self.url))
                .send()
                .await;
            // The export API lists every series whatever its age (the series API does
            // not search a range from 0).
            let found = http
                .post(format!("{}/api/v1/export", self.url))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .body("match%5B%5D=%7B__name__%21%3D%22%22%7D")
                .send()
                .await
                .expect("export");
            let exported = found.text().await.expect("export text").lines().count();
            if exported >= series {
                Ok(())
            } else {
                Err(format!("{exported} of {series}"))
            }
        })
        .await;
    }
}

impl Drop for Victoria {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
