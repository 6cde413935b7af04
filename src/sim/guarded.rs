//! The demo's guardrail workloads: a namespace `guardrails` on demo-east whose
//! workloads are each built to meet one of the agent's guardrails once its policy
//! (`demo-guardrails`, auto-patch in place) lets the agent act, so an evaluator sees
//! them within minutes of `kerf demo` starting, without a cluster:
//!
//! | workload | what it is | what the agent does |
//! | --- | --- | --- |
//! | `solo-cache` | one replica, memory resized with `RestartContainer` | `blocked SingleReplicaUnsafe` |
//! | `legacy-report` | Guaranteed, one replica, `Recreate` | `blocked SingleReplicaUnsafe` (`fallbackReason`) |
//! | `checkout-api` | an HPA on CPU and memory | `blocked HPACoupled` |
//! | `search-worker` | its load surged past its CPU limit two hours ago | `blocked Throttled`, memory applied |
//! | `orders-java` | a JVM with `-Xmx` | `blocked JVMFixedHeap`, CPU applied |
//! | `ml-scoring` | Python, memory `NotRequired` | `blocked RestartPolicyRequired`, CPU applied |
//! | `quota-service` | Guaranteed, two replicas | `fallback ResizeInfeasible`, then a rollout |
//! | `ledger-db` | `OnDelete` StatefulSet under a PodDisruptionBudget | `applied`, then `blocked PodDisruptionBudget` |
//! | `session-store` | OOM-killed until five days ago, its limit raised since | `blocked OOMKilled`, CPU applied |
//! | `leaky-worker` | memory climbs to any limit and is OOM-killed | `applied`, then `rolled_back OOMKills` |
//! | `price-cache` | uses near 3 GiB of a 1 GiB request; the namespace's ResourceQuota on `requests.memory` has 512 MiB to spare | `blocked ResourceQuota` |
//! | `slow-start` | by rollout; a start that burns CPU: its readiness probe times out under a 1.2-core CPU limit, and its Deployment gives up after 90 s | `applied`, then `rolled_back RolloutStalled` (`ProgressDeadlineExceeded`) |
//!
//! The entries are new catalogue rows (the catalogue appends them); what the catalogue
//! cannot say (runtime, resize policy, strategy, HPA, PDB, annotations, a change in the
//! past) is in [`Extras`], read by the in-process cluster and the demo datasource.

use super::catalogue::{ContainerSpec, Cpu, HpaSpec, Kind, Memory, Resources, WorkloadSpec};

const MIB: f64 = 1024.0 * 1024.0;
const DAY_MS: i64 = 86_400_000;

/// The namespace of the guardrail workloads.
pub const NAMESPACE: &str = "guardrails";

/// The cluster they run in.
pub const CLUSTER: &str = "demo-east";

/// How a guardrail workload replaces its pods.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rollout {
    /// RollingUpdate with the defaults (25 % surge).
    Rolling,
    Recreate,
    /// StatefulSets: pods keep their template until evicted.
    OnDelete,
}

/// What the catalogue cannot say about a guardrail workload.
#[derive(Debug, Clone, PartialEq)]
pub struct Extras {
    pub image: &'static str,
    pub command: &'static [&'static str],
    pub env: &'static [(&'static str, &'static str)],
    /// `resizePolicy: RestartContainer` for memory.
    pub memory_restarts: bool,
    pub rollout: Rollout,
    pub annotations: &'static [(&'static str, &'static str)],
    /// Extra workload labels (the datasource reports them too).
    pub labels: &'static [(&'static str, &'static str)],
    /// An HPA's utilization targets, `(resource, percent)`.
    pub hpa: &'static [(&'static str, i32)],
    /// A PodDisruptionBudget keeping this many pods.
    pub pdb_min_available: Option<i32>,
    /// The values in force before `days_ago` days (then changed to the catalogue's).
    pub before: Option<(i64, Resources)>,
    /// CPU wanted (millicores) since `hours_ago` hours, instead of the catalogue's
    /// steady level (`Cpu::Surge`).
    pub surge: Option<(i64, f64)>,
    /// Its pods become Ready only with this CPU limit (millicores) or more, and its
    /// rollouts give up after this many seconds (`ProgressDeadlineExceeded`).
    pub startup: Option<(u64, i64)>,
}

