//! The real `kerf` binary as the black-box tests (and the benches) run it: offline
//! commands on a temp data dir ([`DataDir`]), `kerf serve` from a [`Builder`], and
//! `kerf demo` ([`Demo`]). A server is ready when its `--ready-file` appears (not when
//! a log line does); its logs are kept and printed when a test fails, and it is
//! stopped with SIGTERM.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use super::wait::{eventually_sync, within_sync};

/// How long a start may take before the test fails.
const START_LIMIT: Duration = Duration::from_secs(30);

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

impl Default for DataDir {
    fn default() -> Self {
        Self::new()
    }
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
        self.token("tests", "admin")
    }

    /// Creates an API token named `name` with fleet role `role`.
    pub fn token(&self, name: &str, role: &str) -> String {
        stdout_line(&self.run(&["token", "create", "--name", name, "--role", role]))
    }

    /// `kerf users create --admin NAME`: the one-time password.
    pub fn bootstrap_admin(&self, name: &str) -> String {
        stdout_line(&self.run(&["users", "create", "--admin", name]))
    }

    /// Starts `kerf serve` and waits until it is ready.
    pub fn start(&self) -> Kerf {
        Kerf::builder(self.path()).start()
    }

    /// Starts `kerf serve` whose Slack and Teams channels may post to the loopback
    /// receivers of the tests (`[outbound] allow`; the vendors' hosts otherwise).
    pub fn start_for_local_receivers(&self) -> Kerf {
        Kerf::builder(self.path())
            .env("KERF_OUTBOUND__ALLOW", LOCAL_RECEIVERS)
            .start()
    }

    /// Starts `kerf serve` for tests of logins: debug logs (the hygiene checks read
    /// them for secrets) and one Argon2 pass (fast logins), then `env`.
    pub fn start_for_logins(&self, env: &[(&str, &str)]) -> Kerf {
        Kerf::builder(self.path())
            .env("KERF_LOG", "debug")
            .env("KERF_AUTH__ARGON2_ITERATIONS", "1")
            .envs(env)
            .start()
    }
}

/// `[outbound] allow` for tests whose Slack and Teams receivers listen on loopback.
pub const LOCAL_RECEIVERS: &str = "127.0.0.1";

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

/// What `kerf serve` is started with: `Kerf::builder(dir).env(..).args(..).start()`
/// (or `kerf demo`: `Demo::builder(dir)…demo()`).
pub struct Builder {
    data_dir: Option<PathBuf>,
    env: Vec<(String, String)>,
    env_remove: Vec<String>,
    clear_env: bool,
    bin: PathBuf,
    args: Vec<String>,
    listen: String,
    shell: Option<String>,
}

