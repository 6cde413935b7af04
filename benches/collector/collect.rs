//! Part 1: the agent's own collector (`kerf::agent::collector::Collector`, every 30 s of
//! a manual clock) over the in-process sim holding the fleet (1,000
//! Deployments × 3 replicas × 2 containers on `NODES` nodes), shipping through the
//! agent's own hub client (`HttpHub`) to a real `kerf serve`; each body is kept in a
//! file, and [`replay`] later sends the same bodies to a real Prometheus. What it costs
//! the hub (CPU per hour of data, RSS beyond idle, bytes on disk) and what it costs the
//! agent per node.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use kerf::agent::collector::{Collector, Enabled, Settings};
use kerf::agent::http_hub::HttpHub;
use kerf::agent::{FeedPage, Hub, HubError};
use kerf::clock::ManualClock;
use kerf::cluster::Cluster as _;
use kerf::cluster::{Container, Node, NodeManagers, Resources};
use kerf::metrics::{CollectorMetrics, OutcomeLabels, SourceLabels};
use kerf::sim::in_process::{DeploymentSpec, SimCluster};
use kerf::sim::kubelet::Usage;
use kerf::sim::shape::{Cpu, Memory};
use kerf::wire::remote_write::decode;
use kerf::wire::{AgentEvent, ConfigFeed, Heartbeat, Readiness, UsageSource};

use crate::support::procfs::{cpu_seconds, status_mib};

pub const NODES: usize = 30;
const WORKLOADS: usize = 1_000;
const NAMESPACES: usize = 20;
const INTERVAL_MS: i64 = 30_000;
const MIB: f64 = 1_048_576.0;

/// What part 1 measured.
pub struct Collected {
    pub rounds: i64,
    pub samples: u64,
    pub writes: u64,
    pub wall_s: f64,
    /// This process (the collector and the in-process sim's kubelets), less the
    /// bench's own decoding of what was sent.
    pub agent_cpu_s: f64,
    pub hub_cpu_s: f64,
    pub hub_idle_mib: f64,
    pub hub_peak_mib: f64,
}

/// The hub as the collector reaches it: writes go to `kerf serve` through the agent's
/// client and are counted; feeds are not part of this measurement.
struct Forward {
    hub: HttpHub,
    /// Every body, length-prefixed, for Prometheus afterwards (posting it here would
    /// count Prometheus's client work as the agent's).
    kept: std::sync::Mutex<std::io::BufWriter<std::fs::File>>,
    samples: AtomicU64,
    writes: AtomicU64,
    /// The newest `kube_pod_owner` and working-set sample times sent.
    newest_owner: AtomicI64,
    newest_usage: AtomicI64,
    decode_ns: AtomicU64,
}