/// The guardrail namespace's ResourceQuota: `requests.memory` of the workloads as they
/// start, plus this much room.
pub const QUOTA_ROOM_BYTES: u64 = 512 << 20;

/// Its name.
pub const QUOTA_NAME: &str = "team-memory";

const PLAIN: Extras = Extras {
    image: "",
    command: &[],
    env: &[],
    memory_restarts: false,
    rollout: Rollout::Rolling,
    annotations: &[],
    labels: &[],
    hpa: &[],
    pdb_min_available: None,
    before: None,
    surge: None,
    startup: None,
};

fn res(cpu_req: f64, cpu_lim: Option<f64>, mem_req: f64, mem_lim: Option<f64>) -> Resources {
    Resources {
        cpu_request: Some(cpu_req),
        cpu_limit: cpu_lim,
        memory_request: Some(mem_req * MIB),
        memory_limit: mem_lim.map(|m| m * MIB),
    }
}

fn spec(
    name: &str,
    kind: Kind,
    replicas: u32,
    r: Resources,
    cpu: Cpu,
    memory: Memory,
) -> WorkloadSpec {
    WorkloadSpec {
        namespace: NAMESPACE,
        name: name.to_string(),
        kind,
        replicas,
        containers: vec![ContainerSpec {
            role: crate::workload::ContainerRole::App,
            name: "app",
            resources: r,
            scale: 1.0,
            changes: Vec::new(),
        }],
        cpu,
        memory,
        age_minutes: None,
        rollout_minutes_ago: None,
        pods_replaced_minutes_ago: None,
        pods_replaced_every_minutes: None,
        runs: None,
        // kube-state-metrics reports the HPA's CPU target, as the in-process cluster has it.
        hpa: extras(NAMESPACE, name).and_then(|e| {
            e.hpa
                .iter()
                .find(|(resource, _)| *resource == "cpu")
                .map(|(_, target)| HpaSpec {
                    min_replicas: replicas,
                    max_replicas: replicas * 4,
                    cpu_utilization: f64::from(*target),
                })
        }),
    }
}

/// The guardrail workloads of `cluster` (none outside demo-east).
pub fn workloads(cluster: &str) -> Vec<WorkloadSpec> {
    if cluster != CLUSTER {
        return Vec::new();
    }
    use Kind::{Deployment as D, StatefulSet as S};
    vec![
        spec(
            "solo-cache",
            D,
            1,
            res(300.0, None, 1024.0, Some(1024.0)),
            Cpu::Steady(60.0),
            Memory::Flat(180.0 * MIB),
        ),
        spec(
            "legacy-report",
            D,
            1,
            res(800.0, Some(800.0), 1024.0, Some(1024.0)),
            Cpu::Steady(90.0),
            Memory::Flat(260.0 * MIB),
        ),
        spec(
            "checkout-api",
            D,
            3,
            res(1000.0, None, 768.0, Some(1024.0)),
            Cpu::Diurnal(140.0, 90.0),
            Memory::Flat(280.0 * MIB),
        ),
        spec(
            "search-worker",
            D,
            2,
            res(1200.0, Some(1200.0), 1024.0, Some(1536.0)),
            Cpu::Steady(150.0),
            Memory::Flat(240.0 * MIB),
        ),
        spec(
            "orders-java",
            D,
            2,
            res(1000.0, None, 2048.0, Some(2048.0)),
            Cpu::Steady(120.0),
            Memory::Flat(640.0 * MIB),
        ),
        spec(
            "ml-scoring",
            D,
            2,
            res(900.0, None, 1536.0, Some(2048.0)),
            Cpu::Diurnal(120.0, 60.0),
            Memory::Flat(420.0 * MIB),
        ),
        spec(
            "quota-service",
            D,
            2,
            res(700.0, Some(700.0), 768.0, Some(768.0)),
            Cpu::Steady(80.0),
            Memory::Flat(200.0 * MIB),
        ),
        spec(
            "ledger-db",
            S,
            2,
            res(1500.0, None, 3072.0, Some(3072.0)),
            Cpu::Steady(160.0),
            Memory::Flat(900.0 * MIB),
        ),
        spec(
            "session-store",
            D,
            2,
            res(600.0, None, 2048.0, Some(2048.0)),
            Cpu::Steady(70.0),
            Memory::Flat(300.0 * MIB),
        ),
        spec(
            "leaky-worker",
            D,
            2,
            res(200.0, None, 256.0, Some(256.0)),
            Cpu::Steady(60.0),
            Memory::OomCycle(150.0 * MIB, 0.05),
        ),
        // Needs some 2 GiB more per pod than it asks for: more than the quota's room.
        spec(
            "price-cache",
            D,
            2,
            res(200.0, None, 1024.0, Some(4096.0)),
            Cpu::Steady(100.0),
            Memory::Flat(2900.0 * MIB),
        ),
        spec(
            "slow-start",
            D,
            2,
            res(1500.0, Some(1500.0), 512.0, Some(512.0)),
            Cpu::Steady(60.0),
            Memory::Flat(200.0 * MIB),
        ),
    ]
}