impl Builder {
    /// One environment variable (after the harness's own, so it wins).
    pub fn env(mut self, key: &str, value: &str) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    pub fn envs(mut self, env: &[(&str, &str)]) -> Self {
        self.env
            .extend(env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        self
    }

    /// Leaves `key` of this process's environment out.
    pub fn env_remove(mut self, key: &str) -> Self {
        self.env_remove.push(key.into());
        self
    }

    /// Starts from an empty environment (then the harness's and `env`'s variables).
    pub fn clear_env(mut self) -> Self {
        self.clear_env = true;
        self
    }

    /// Another kerf binary (e.g. the static build).
    pub fn bin(mut self, bin: &Path) -> Self {
        self.bin = bin.into();
        self
    }

    /// Flags before `serve` (e.g. `--config FILE`).
    pub fn args(mut self, args: &[&str]) -> Self {
        self.args.extend(args.iter().map(|a| a.to_string()));
        self
    }

    /// The listen address (default `127.0.0.1:0`; a restart names the one it had).
    pub fn listen(mut self, addr: &str) -> Self {
        self.listen = addr.into();
        self
    }

    /// Runs kerf inside `sh -c 'SCRIPT && exec "$@"'` (e.g. `ulimit -n 128`).
    pub fn under_shell(mut self, script: &str) -> Self {
        self.shell = Some(script.into());
        self
    }

    /// The command line and environment of `kerf COMMAND` as set up.
    fn command(&self, command: &str, ready: &Ready) -> Command {
        let mut cmd = match &self.shell {
            Some(script) => {
                let mut cmd = Command::new("sh");
                cmd.args(["-c", &format!("{script} && exec \"$@\""), "sh"])
                    .arg(&self.bin);
                cmd
            }
            None => Command::new(&self.bin),
        };
        if self.clear_env {
            cmd.env_clear();
        }
        if let Some(dir) = &self.data_dir {
            cmd.arg("--data-dir").arg(dir);
        }
        cmd.args(["--listen", &self.listen])
            .args(&self.args)
            .arg(command)
            .arg("--ready-file")
            .arg(&ready.path)
            .env("KERF_LOG", "info")
            .env("KERF_LOG__FORMAT", "text")
            .env_remove("KERF_CONFIG");
        for key in &self.env_remove {
            cmd.env_remove(key);
        }
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        cmd
    }

    /// Spawns `kerf serve` and waits for its ready file.
    pub fn start(self) -> Kerf {
        assert!(self.data_dir.is_some(), "kerf serve needs a data dir");
        let ready = Ready::new();
        let mut cmd = self.command("serve", &ready);
        cmd.stdout(Stdio::null());
        let (child, logs, started) = spawn(cmd);
        let mut kerf = Kerf {
            child: Some(child),
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            logs,
            started,
            ready,
        };
        kerf.addr = kerf.wait_ready("kerf serve").addr;
        kerf
    }

    /// Spawns `kerf demo`, waits for its ready file (written after the banner), then
    /// reads the admin token from the banner.
    pub fn demo(self) -> Demo {
        let ready = Ready::new();
        let mut cmd = self.command("demo", &ready);
        cmd.stdout(Stdio::piped());
        let (mut child, logs, started) = spawn(cmd);
        let (tx, rx) = mpsc::channel();
        let stdout = child.stdout.take().expect("stdout piped");
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let mut kerf = Kerf {
            child: Some(child),
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            logs,
            started,
            ready,
        };
        let doc = kerf.wait_ready("kerf demo");
        assert_eq!(doc.url, Some(format!("http://{}/", doc.addr)));
        kerf.addr = doc.addr;
        // The banner was written before the file; its lines may still be in the pipe.
        let next = |banner: &[String]| {
            rx.recv_timeout(START_LIMIT)
                .unwrap_or_else(|_| panic!("kerf demo's banner ends early:\n{banner:?}"))
        };
        let mut stdout: Vec<String> = Vec::new();
        while !stdout.last().is_some_and(|l| l.contains("Ctrl-C")) {
            let line = next(&stdout);
            stdout.push(line);
        }
        let token = stdout
            .iter()
            .find_map(|l| l.strip_prefix("admin token: "))
            .expect("the banner names the admin token")
            .to_string();
        Demo {
            kerf,
            token,
            stdout,
        }
    }
}

/// Spawns `cmd` with stderr kept line by line; (child, logs, when).
fn spawn(mut cmd: Command) -> (Child, Arc<Mutex<Vec<String>>>, Instant) {
    let started = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn kerf");
    let logs = Arc::new(Mutex::new(Vec::new()));
    let sink = logs.clone();
    let stderr = child.stderr.take().expect("stderr piped");
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            sink.lock().expect("log lock").push(line);
        }
    });
    (child, logs, started)
}

/// The `--ready-file` of one server, in a temp dir of its own (not the data dir,
/// whose files some tests list).
struct Ready {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl Ready {
    fn new() -> Ready {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("ready.json");
        Ready { _dir: dir, path }
    }
}

/// What a ready file says.
#[derive(Debug, serde::Deserialize)]
pub struct ReadyDoc {
    pub addr: SocketAddr,
    pub pid: u32,
    pub url: Option<String>,
}

/// A running server.
pub struct Kerf {
    child: Option<Child>,
    pub addr: SocketAddr,
    pub logs: Arc<Mutex<Vec<String>>>,
    pub started: Instant,
    ready: Ready,
}

impl Kerf {
    /// `kerf serve` on `data_dir`: set it up, then `.start()`.
    pub fn builder(data_dir: &Path) -> Builder {
        Builder {
            data_dir: Some(data_dir.into()),
            env: Vec::new(),
            env_remove: Vec::new(),
            clear_env: false,
            bin: bin(),
            args: Vec::new(),
            listen: "127.0.0.1:0".into(),
            shell: None,
        }
    }

