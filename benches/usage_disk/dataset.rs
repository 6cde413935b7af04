//! A fleet's usage as the agent's collector sends it, and what the usage store's file
//! takes for it. `usage_disk` prints it; a benchmark that sends the same rounds to
//! Prometheus as well includes this file (`#[path]`) and calls [`write_and_measure`]
//! with [`Fleet::rounds`] or rounds of its own.
//!
//! Per pod, 12 series: the kubelet's cAdvisor CPU counters and working sets of the
//! container and of the pod cgroup, stamped with the kubelet's own times (its
//! housekeeping runs up to 10 s before the scrape, so intervals are irregular), and 8
//! kube-state-metrics series made at the collector's tick (constants, and a restart
//! counter that rarely moves). CPU counters grow by a pod's rate with ±30 % noise (every
//! mantissa bit moves), working sets walk in 4 KiB pages and stay put half the time.

use std::path::Path;
use std::time::{Duration, Instant};

use kerf::store::usage::{DiskUsage, Labels, WriteSeries, METRIC_NAME};
use kerf::store::{UsageOptions, UsageStore};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// 2026-01-01T00:00:00Z, on a 2-hour slot boundary.
pub const T0: i64 = 1_767_225_600_000;

/// Series per pod.
const PER_POD: usize = 12;

/// How many series, how often and for how long.
#[derive(Debug, Clone, Copy)]
pub struct Fleet {
    pub series: usize,
    pub interval_ms: i64,
    pub rounds: usize,
    pub start_ms: i64,
    pub seed: u64,
}

impl Fleet {
    /// `series` series every 30 s for `days` days from [`T0`].
    pub fn every_30s(series: usize, days: i64) -> Fleet {
        Fleet {
            series,
            interval_ms: 30_000,
            rounds: (days * 86_400_000 / 30_000) as usize,
            start_ms: T0,
            seed: 30,
        }
    }

    /// The samples the fleet holds.
    pub fn samples(&self) -> u64 {
        (self.series * self.rounds) as u64
    }

    /// The writes in order: the hub's clock when each arrives (a second after the
    /// collector's tick) and one sample of every series.
    pub fn rounds(&self) -> impl Iterator<Item = (i64, Vec<WriteSeries>)> {
        let fleet = *self;
        let mut rng = StdRng::seed_from_u64(fleet.seed);
        let pods = fleet.series.div_ceil(PER_POD);
        let mut state: Vec<Pod> = (0..pods).map(|_| Pod::new(&mut rng)).collect();
        let names: Vec<Labels> = (0..fleet.series).map(labels).collect();
        (0..fleet.rounds).map(move |round| {
            let tick = fleet.start_ms + round as i64 * fleet.interval_ms;
            let ksm_at = tick + rng.random_range(0..40);
            let batch = names
                .iter()
                .enumerate()
                .map(|(i, labels)| {
                    let pod = &mut state[i / PER_POD];
                    let (t, value) = pod.sample(i % PER_POD, tick, ksm_at, &mut rng);
                    WriteSeries {
                        labels: labels.clone(),
                        samples: vec![(t, value)],
                    }
                })
                .collect();
            (tick + 1_000, batch)
        })
    }
}

/// One pod's state between rounds.
struct Pod {
    /// Cores it uses, and its counters (container, pod cgroup).
    rate: f64,
    cpu: [f64; 2],
    /// Working sets, bytes.
    memory: [f64; 2],
    /// The kubelet's stamp of this round, and of the last one (never goes back).
    stamp: (i64, i64),
    restarts: f64,
    created: f64,
}

impl Pod {
    fn new(rng: &mut StdRng) -> Pod {
        let pages = rng.random_range(12_000..500_000) as f64;
        Pod {
            rate: rng.random_range(0.005..1.5),
            cpu: [rng.random_range(10.0..50_000.0); 2],
            memory: [pages * 4096.0, (pages + 300.0) * 4096.0],
            stamp: (i64::MIN, i64::MIN),
            restarts: 0.0,
            created: (1_760_000_000 + rng.random_range(0..5_000_000)) as f64,
        }
    }