/// The extras of a guardrail workload.
pub fn extras(namespace: &str, name: &str) -> Option<Extras> {
    if namespace != NAMESPACE {
        return None;
    }
    Some(match name {
        "solo-cache" => Extras {
            memory_restarts: true,
            ..PLAIN
        },
        "legacy-report" => Extras {
            rollout: Rollout::Recreate,
            ..PLAIN
        },
        "checkout-api" => Extras {
            hpa: &[("cpu", 70), ("memory", 80)],
            ..PLAIN
        },
        "orders-java" => Extras {
            image: "eclipse-temurin:21-jre",
            command: &["java", "-jar", "/app/orders.jar"],
            env: &[("JAVA_OPTS", "-Xms1g -Xmx1536m -XX:+UseG1GC")],
            // The hub's jvm-fixed-heap flag reads it (kube-state-metrics allow-lists it).
            labels: &[("kerf.getkerf.dev/jvm-fixed-heap", "true")],
            ..PLAIN
        },
        "ml-scoring" => Extras {
            image: "python:3.12-slim",
            command: &["gunicorn", "--workers", "4", "scoring:app"],
            ..PLAIN
        },
        "ledger-db" => Extras {
            rollout: Rollout::OnDelete,
            annotations: &[("kerf.getkerf.dev/allow-disruption", "true")],
            pdb_min_available: Some(2),
            ..PLAIN
        },
        // A week at 150m, then a surge to 2 cores two hours ago: throttled at its
        // 1200m limit now, while the week's P95 (the surge is 1 % of it) asks for less.
        "search-worker" => Extras {
            surge: Some((2, 2000.0)),
            ..PLAIN
        },
        // Its start burns CPU: with a CPU limit under 1.2 cores its readiness probe times
        // out. Its steady 60m makes the recommendation's limit far lower, so the new pods
        // never become Ready.
        "slow-start" => Extras {
            startup: Some((1200, 90)),
            ..PLAIN
        },
        // OOM-killed under 256 Mi until five days ago, when the team raised it to 2 Gi.
        "session-store" => Extras {
            before: Some((5, res(600.0, None, 256.0, Some(256.0)))),
            ..PLAIN
        },
        _ => PLAIN,
    })
}

/// Gives the guardrail workloads among `specs` their past (a change `before` says of,
/// a `surge`), relative to `now_ms`.
pub fn with_past(specs: &mut [WorkloadSpec], now_ms: i64) {
    for spec in specs.iter_mut() {
        let extras = extras(spec.namespace, &spec.name);
        if let (Some((hours, peak)), Cpu::Steady(base)) =
            (extras.as_ref().and_then(|e| e.surge), spec.cpu)
        {
            spec.cpu = Cpu::Surge(base, peak, now_ms - hours * 3_600_000);
        }
        let Some((days, before)) = extras.and_then(|e| e.before) else {
            continue;
        };
        for c in &mut spec.containers {
            let current = c.resources;
            c.resources = before;
            c.changes.insert(0, (now_ms - days * DAY_MS, current));
        }
    }
}
