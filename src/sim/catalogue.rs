//! The demo world's catalogue: two clusters of about thirty workloads each, with the
//! cases a newcomer should see (over-provisioned, OOM-killed, leaking, freshly rolled
//! out, too new to judge) among ordinary steady, diurnal and spiky services.

pub use super::shape::{Cpu, Memory};
use crate::workload::ContainerRole;

const MIB: f64 = 1024.0 * 1024.0;

/// The demo's cluster names.
pub const CLUSTERS: &[&str] = &["demo-east", "demo-west"];

/// How a workload's pods are controlled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Deployment,
    StatefulSet,
    DaemonSet,
    /// An Argo Rollout: a ReplicaSet per revision, like a Deployment.
    Rollout,
    /// A CronJob: a Job per run ([`WorkloadSpec::runs`]), its pods gone between runs.
    CronJob,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Deployment => "Deployment",
            Kind::StatefulSet => "StatefulSet",
            Kind::DaemonSet => "DaemonSet",
            Kind::Rollout => "Rollout",
            Kind::CronJob => "CronJob",
        }
    }
}

/// Requests and limits (millicores, bytes); `None` = not set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Resources {
    pub cpu_request: Option<f64>,
    pub cpu_limit: Option<f64>,
    pub memory_request: Option<f64>,
    pub memory_limit: Option<f64>,
}

/// One container of a workload; usage is the workload's shape times `scale`.
#[derive(Debug, Clone, PartialEq)]
pub struct ContainerSpec {
    pub name: &'static str,
    /// An app container, or a native sidecar (in `spec.initContainers`).
    pub role: ContainerRole,
    pub resources: Resources,
    pub scale: f64,
    /// Changes made while the demo runs (`sim::live`), oldest first: from each time on,
    /// the container runs with those values.
    pub changes: Vec<(i64, Resources)>,
}

impl ContainerSpec {
    /// The values in force at `t_ms`.
    pub fn resources_at(&self, t_ms: i64) -> Resources {
        self.changes
            .iter()
            .rev()
            .find(|(at, _)| *at <= t_ms)
            .map_or(self.resources, |(_, r)| *r)
    }
}

/// One demo workload.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadSpec {
    pub namespace: &'static str,
    pub name: String,
    pub kind: Kind,
    pub replicas: u32,
    pub containers: Vec<ContainerSpec>,
    pub cpu: Cpu,
    pub memory: Memory,
    /// Created this many minutes before the window end (`None`: older than any window).
    pub age_minutes: Option<i64>,
    /// The current release replaced an earlier one this many minutes before the end.
    pub rollout_minutes_ago: Option<i64>,
    /// Pods are replaced (same release) this many minutes before the end.
    pub pods_replaced_minutes_ago: Option<i64>,
    /// …and every this many minutes before that (a daily restart), back to creation.
    pub pods_replaced_every_minutes: Option<i64>,
    /// A HorizontalPodAutoscaler scales it (kube-state-metrics shows it).
    pub hpa: Option<HpaSpec>,
    /// A CronJob's runs.
    pub runs: Option<Runs>,
}

/// When a CronJob runs: every `every_minutes`, for `minutes` each, the latest having
/// started `last_minutes_ago` before the window end.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Runs {
    pub every_minutes: i64,
    pub minutes: i64,
    pub last_minutes_ago: i64,
}

/// A HorizontalPodAutoscaler on CPU utilization.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HpaSpec {
    pub min_replicas: u32,
    pub max_replicas: u32,
    /// Target average CPU utilization, percent of the request.
    pub cpu_utilization: f64,
}

fn res(cpu_req: f64, cpu_lim: Option<f64>, mem_req: f64, mem_lim: Option<f64>) -> Resources {
    Resources {
        cpu_request: Some(cpu_req),
        cpu_limit: cpu_lim,
        memory_request: Some(mem_req * MIB),
        memory_limit: mem_lim.map(|m| m * MIB),
    }
}