    fn sample(&mut self, kind: usize, tick: i64, ksm_at: i64, rng: &mut StdRng) -> (i64, f64) {
        if kind < 4 && self.stamp.0 < tick - 30_000 {
            let stamp = (tick - rng.random_range(0..10_000)).max(self.stamp.1 + 1);
            let dt = if self.stamp.1 == i64::MIN {
                30.0
            } else {
                (stamp - self.stamp.1) as f64 / 1000.0
            };
            self.stamp = (stamp, stamp);
            for (i, cpu) in self.cpu.iter_mut().enumerate() {
                *cpu += self.rate * dt * rng.random_range(0.7..1.3) * (1.0 + i as f64 * 0.05);
            }
            for memory in &mut self.memory {
                if rng.random_bool(0.5) {
                    let pages = rng.random_range(-256i32..=256) as f64;
                    *memory = (*memory + pages * 4096.0).max(4096.0);
                }
            }
            if rng.random_bool(0.0005) {
                self.restarts += 1.0;
            }
        }
        match kind {
            0 | 1 => (self.stamp.0, self.cpu[kind]),
            2 | 3 => (self.stamp.0, self.memory[kind - 2]),
            4 | 5 | 11 => (ksm_at, 1.0),
            6 => (ksm_at, self.created),
            7 => (ksm_at, 0.25),
            8 => (ksm_at, 268_435_456.0),
            9 => (ksm_at, 536_870_912.0),
            _ => (ksm_at, self.restarts),
        }
    }
}

/// The labels of series `i`: its pod's and its kind's.
fn labels(i: usize) -> Labels {
    let pod = i / PER_POD;
    let (metric, extra): (&str, &[(&str, &str)]) = match i % PER_POD {
        0 => ("container_cpu_usage_seconds_total", &[("container", "app")]),
        1 => ("container_cpu_usage_seconds_total", &[]),
        2 => (
            "container_memory_working_set_bytes",
            &[("container", "app")],
        ),
        3 => ("container_memory_working_set_bytes", &[]),
        4 => ("kube_pod_owner", &[("owner_kind", "ReplicaSet")]),
        5 => ("kube_pod_labels", &[("label_app", "web")]),
        6 => ("kube_pod_created", &[]),
        7 => (
            "kube_pod_container_resource_requests",
            &[("container", "app"), ("resource", "cpu")],
        ),
        8 => (
            "kube_pod_container_resource_requests",
            &[("container", "app"), ("resource", "memory")],
        ),
        9 => (
            "kube_pod_container_resource_limits",
            &[("container", "app"), ("resource", "memory")],
        ),
        10 => (
            "kube_pod_container_status_restarts_total",
            &[("container", "app")],
        ),
        _ => ("kube_pod_info", &[("node", "node-1")]),
    };
    let mut labels: Labels = extra
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect();
    labels.insert(METRIC_NAME.into(), metric.into());
    labels.insert("namespace".into(), format!("team-{:02}", pod % 20));
    labels.insert(
        "pod".into(),
        format!("service-{:03}-7d9f8c6b5-{pod:05}", pod / 4),
    );
    labels
}

/// What writing a dataset took, and the file it left.
#[derive(Debug, Clone, Copy)]
pub struct Measured {
    /// After a WAL checkpoint (the file's own pages).
    pub disk: DiskUsage,
    /// The database, its WAL and shared-memory file on disk just before the checkpoint.
    pub files_before_checkpoint: u64,
    pub accepted: u64,
    /// Samples sent again with the same time and value (a kubelet stamp that did not
    /// move between two rounds): taken, not stored twice.
    pub duplicates: u64,
    pub elapsed: Duration,
}

/// Writes `rounds` (the hub's clock and a write) into a new usage store at `path` as
/// cluster `cluster`, one append per round, then checkpoints and measures the file.
pub async fn write_and_measure(
    path: &Path,
    cluster: &str,
    rounds: impl IntoIterator<Item = (i64, Vec<WriteSeries>)>,
) -> Measured {
    let opts = UsageOptions {
        retention: Duration::from_secs(3650 * 86_400),
        ..UsageOptions::default()
    };
    let store = UsageStore::open_and_migrate(path, &opts, T0).expect("usage store");
    let started = Instant::now();
    let (mut accepted, mut duplicates) = (0, 0);
    for (now, write) in rounds {
        let out = store.append(cluster, write, now).await.expect("append");
        assert_eq!(out.refused_samples(), 0, "{:?}", out.refused_examples);
        accepted += out.accepted;
        duplicates += out.duplicates;
    }
    let elapsed = started.elapsed();
    let size = |suffix: &str| {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        std::fs::metadata(name).map_or(0, |m| m.len())
    };
    let files_before_checkpoint = size("") + size("-wal") + size("-shm");
    store.checkpoint().expect("checkpoint");
    let disk = store.reading(|r| r.disk_usage()).await.expect("disk usage");
    Measured {
        disk,
        files_before_checkpoint,
        accepted,
        duplicates,
        elapsed,
    }
}
