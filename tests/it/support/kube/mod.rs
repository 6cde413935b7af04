//! A real Kubernetes control plane for the tests: etcd (Debian) and kube-apiserver,
//! kube-controller-manager and kube-scheduler (built by `scripts/ensure-kube.sh`) on
//! loopback at free ports, with generated certificates, RBAC and static tokens.
//!
//! One control plane per test-binary run, started by the first test that asks for it and
//! shared by all; each test works in its own namespace (`namespace()`) so tests run in
//! parallel. The processes are children of a thread that lives as long as the test
//! binary, with `PR_SET_PDEATHSIG`, so they die with it even on abort; at exit they are
//! stopped by PID. Their logs stay in the run directory (printed) when a test failed.

pub mod audit_log;
pub mod manifests;
pub mod objects;
pub mod pki;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};

use pki::Pki;

/// The running control plane.
pub struct ControlPlane {
    pub server: String,
    pub pki: Pki,
    pub dir: PathBuf,
    /// Seconds from the first process start to all three components healthy.
    pub start_to_ready: Duration,
    pids: Mutex<Vec<(&'static str, u32)>>,
    failures: AtomicUsize,
}

static PLANE: OnceLock<ControlPlane> = OnceLock::new();

/// Set when a start failed, so later tests fail at once instead of starting again.
static START_FAILED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The shared control plane, started on first use.
pub fn control_plane() -> &'static ControlPlane {
    assert!(
        !START_FAILED.load(Ordering::SeqCst),
        "the control plane failed to start earlier in this run (see the first failure)"
    );
    PLANE.get_or_init(|| {
        let guard = StartGuard;
        let plane = start();
        std::mem::forget(guard);
        plane
    })
}

/// Marks the start failed if `start` unwinds.
struct StartGuard;

impl Drop for StartGuard {
    fn drop(&mut self) {
        START_FAILED.store(true, Ordering::SeqCst);
    }
}

/// `N` distinct free ports: every listener is held until all are chosen. One at a time,
/// the system may hand out a port just given back, and then two parts of the control
/// plane are told the same port (seen: the controller manager on the API server's, so
/// no ReplicaSet or pod was ever made).
fn free_ports<const N: usize>() -> [u16; N] {
    let held: Vec<TcpListener> = (0..N)
        .map(|_| TcpListener::bind("127.0.0.1:0").expect("free port"))
        .collect();
    std::array::from_fn(|i| held[i].local_addr().expect("free port").port())
}