fn one(name: &'static str, resources: Resources) -> Vec<ContainerSpec> {
    vec![ContainerSpec {
        name,
        role: ContainerRole::App,
        resources,
        scale: 1.0,
        changes: Vec::new(),
    }]
}

fn with_sidecar(main: Resources) -> Vec<ContainerSpec> {
    vec![
        ContainerSpec {
            name: "app",
            role: ContainerRole::App,
            resources: main,
            scale: 1.0,
            changes: Vec::new(),
        },
        // A mesh proxy, injected as a native sidecar: sized by habit at 100m and 64 MiB,
        // using a twentieth of the app.
        ContainerSpec {
            name: "proxy",
            role: ContainerRole::Sidecar,
            resources: res(100.0, Some(200.0), 64.0, Some(128.0)),
            scale: 0.05,
            changes: Vec::new(),
        },
    ]
}

fn plain(namespace: &'static str, name: &str, replicas: u32, cpu: Cpu, mem: f64) -> WorkloadSpec {
    let (req_cpu, req_mem) = match cpu {
        Cpu::Steady(m)
        | Cpu::Diurnal(m, _)
        | Cpu::Spiky(m, _)
        | Cpu::Idle(m)
        | Cpu::Surge(m, _, _) => (m * 1.6, mem * 1.4 / MIB),
    };
    WorkloadSpec {
        namespace,
        name: name.to_string(),
        kind: Kind::Deployment,
        replicas,
        containers: one(
            "app",
            res(
                req_cpu.round(),
                None,
                req_mem.round(),
                Some((req_mem * 1.5).round()),
            ),
        ),
        cpu,
        memory: Memory::Flat(mem),
        age_minutes: None,
        rollout_minutes_ago: None,
        pods_replaced_minutes_ago: None,
        pods_replaced_every_minutes: None,
        hpa: None,
        runs: None,
    }
}

