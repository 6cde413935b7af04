//! Black-box harness: runs the real `kerf` binary on port 0 with a temp data dir, keeps
//! its logs (printed when a test fails) and stops it with SIGTERM.

#![allow(dead_code)]

pub mod cut_proxy;
pub mod fleet_tsdb;
pub mod hub;
pub mod kube;
pub mod prometheus;
pub mod receiver;
pub mod smtp;
pub mod victoria;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// The binary under test: `KERF_TEST_BIN` (e.g. the static build) or cargo's.
pub fn bin() -> PathBuf {
    std::env::var_os("KERF_TEST_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_kerf")))
}

/// A temp data dir plus helpers to run commands against it.
pub struct DataDir {
    pub dir: tempfile::TempDir,
}

impl DataDir {
    pub fn new() -> Self {
        DataDir {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Runs `kerf --data-dir DIR ARGS...` to completion.
    pub fn run(&self, args: &[&str]) -> Output {
        self.run_env(args, &[])
    }

    pub fn run_env(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        Command::new(bin())
            .arg("--data-dir")
            .arg(self.path())
            .args(args)
            .envs(env.iter().copied())
            .env_remove("KERF_CONFIG")
            .stdin(Stdio::null())
            .output()
            .expect("run kerf")
    }

    /// Registers a cluster and returns its agent token.
    pub fn create_cluster(&self, name: &str) -> String {
        stdout_line(&self.run(&["clusters", "create", name]))
    }

    /// Creates an admin API token.
    pub fn admin_token(&self) -> String {
        stdout_line(&self.run(&["token", "create", "--name", "tests", "--role", "admin"]))
    }

    /// Starts `kerf serve` and waits until it listens.
    pub fn start(&self) -> Kerf {
        Kerf::start(self.path(), &[])
    }
}

/// The single stdout line of a successful command.
pub fn stdout_line(out: &Output) -> String {
    assert!(
        out.status.success(),
        "command failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A running server.
pub struct Kerf {
    child: Option<Child>,
    pub addr: SocketAddr,
    pub logs: Arc<Mutex<Vec<String>>>,
    pub started: Instant,
}

impl Kerf {
    pub fn start(data_dir: &Path, env: &[(&str, &str)]) -> Kerf {
        Self::start_args(data_dir, env, &[])
    }

    pub fn start_args(data_dir: &Path, env: &[(&str, &str)], extra: &[&str]) -> Kerf {
        Self::start_cmd(Command::new(bin()), data_dir, env, extra, "127.0.0.1:0")
    }

    /// As [`Kerf::start_args`], listening on `listen` (a restart on the same address).
    pub fn start_at(data_dir: &Path, env: &[(&str, &str)], extra: &[&str], listen: &str) -> Kerf {
        Self::start_cmd(Command::new(bin()), data_dir, env, extra, listen)
    }

    /// Starts kerf inside `sh -c 'SCRIPT; exec "$@"'` (e.g. `ulimit -n 128`).
    pub fn start_under_shell(script: &str, data_dir: &Path, env: &[(&str, &str)]) -> Kerf {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", &format!("{script} && exec \"$@\""), "sh"])
            .arg(bin());
        Self::start_cmd(cmd, data_dir, env, &[], "127.0.0.1:0")
    }

    fn start_cmd(
        mut cmd: Command,
        data_dir: &Path,
        env: &[(&str, &str)],
        extra: &[&str],
        listen: &str,
    ) -> Kerf {
        let started = Instant::now();
        let mut child = cmd
            .arg("--data-dir")
            .arg(data_dir)
            .args(["--listen", listen])
            .args(extra)
            .arg("serve")
            .env("KERF_LOG", "info")
            .env("KERF_LOG__FORMAT", "text")
            .env_remove("KERF_CONFIG")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn kerf serve");
        let logs = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = mpsc::channel();
        let stderr = child.stderr.take().expect("stderr piped");
        let sink = logs.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(rest) = line.split("listening addr=").nth(1) {
                    let addr = rest.split_whitespace().next().unwrap_or("").to_string();
                    let _ = tx.send(addr);
                }
                sink.lock().expect("log lock").push(line);
            }
        });
        let addr = match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(a) => a.parse().expect("listen address"),
            Err(_) => {
                let _ = child.kill();
                panic!(
                    "kerf did not start listening:\n{}",
                    logs.lock().expect("log lock").join("\n")
                );
            }
        };
        Kerf {
            child: Some(child),
            addr,
            logs,
            started,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("running").id()
    }

    /// SIGTERM, then wait for exit; returns the exit status code.
    pub fn stop(mut self) -> Option<i32> {
        let mut child = self.child.take().expect("running");
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        wait_with_deadline(&mut child, Duration::from_secs(30))
    }

    /// SIGKILL: no chance to clean up.
    pub fn kill(mut self) {
        let mut child = self.child.take().expect("running");
        let _ = child.kill();
        let _ = child.wait();
    }

    pub fn log_text(&self) -> String {
        self.logs.lock().expect("log lock").join("\n")
    }
}