    /// Waits until the ready file appears (failing at once if the process exits).
    fn wait_ready(&mut self, what: &str) -> ReadyDoc {
        let path = self.ready.path.clone();
        let child = self.child.as_mut().expect("running");
        let logs = self.logs.clone();
        let awaited = format!("{what} to write its ready file");
        eventually_sync(&awaited, START_LIMIT, || {
            if let Ok(Some(status)) = child.try_wait() {
                panic!(
                    "{what} exited ({status}) before it was ready:\n{}",
                    logs.lock().expect("log lock").join("\n")
                );
            }
            match std::fs::read(&path) {
                Ok(bytes) => Ok(serde_json::from_slice::<ReadyDoc>(&bytes)
                    .expect("the ready file is whole JSON (it is renamed into place)")),
                Err(e) => Err(e.kind()),
            }
        })
    }

    /// The server's `--ready-file`.
    pub fn ready_file(&self) -> &Path {
        &self.ready.path
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    /// Its API as `token`.
    pub fn api(&self, token: &str) -> super::api::Api {
        super::api::Api::new(self.url(""), token)
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("running").id()
    }

    /// Its `/metrics` page.
    pub async fn metrics_text(&self) -> String {
        super::api::client()
            .get(self.url("/metrics"))
            .send()
            .await
            .expect("metrics")
            .text()
            .await
            .expect("metrics text")
    }

    /// The value of `metric{labels...}` in `/metrics` (0 when absent).
    pub async fn metric(&self, metric: &str, labels: &[(&str, &str)]) -> f64 {
        self.metrics_text()
            .await
            .lines()
            .filter(|l| l.starts_with(&format!("{metric}{{")))
            .find(|l| {
                labels
                    .iter()
                    .all(|(k, v)| l.contains(&format!("{k}=\"{v}\"")))
            })
            .and_then(|l| l.rsplit(' ').next()?.parse().ok())
            .unwrap_or(0.0)
    }

    /// SIGTERM, then wait for exit; returns the exit status code.
    pub fn stop(mut self) -> Option<i32> {
        let mut child = self.child.take().expect("running");
        let _ = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        exit_code(&mut child, Duration::from_secs(30))
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
    /// Everything it printed on stdout (the banner).
    pub stdout: Vec<String>,
}

impl Demo {
    /// Starts `kerf [--data-dir DIR] --listen 127.0.0.1:0 demo` (see [`Builder::demo`]).
    pub fn start(data_dir: Option<&Path>) -> Demo {
        Demo::builder(data_dir).demo()
    }

    /// `kerf demo` on `data_dir` (a temporary one when `None`): set it up, then `.demo()`.
    pub fn builder(data_dir: Option<&Path>) -> Builder {
        Builder {
            data_dir: data_dir.map(Path::to_path_buf),
            ..Kerf::builder(Path::new(""))
        }
    }

    /// Its API as the admin token it printed.
    pub fn api(&self) -> super::api::Api {
        self.kerf.api(&self.token)
    }
}

/// Waits up to `limit` for `child` to exit (else kills it); its exit code.
pub fn exit_code(child: &mut Child, limit: Duration) -> Option<i32> {
    let exited = within_sync("the process to exit", limit, || match child.try_wait() {
        Ok(Some(status)) => Ok(status.code()),
        other => Err(other.map(|_| "running")),
    });
    exited.unwrap_or_else(|_| {
        let _ = child.kill();
        let _ = child.wait();
        None
    })
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