/// The labels of a demo workload (and of its pod template): `app`, `tier` and `team`.
pub fn labels(spec: &WorkloadSpec) -> [(&'static str, String); 3] {
    let (tier, team) = match spec.namespace {
        "web" => ("frontend", "web"),
        "shop" => ("backend", "commerce"),
        "payments" => ("backend", "payments"),
        "search" => ("backend", "search"),
        "auth" => ("backend", "identity"),
        "data" => ("data", "data"),
        "analytics" => ("data", "insights"),
        _ => ("platform", "platform"),
    };
    [
        ("app", spec.name.clone()),
        ("tier", tier.to_string()),
        ("team", team.to_string()),
    ]
}

/// The workloads of `cluster`, or `None` for a name the demo does not have (with the
/// guardrail workloads of `sim::guarded`).
pub fn workloads(cluster: &str) -> Option<Vec<WorkloadSpec>> {
    let mut w = match cluster {
        "demo-east" => east(),
        "demo-west" => west(),
        _ => return None,
    };
    w.extend(super::guarded::workloads(cluster));
    Some(w)
}

fn east() -> Vec<WorkloadSpec> {
    let mut w = vec![
        // Over-provisioned: asks for 2 cores and 4 GiB, uses a sliver.
        WorkloadSpec {
            containers: one("app", res(2000.0, Some(4000.0), 4096.0, Some(4096.0))),
            ..plain("shop", "catalog", 3, Cpu::Steady(60.0), 300.0 * MIB)
        },
        // Under-provisioned: memory climbs into its 256 MiB limit and is OOM-killed.
        WorkloadSpec {
            containers: one("app", res(250.0, Some(500.0), 256.0, Some(256.0))),
            memory: Memory::OomCycle(150.0 * MIB, 20.0),
            ..plain(
                "payments",
                "ledger",
                2,
                Cpu::Diurnal(180.0, 120.0),
                200.0 * MIB,
            )
        },
        // A slow leak: the lower baseline rises 16 MiB an hour through each pod's life.
        // Restarted every night it peaks near 640 MiB, close to its 768 MiB limit.
        WorkloadSpec {
            // A CPU limit of 2 cores it never nears (the chart names it above its scale).
            containers: one("worker", res(500.0, Some(2000.0), 512.0, Some(768.0))),
            memory: Memory::Leak(256.0 * MIB, 16.0 * MIB),
            pods_replaced_minutes_ago: Some(20 * 60),
            pods_replaced_every_minutes: Some(24 * 60),
            ..plain("data", "ingest-worker", 2, Cpu::Steady(300.0), 300.0 * MIB)
        },
        // A rollout 40 minutes ago: the new release is too young, the old one answers.
        // Scaled by an HPA on CPU: a smaller request moves its scaling point.
        WorkloadSpec {
            containers: with_sidecar(res(500.0, Some(1000.0), 512.0, Some(768.0))),
            rollout_minutes_ago: Some(40),
            hpa: Some(HpaSpec {
                min_replicas: 3,
                max_replicas: 12,
                cpu_utilization: 70.0,
            }),
            ..plain(
                "web",
                "storefront",
                3,
                Cpu::Diurnal(220.0, 160.0),
                380.0 * MIB,
            )
        },
        // Created 20 minutes ago, no earlier release: too little history to judge.
        WorkloadSpec {
            age_minutes: Some(20),
            ..plain(
                "platform",
                "feature-flags",
                2,
                Cpu::Steady(40.0),
                90.0 * MIB,
            )
        },
        WorkloadSpec {
            kind: Kind::StatefulSet,
            containers: one("postgres", res(1000.0, None, 2048.0, Some(2048.0))),
            ..plain(
                "data",
                "postgres",
                3,
                Cpu::Diurnal(450.0, 250.0),
                1300.0 * MIB,
            )
        },
        // An Argo Rollout, canaried a day ago: one workload across its revisions.
        WorkloadSpec {
            kind: Kind::Rollout,
            containers: one("app", res(800.0, Some(1600.0), 1024.0, Some(1024.0))),
            rollout_minutes_ago: Some(26 * 60),
            ..plain(
                "payments",
                "checkout",
                3,
                Cpu::Diurnal(180.0, 120.0),
                300.0 * MIB,
            )
        },
        // A nightly report: 40 minutes a night, its memory climbing to 1.4 GiB by the
        // end of each run, with 4 GiB and 2 cores reserved "to be safe".
        WorkloadSpec {
            kind: Kind::CronJob,
            replicas: 1,
            containers: one("report", res(2000.0, Some(4000.0), 4096.0, Some(4096.0))),
            memory: Memory::Sawtooth(500.0 * MIB, 1400.0 * MIB, 0.7),
            runs: Some(Runs {
                every_minutes: 24 * 60,
                minutes: 40,
                last_minutes_ago: 9 * 60,
            }),
            ..plain("data", "nightly-report", 1, Cpu::Steady(650.0), 0.0)
        },
        WorkloadSpec {
            kind: Kind::DaemonSet,
            containers: one(
                "agent",
                Resources {
                    cpu_request: None,
                    cpu_limit: None,
                    memory_request: None,
                    memory_limit: None,
                },
            ),
            ..plain("platform", "node-agent", 4, Cpu::Steady(35.0), 70.0 * MIB)
        },
    ];
    // Kubernetes' own: left out of runs by default (the recommender settings'
    // `excludedNamespaces`), as KRR does.
    w.push(WorkloadSpec {
        containers: one("coredns", res(100.0, None, 70.0, Some(170.0))),
        ..plain("kube-system", "coredns", 2, Cpu::Steady(8.0), 30.0 * MIB)
    });
    w.extend(ordinary(
        &["shop", "payments", "web", "data", "platform"],
        23,
        0,
    ));
    w
}

fn west() -> Vec<WorkloadSpec> {
    let mut w = vec![
        WorkloadSpec {
            containers: with_sidecar(res(1500.0, Some(3000.0), 2048.0, Some(2048.0))),
            ..plain(
                "search",
                "indexer",
                2,
                Cpu::Spiky(200.0, 1400.0),
                700.0 * MIB,
            )
        },
        WorkloadSpec {
            containers: one("app", res(3000.0, None, 8192.0, Some(8192.0))),
            ..plain(
                "analytics",
                "reporting",
                2,
                Cpu::Diurnal(90.0, 80.0),
                600.0 * MIB,
            )
        },
    ];
    w.extend(ordinary(&["search", "analytics", "web", "auth"], 28, 1));
    w
}

/// How far above what it uses an ordinary service asks, per position in a cycle of
/// twelve: (CPU request / its P95, memory request / its working set). Public fleet
/// studies find most containers using well under half of what they request; here nine
/// in twelve ask for twice their P95 or more, one asks for less than it uses
/// (position 7) and one is tight on memory (position 5).
const OVERSIZE: [(f64, f64); 12] = [
    (3.0, 2.0),
    (2.2, 1.6),
    (4.0, 2.5),
    (2.6, 1.8),
    (5.0, 3.0),
    (1.8, 1.1),
    (3.2, 2.2),
    (0.75, 1.05),
    (2.4, 1.7),
    (6.0, 4.0),
    (2.8, 1.4),
    (1.6, 1.3),
];

/// Ordinary services with varied shapes; `salt` varies names and sizes per cluster.
fn ordinary(namespaces: &[&'static str], count: usize, salt: usize) -> Vec<WorkloadSpec> {
    const NAMES: &[&str] = &[
        "api",
        "gateway",
        "cart",
        "orders",
        "users",
        "sessions",
        "billing",
        "mailer",
        "search-api",
        "recommender",
        "inventory",
        "pricing",
        "images",
        "thumbnails",
        "notifications",
        "audit",
        "scheduler",
        "exporter",
        "webhooks",
        "reports",
        "ratings",
        "shipping",
        "tax",
        "coupons",
        "profiles",
        "feeds",
        "geo",
        "cache-warmer",
        "sitemap",
        "ledger-sync",
    ];
    (0..count)
        .map(|i| {
            let n = i + salt * 7;
            let base = 40.0 + ((n * 37) % 400) as f64;
            let cpu = match n % 4 {
                0 => Cpu::Steady(base),
                1 => Cpu::Diurnal(base, base * 0.8),
                2 => Cpu::Spiky(base * 0.6, base * 5.0),
                _ => Cpu::Idle(base * 0.3),
            };
            let mem = (80.0 + ((n * 53) % 900) as f64) * MIB;
            let mut spec = plain(
                namespaces[n % namespaces.len()],
                NAMES[n % NAMES.len()],
                1 + (n % 4) as u32,
                cpu,
                mem,
            );
            if n % OVERSIZE.len() == 2 {
                // A weekly report takes 35 % more memory for three hours (two days
                // before the window end): a peak half a week of history has not seen.
                spec.memory = Memory::Batch(mem, 0.35, 168.0, 3.0);
            }
            let (f, g) = OVERSIZE[n % OVERSIZE.len()];
            let cpu_request = (super::shape::cpu_quantile(cpu, 0.95) * f)
                .round()
                .max(10.0);
            let mem_request = (mem * g / MIB).round();
            // Half set a CPU limit of twice the request (never the one asking too little:
            // it would be throttled, not short); most set a memory limit.
            let cpu_limit = (n.is_multiple_of(2) && f >= 1.0).then_some(cpu_request * 2.0);
            let mem_limit = (n % 6 != 3).then_some((mem_request * 1.5).round());
            let app = res(cpu_request, cpu_limit, mem_request, mem_limit);
            spec.containers = if n.is_multiple_of(5) {
                with_sidecar(app)
            } else {
                one("app", app)
            };
            spec
        })
        .collect()
}