/// The directory holding the three binaries: `KUBE_CONTROL_PLANE_DIR`, else what
/// `scripts/ensure-kube.sh` prints (it builds them when the cache is empty).
fn binaries() -> PathBuf {
    if let Ok(dir) = std::env::var("KUBE_CONTROL_PLANE_DIR") {
        return PathBuf::from(dir);
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/ensure-kube.sh");
    let out = Command::new("bash")
        .arg(script)
        .stderr(Stdio::inherit())
        .output()
        .expect("run scripts/ensure-kube.sh");
    assert!(out.status.success(), "scripts/ensure-kube.sh failed");
    let text = String::from_utf8_lossy(&out.stdout);
    PathBuf::from(
        text.lines()
            .last()
            .expect("ensure-kube.sh prints the directory")
            .trim(),
    )
}

/// A process spec: name, program, args.
type Spec = (&'static str, PathBuf, Vec<String>);

/// The thread that starts the processes. It never ends, so `PR_SET_PDEATHSIG` (which
/// fires when the spawning *thread* exits) fires only when the test binary does.
struct Keeper(Mutex<mpsc::Sender<(Spec, mpsc::Sender<u32>)>>);

impl Keeper {
    fn new(logs: PathBuf) -> Keeper {
        let (tx, rx) = mpsc::channel::<(Spec, mpsc::Sender<u32>)>();
        std::thread::Builder::new()
            .name("kube-control-plane".into())
            .spawn(move || {
                let mut children: Vec<Child> = Vec::new();
                for ((name, program, args), reply) in rx.iter() {
                    let path = logs.join(format!("{name}.log"));
                    let log = std::fs::File::create(&path).expect("log file");
                    let mut cmd = Command::new(&program);
                    cmd.args(&args)
                        .stdin(Stdio::null())
                        .stdout(log.try_clone().expect("log clone"))
                        .stderr(log);
                    // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec.
                    unsafe {
                        use std::os::unix::process::CommandExt;
                        cmd.pre_exec(|| {
                            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                            Ok(())
                        });
                    }
                    let child = cmd
                        .spawn()
                        .unwrap_or_else(|e| panic!("start {name} ({}): {e}", program.display()));
                    let _ = reply.send(child.id());
                    children.push(child);
                }
                // The sender lives in a static: this is reached only if it is dropped.
                loop {
                    std::thread::park();
                }
            })
            .expect("keeper thread");
        Keeper(Mutex::new(tx))
    }

    fn spawn(&self, spec: Spec) -> (&'static str, u32) {
        let name = spec.0;
        let (reply, pid) = mpsc::channel();
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .send((spec, reply))
            .expect("keeper alive");
        (name, pid.recv().expect("child started"))
    }
}

static KEEPER: OnceLock<Keeper> = OnceLock::new();

fn start() -> ControlPlane {
    kerf::tls::install_crypto_provider();
    let bin = binaries();
    let dir = std::env::temp_dir().join(format!("kerf-kube-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("run dir");
    let pki = Pki::generate(&dir);
    let [etcd_port, peer_port, api_port, kcm_port, sched_port] = free_ports();
    let server = format!("https://127.0.0.1:{api_port}");
    let p = |path: &Path| path.display().to_string();
    let etcd_url = format!("http://127.0.0.1:{etcd_port}");
    let peer_url = format!("http://127.0.0.1:{peer_port}");
    let kcm_config = pki.kubeconfig(
        &dir,
        "controller-manager",
        &server,
        &pki.tokens.controller_manager.token,
    );
    let sched_config = pki.kubeconfig(&dir, "scheduler", &server, &pki.tokens.scheduler.token);
    for sub in ["etcd", "flex", "kcm-certs", "sched-certs"] {
        std::fs::create_dir_all(dir.join(sub)).expect("sub dir");
    }
    let audit_policy = dir.join("audit-policy.yaml");
    std::fs::write(&audit_policy, audit_log::POLICY).expect("audit policy");
    let args = |v: &[String]| v.to_vec();
    let specs: Vec<Spec> = vec![
        (
            "etcd",
            PathBuf::from("etcd"),
            args(&[
                "--name=kerf-test".into(),
                format!("--data-dir={}", p(&dir.join("etcd"))),
                format!("--listen-client-urls={etcd_url}"),
                format!("--advertise-client-urls={etcd_url}"),
                format!("--listen-peer-urls={peer_url}"),
                format!("--initial-advertise-peer-urls={peer_url}"),
                format!("--initial-cluster=kerf-test={peer_url}"),
                "--log-level=warn".into(),
            ]),
        ),
        (
            "kube-apiserver",
            bin.join("kube-apiserver"),
            args(&[
                format!("--etcd-servers={etcd_url}"),
                format!("--secure-port={api_port}"),
                "--bind-address=127.0.0.1".into(),
                "--advertise-address=127.0.0.1".into(),
                format!("--cert-dir={}", p(&dir)),
                format!("--tls-cert-file={}", p(&pki.serving_cert)),
                format!("--tls-private-key-file={}", p(&pki.serving_key)),
                format!("--client-ca-file={}", p(&pki.ca_cert)),
                format!("--token-auth-file={}", p(&pki.token_file)),
                "--authorization-mode=RBAC".into(),
                "--service-account-issuer=https://kubernetes.default.svc".into(),
                format!("--service-account-key-file={}", p(&pki.sa_pub)),
                format!("--service-account-signing-key-file={}", p(&pki.sa_key)),
                "--service-cluster-ip-range=10.96.0.0/16".into(),
                "--endpoint-reconciler-type=none".into(),
                "--allow-privileged=true".into(),
                format!("--requestheader-client-ca-file={}", p(&pki.front_proxy_ca)),
                "--requestheader-allowed-names=front-proxy-client".into(),
                "--requestheader-username-headers=X-Remote-User".into(),
                "--requestheader-group-headers=X-Remote-Group".into(),
                "--requestheader-extra-headers-prefix=X-Remote-Extra-".into(),
                format!("--proxy-client-cert-file={}", p(&pki.front_proxy_cert)),
                format!("--proxy-client-key-file={}", p(&pki.front_proxy_key)),
                "--profiling=false".into(),
                format!("--audit-policy-file={}", p(&audit_policy)),
                format!("--audit-log-path={}", p(&audit_log::path(&dir))),
                "--audit-log-format=json".into(),
                "--audit-log-mode=blocking".into(),
                "--v=1".into(),
            ]),
        ),
        (
            "kube-controller-manager",
            bin.join("kube-controller-manager"),
            args(&[
                format!("--kubeconfig={}", p(&kcm_config)),
                format!("--authentication-kubeconfig={}", p(&kcm_config)),
                format!("--authorization-kubeconfig={}", p(&kcm_config)),
                format!("--secure-port={kcm_port}"),
                "--bind-address=127.0.0.1".into(),
                format!("--cert-dir={}", p(&dir.join("kcm-certs"))),
                "--use-service-account-credentials=true".into(),
                format!("--service-account-private-key-file={}", p(&pki.sa_key)),
                format!("--root-ca-file={}", p(&pki.ca_cert)),
                format!("--cluster-signing-cert-file={}", p(&pki.ca_cert)),
                format!("--cluster-signing-key-file={}", p(&pki.ca_key)),
                format!("--flex-volume-plugin-dir={}", p(&dir.join("flex"))),
                "--leader-elect=false".into(),
                "--profiling=false".into(),
                "--v=1".into(),
            ]),
        ),
        (
            "kube-scheduler",
            bin.join("kube-scheduler"),
            args(&[
                format!("--kubeconfig={}", p(&sched_config)),
                format!("--authentication-kubeconfig={}", p(&sched_config)),
                format!("--authorization-kubeconfig={}", p(&sched_config)),
                format!("--secure-port={sched_port}"),
                "--bind-address=127.0.0.1".into(),
                format!("--cert-dir={}", p(&dir.join("sched-certs"))),
                "--leader-elect=false".into(),
                "--profiling=false".into(),
                "--v=1".into(),
            ]),
        ),
    ];
    let started = Instant::now();
    let keeper = KEEPER.get_or_init(|| Keeper::new(dir.clone()));
    // SAFETY: registering a plain extern "C" fn with no captured state.
    unsafe {
        libc::atexit(stop_at_exit);
    }
    let mut specs = specs.into_iter();
    let mut pids = Vec::new();
    // etcd and the API server first: the other two exit if RBAC is not bootstrapped yet.
    pids.extend(specs.by_ref().take(2).map(|s| keeper.spawn(s)));
    let plane = ControlPlane {
        server,
        pki,
        dir,
        start_to_ready: Duration::ZERO,
        pids: Mutex::new(pids),
        failures: AtomicUsize::new(0),
    };
    plane.wait_healthy(&format!("{}/readyz", plane.server), Duration::from_secs(90));
    for spec in specs {
        let pid = keeper.spawn(spec);
        plane
            .pids
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(pid);
    }
    for port in [kcm_port, sched_port] {
        plane.wait_healthy(
            &format!("https://127.0.0.1:{port}/healthz"),
            Duration::from_secs(90),
        );
    }
    let start_to_ready = started.elapsed();
    plane.install_manifests();
    eprintln!(
        "kube: control plane at {} ready in {:.1} s (logs in {})",
        plane.server,
        start_to_ready.as_secs_f64(),
        plane.dir.display()
    );
    ControlPlane {
        start_to_ready,
        ..plane
    }
}

extern "C" fn stop_at_exit() {
    if let Some(plane) = PLANE.get() {
        plane.stop();
    }
}

impl ControlPlane {
    /// Polls `url` until it answers 200, on a runtime of its own (the caller may be
    /// inside a test's runtime). The components serve self-signed certificates of their
    /// own, and only their health is read, so the certificate is not verified here.
    fn wait_healthy(&self, url: &str, limit: Duration) {
        let (url, token) = (url.to_string(), self.pki.tokens.admin.token.clone());
        let healthy = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async {
                let client = reqwest::Client::builder()
                    .danger_accept_invalid_certs(true)
                    .timeout(Duration::from_secs(5))
                    .build()
                    .expect("client");
                let healthy = crate::support::within(&url, limit, async || {
                    let answer = client.get(&url).bearer_auth(&token).send().await;
                    answer.map(|r| r.status().is_success()).unwrap_or(false)
                });
                healthy.await.is_ok()
            })
        })
        .join()
        .expect("health thread");
        if !healthy {
            self.record_failure();
            panic!(
                "not healthy after {limit:?}; logs in {}",
                self.dir.display()
            );
        }
    }

    /// The shipped CRDs and the agent's ClusterRole (`packaging/k8s/`), bound to the
    /// agent's identity, on a runtime of its own.
    fn install_manifests(&self) {
        let (server, ca, token) = (
            self.server.clone(),
            self.pki.ca_pem.clone(),
            self.pki.tokens.admin.token.clone(),
        );
        std::thread::spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime")
                .block_on(manifests::install(&server, &ca, &token))
        })
        .join()
        .expect("manifests thread");
    }

    /// Stops every process by PID (SIGTERM, then SIGKILL after 5 s) and removes the run
    /// directory unless a test failed, in which case it says where the logs are.
    pub fn stop(&self) {
        let pids = std::mem::take(&mut *self.pids.lock().unwrap_or_else(|e| e.into_inner()));
        for (_, pid) in pids.iter().rev() {
            // SAFETY: signalling our own child by its PID.
            unsafe {
                libc::kill(*pid as i32, libc::SIGTERM);
            }
        }
        let (grace, started) = (Duration::from_secs(5), Instant::now());
        for (_, pid) in pids.iter().rev() {
            let left = grace.saturating_sub(started.elapsed());
            let gone = crate::support::wait::within_sync("the process to exit", left, || {
                !Path::new(&format!("/proc/{pid}")).exists() || is_zombie(*pid)
            });
            if gone.is_err() {
                // SAFETY: as above.
                unsafe {
                    libc::kill(*pid as i32, libc::SIGKILL);
                }
            }
        }
        if self.failures.load(Ordering::SeqCst) == 0 {
            let _ = std::fs::remove_dir_all(&self.dir);
        } else {
            eprintln!(
                "kube: a test failed; control-plane logs kept in {}",
                self.dir.display()
            );
        }
    }

    /// The kube config of one of the static identities.
    pub async fn config_for(&self, name: &str, token: &str) -> Config {
        let text = self.pki.kubeconfig_text(name, &self.server, token);
        let kc = Kubeconfig::from_yaml(&text).expect("parse kubeconfig");
        let mut config = Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
            .await
            .expect("kube config");
        // A stuck request fails the test instead of outliving its deadline.
        config.connect_timeout = Some(Duration::from_secs(10));
        config.read_timeout = Some(Duration::from_secs(30));
        // 429s (PDB refusals) reach the test at once, as they reach the agent.
        config.default_retry = false;
        config
    }

    /// A kube client as one of the static identities.
    pub async fn client_for(&self, name: &str, token: &str) -> Client {
        Client::try_from(self.config_for(name, token).await).expect("kube client")
    }

    /// The agent's identity as `KubeCluster::connect` builds it (it also reaches the
    /// sim kubelets, trusting the cluster's CA).
    pub async fn agent_cluster(&self) -> kerf::cluster::kube::KubeCluster {
        let config = self.config_for("agent", &self.pki.tokens.agent.token).await;
        kerf::cluster::kube::KubeCluster::connect(config, Default::default())
            .expect("agent cluster")
    }

    /// The sim kubelets' serving certificate.
    pub fn kubelet_serving(&self) -> kerf::sim::api_kubelet::Serving {
        kerf::sim::api_kubelet::Serving {
            cert_pem: self.pki.kubelet_cert_pem.clone(),
            key_pem: self.pki.kubelet_key_pem.clone(),
        }
    }

    pub async fn admin(&self) -> Client {
        self.client_for("admin", &self.pki.tokens.admin.token).await
    }

    /// The kerf agent's identity (bound to the `kerf-agent` ClusterRole by `rbac`).
    pub async fn agent(&self) -> Client {
        self.client_for("agent", &self.pki.tokens.agent.token).await
    }

    pub async fn unprivileged(&self) -> Client {
        self.client_for("jane", &self.pki.tokens.unprivileged.token)
            .await
    }

    /// Marks the run failed so the logs are kept.
    pub fn record_failure(&self) {
        self.failures.fetch_add(1, Ordering::SeqCst);
    }
}

fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            s.rsplit(')')
                .next()
                .is_some_and(|rest| rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(true)
}

/// A test's own namespace; a panic while it is alive keeps the control-plane logs.
pub struct TestNamespace {
    pub name: String,
}

impl Drop for TestNamespace {
    fn drop(&mut self) {
        if std::thread::panicking() {
            if let Some(plane) = PLANE.get() {
                plane.record_failure();
                eprintln!(
                    "kube: test in namespace {} failed; control-plane logs in {}",
                    self.name,
                    plane.dir.display()
                );
            }
        }
    }
}

/// Creates a fresh namespace named after `tag` (unique per call).
pub async fn namespace(client: &Client, tag: &str) -> TestNamespace {
    use k8s_openapi::api::core::v1::Namespace;
    use kube::api::{Api, PostParams};
    let tag = tag.replace('_', "-");
    let name = format!("{tag}-{}", &uuid::Uuid::new_v4().simple().to_string()[..6]);
    let ns: Namespace = serde_json::from_value(serde_json::json!({
        "metadata": { "name": name }
    }))
    .expect("namespace object");
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await
        .expect("create namespace");
    TestNamespace { name }
}