/// A running `kerf demo` and the admin token it printed.
pub struct Demo {
    pub kerf: Kerf,
    pub token: String,
    /// Everything it printed on stdout.
    pub stdout: Vec<String>,
}

impl Demo {
    /// Starts `kerf [--data-dir DIR] --listen 127.0.0.1:0 demo` and waits for its banner.
    pub fn start(data_dir: Option<&Path>) -> Demo {
        let started = Instant::now();
        let mut cmd = Command::new(bin());
        if let Some(dir) = data_dir {
            cmd.arg("--data-dir").arg(dir);
        }
        let mut child = cmd
            .args(["--listen", "127.0.0.1:0", "demo"])
            .env("KERF_LOG", "info")
            .env_remove("KERF_CONFIG")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn kerf demo");
        let logs = Arc::new(Mutex::new(Vec::new()));
        let sink = logs.clone();
        let stderr = child.stderr.take().expect("stderr piped");
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                sink.lock().expect("log lock").push(line);
            }
        });
        let (tx, rx) = mpsc::channel();
        let stdout = child.stdout.take().expect("stdout piped");
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let mut lines = Vec::new();
        let (mut addr, mut token) = (None, None);
        let mut done = false;
        while !done {
            match rx.recv_timeout(Duration::from_secs(30)) {
                Ok(line) => {
                    // The banner's last line.
                    done = line.contains("Ctrl-C");
                    if let Some(url) = line.strip_prefix("url: http://") {
                        addr = Some(url.trim_end_matches('/').parse().expect("address"));
                    }
                    if let Some(t) = line.strip_prefix("admin token: ") {
                        token = Some(t.to_string());
                    }
                    lines.push(line);
                }
                Err(_) => {
                    let _ = child.kill();
                    panic!(
                        "kerf demo printed no banner:\n{}\n{}",
                        lines.join("\n"),
                        logs.lock().expect("log lock").join("\n")
                    );
                }
            }
        }
        Demo {
            kerf: Kerf {
                child: Some(child),
                addr: addr.expect("address"),
                logs,
                started,
            },
            token: token.expect("token"),
            stdout: lines,
        }
    }
}

fn wait_with_deadline(child: &mut Child, limit: Duration) -> Option<i32> {
    let deadline = Instant::now() + limit;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return status.code();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

impl Drop for Kerf {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        if std::thread::panicking() {
            eprintln!(
                "---- kerf log ----\n{}\n------------------",
                self.log_text()
            );
        }
    }
}

/// An HTTP client for tests.
pub fn client() -> reqwest::Client {
    kerf::tls::install_crypto_provider();
    reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client")
}

/// A valid event with the given id.
pub fn event(id: &str) -> serde_json::Value {
    serde_json::json!({
        "id": id,
        "type": "skipped",
        "time": "2026-11-04T10:15:00Z",
        "workload": {"namespace": "shop", "kind": "Deployment", "name": "api"},
        "reason": "ModeAudit",
    })
}

/// A fresh random UUID string.
pub fn uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// Posts a batch with a token; returns (status, body).
pub async fn post_events(
    http: &reqwest::Client,
    kerf_url: &str,
    cluster: &str,
    token: &str,
    body: &serde_json::Value,
) -> (u16, serde_json::Value) {
    let resp = http
        .post(format!("{kerf_url}/v1/clusters/{cluster}/events"))
        .bearer_auth(token)
        .json(body)
        .send()
        .await
        .expect("send");
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(serde_json::Value::Null))
}

/// Walks `/v1/audit` with `query` to the end; returns every item.
pub async fn audit_all(
    http: &reqwest::Client,
    base: &str,
    token: &str,
    query: &str,
) -> Vec<serde_json::Value> {
    let mut items = Vec::new();
    let mut next: Option<String> = None;
    loop {
        let mut url = format!("{base}/v1/audit?limit=500{query}");
        if let Some(n) = &next {
            url.push_str(&format!("&next={n}"));
        }
        let page: serde_json::Value = http
            .get(url)
            .bearer_auth(token)
            .send()
            .await
            .expect("audit")
            .json()
            .await
            .expect("json");
        items.extend(page["items"].as_array().expect("items").iter().cloned());
        match page["next"].as_str() {
            Some(n) => next = Some(n.to_string()),
            None => return items,
        }
    }
}

/// Asserts the API's error shape and returns the code.
pub fn error_code(body: &serde_json::Value) -> String {
    let e = &body["error"];
    assert!(e.is_object(), "no error object in {body}");
    assert!(
        e["message"].as_str().is_some_and(|m| !m.is_empty()),
        "no message in {body}"
    );
    assert!(e.get("details").is_some(), "no details in {body}");
    e["code"].as_str().expect("code").to_string()
}

/// Calls the API with a bearer token; returns (status, JSON body or null).
pub async fn call(
    http: &reqwest::Client,
    base: &str,
    token: &str,
    method: &str,
    path: &str,
    body: Option<serde_json::Value>,
) -> (u16, serde_json::Value) {
    let m = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
    let mut req = http.request(m, format!("{base}{path}")).bearer_auth(token);
    if let Some(b) = body {
        req = req.json(&b);
    }
    let resp = req.send().await.expect("send");
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(serde_json::Value::Null))
}