impl Hub for Forward {
    async fn config(&self, _: Option<String>) -> Result<ConfigFeed, HubError> {
        Err(HubError::Unreachable("not measured".into()))
    }
    async fn recommendations(
        &self,
        _: Option<String>,
        _: Option<String>,
    ) -> Result<FeedPage, HubError> {
        Err(HubError::Unreachable("not measured".into()))
    }
    async fn heartbeat(&self, _: &Heartbeat) -> Result<Readiness, HubError> {
        Err(HubError::Unreachable("not measured".into()))
    }
    async fn send_events(&self, _: &[AgentEvent]) -> Result<(), HubError> {
        Ok(())
    }
    async fn write(&self, body: Bytes) -> Result<(), HubError> {
        self.hub.write(body.clone()).await?;
        {
            use std::io::Write as _;
            let mut kept = self.kept.lock().unwrap();
            kept.write_all(&(body.len() as u32).to_le_bytes())
                .and_then(|()| kept.write_all(&body))
                .expect("keeps the body");
        }
        let started = Instant::now();
        let request = decode(&body).expect("the collector's body decodes");
        for s in &request.timeseries {
            let name = s.labels.iter().find(|l| l.name == "__name__");
            let newest = match name.map(|l| l.value.as_str()) {
                Some("kube_pod_owner") => &self.newest_owner,
                Some("container_memory_working_set_bytes") => &self.newest_usage,
                _ => continue,
            };
            let t = s.samples.iter().map(|x| x.timestamp).max().unwrap_or(0);
            newest.fetch_max(t, Ordering::Relaxed);
        }
        let n = request.sample_count() as u64;
        self.decode_ns
            .fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
        self.samples.fetch_add(n, Ordering::Relaxed);
        self.writes.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    async fn report_policies(
        &self,
        report: &kerf::wire::cluster_policies::ClusterPolicies,
    ) -> Result<kerf::wire::cluster_policies::ClusterPolicyVerdicts, HubError> {
        self.hub.report_policies(report).await
    }
}

fn node(i: usize) -> Node {
    Node {
        name: format!("node-{i:02}"),
        labels: BTreeMap::new(),
        ready: true,
        allocatable_cpu: 128_000,
        allocatable_memory: 512 << 30,
        swap_bytes: 0,
        unschedulable: false,
        managers: NodeManagers::default(),
        daemon_endpoint: None,
    }
}

/// The fleet: per workload a `main` container (50–650m, 128–1,028 MiB) and a small
/// `sidecar`, seeded by its index.
fn fleet(clock: Arc<ManualClock>) -> SimCluster {
    let sim = SimCluster::new(7, clock, (0..NODES).map(node).collect());
    for w in 0..WORKLOADS {
        let spread = (w * 7919 % 1000) as f64 / 1000.0;
        let container = |name: &str, cpu: u64, mem: u64| Container {
            name: name.into(),
            image: format!("registry.example/{name}:1"),
            resources: Resources {
                cpu_request: Some(cpu),
                memory_request: Some(mem << 20),
                cpu_limit: None,
                memory_limit: Some(2 * (mem << 20)),
            },
            ..Container::default()
        };
        let usage = |cpu: f64, mib: f64| Usage {
            cpu: Cpu::Diurnal(cpu, cpu * 0.4),
            memory: Memory::Flat(mib * MIB),
            scale: 1.0,
        };
        let spec = DeploymentSpec {
            namespace: format!("ns-{:02}", w % NAMESPACES),
            name: format!("svc-{w:04}"),
            replicas: 3,
            containers: vec![
                container("main", 1000, 1536),
                container("sidecar", 100, 128),
            ],
            usage: [
                (
                    "main".to_string(),
                    usage(50.0 + 600.0 * spread, 128.0 + 900.0 * spread),
                ),
                (
                    "sidecar".to_string(),
                    usage(5.0 + 30.0 * spread, 24.0 + 40.0 * spread),
                ),
            ]
            .into_iter()
            .collect(),
        };
        sim.create_deployment(spec, "bench").expect("deployment");
    }
    sim
}

/// Collects `hours` of the fleet, one collection each 30 s of the agent's clock ending
/// at `end_ms`, into cluster `cluster` of the hub at `url` (process `pid`).
pub async fn collect(
    (url, pid): (&str, &str),
    (cluster, token): (&str, String),
    hours: i64,
    end_ms: i64,
    kept: &std::path::Path,
) -> Collected {
    let rounds = hours * 3_600_000 / INTERVAL_MS;
    let start_ms = end_ms - (rounds - 1) * INTERVAL_MS;
    let clock = Arc::new(ManualClock::new(start_ms));
    let sim = fleet(clock.clone());
    let hub = HttpHub::new(url, cluster, token, None, Duration::from_secs(60)).expect("hub client");
    let forward = Arc::new(Forward {
        hub,
        kept: std::sync::Mutex::new(std::io::BufWriter::new(
            std::fs::File::create(kept).expect("a file for the bodies"),
        )),
        samples: AtomicU64::new(0),
        writes: AtomicU64::new(0),
        newest_owner: AtomicI64::new(i64::MIN),
        newest_usage: AtomicI64::new(i64::MIN),
        decode_ns: AtomicU64::new(0),
    });
    let metrics = CollectorMetrics::default();
    let (_source, rx) = tokio::sync::watch::channel(UsageSource::Embedded);
    let collector = Collector {
        view: Arc::new(sim.watch(&[]).await.expect("the sim's view")),
        cluster: Arc::new(sim),
        hub: forward.clone(),
        clock: clock.clone(),
        settings: Settings {
            enabled: Enabled::On,
            interval: Duration::from_millis(INTERVAL_MS as u64),
            scrape_timeout: Duration::from_secs(25),
            max_concurrent_nodes: 4,
            buffer_max_samples: 5_000_000,
        },
        namespaces: Vec::new(),
        metrics: metrics.clone(),
        source: rx,
    };
    let counted = metrics.clone();
    let collected = move || {
        ["cadvisor", "kube-state"]
            .into_iter()
            .map(|s| {
                metrics
                    .samples
                    .get_or_create(&SourceLabels { source: s.into() })
                    .get()
            })
            .sum::<u64>()
    };
    let hub_idle_mib = status_mib(pid, "VmRSS:");
    let (hub_cpu_before, agent_cpu_before) = (cpu_seconds(pid), cpu_seconds("self"));
    let started = Instant::now();
    let task = tokio::spawn(collector.run());
    let mut hub_peak_mib = hub_idle_mib;
    for k in 0..rounds {
        let t = start_ms + k * INTERVAL_MS;
        clock.set(t);
        // Done when this collection's first and usage writes arrived and every sample
        // collected so far was delivered.
        loop {
            let delivered = forward.samples.load(Ordering::Relaxed);
            if forward.newest_owner.load(Ordering::Relaxed) >= t
                && forward.newest_usage.load(Ordering::Relaxed) >= t
                && delivered == collected()
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        hub_peak_mib = hub_peak_mib.max(status_mib(pid, "VmRSS:"));
        if k % 120 == 119 {
            eprintln!("  collected {} h of {hours} h", (k + 1) / 120);
        }
    }
    task.abort();
    {
        use std::io::Write as _;
        forward.kept.lock().unwrap().flush().expect("bodies kept");
    }
    let wall_s = started.elapsed().as_secs_f64();
    let decode_s = forward.decode_ns.load(Ordering::Relaxed) as f64 / 1e9;
    let scraped = counted
        .scrapes
        .get_or_create(&OutcomeLabels {
            outcome: "ok".into(),
        })
        .get();
    assert_eq!(
        scraped,
        NODES as u64 * rounds as u64,
        "every kubelet scraped every time"
    );
    Collected {
        rounds,
        samples: forward.samples.load(Ordering::Relaxed),
        writes: forward.writes.load(Ordering::Relaxed),
        wall_s,
        agent_cpu_s: cpu_seconds("self") - agent_cpu_before - decode_s,
        hub_cpu_s: cpu_seconds(pid) - hub_cpu_before,
        hub_idle_mib,
        hub_peak_mib,
    }
}

/// Sends the bodies kept in `kept` to the remote-write receiver at `prometheus`, in order.
pub async fn replay(kept: &std::path::Path, prometheus: &str) -> u64 {
    let data = std::fs::read(kept).expect("the kept bodies");
    let http = reqwest::Client::new();
    let (mut at, mut sent) = (0usize, 0u64);
    while at + 4 <= data.len() {
        let len = u32::from_le_bytes(data[at..at + 4].try_into().expect("4 bytes")) as usize;
        let body = data[at + 4..at + 4 + len].to_vec();
        at += 4 + len;
        crate::support::prometheus::remote_write(&http, prometheus, body).await;
        sent += 1;
    }
    sent
}
