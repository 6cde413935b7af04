//! A cluster of Deployments, generated deterministically and backfilled once into a
//! TSDB: [`BENCH`] (1,000 Deployments in 20 namespaces × 3 replicas × 2 containers, the
//! run benchmark), [`SCAN_BENCH`] (1,000 × 1 replica × 2 containers, the scan
//! benchmark) and [`SCAN_TEST`] (300 × 1 replica × 2 containers, the scan test), 7 days at 60 s of cAdvisor CPU counters and working sets, and the
//! kube-state-metrics series kerf's inventory reads (owners, creation, replicas,
//! requests and limits).
//!
//! The OpenMetrics text of 121 M samples is ~10 GB, so it is written one UTC day per
//! file (promtool needs a regular file: it mmaps it), each file backfilled with
//! `promtool tsdb create-blocks-from openmetrics --max-block-duration=24h` and deleted;
//! two days are generated and backfilled at a time. The TSDB is cached outside the
//! repository, under `$KERF_BENCH_CACHE` or else `~/.cache/kerf/bench-data`, in
//! `<GENERATOR_VERSION>[-<shape>]/tsdb`, completed by a `complete` marker, so re-runs
//! (and other worktrees) skip all of it. Two processes generating one shape at once each
//! write their own directory and the first to finish renames it into place.
//!
//! kube-state-metrics series are written every 10 minutes (plus a sample at the window
//! end) instead of every 60 s: kerf reads them only through `last_over_time` over the
//! window and `[5m]` at its end, and their 33,000 series at 60 s would triple the
//! backfill for no difference in what the run reads.

#![allow(dead_code)]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Bump when the generated data changes: the cache directory is named after it.
pub const GENERATOR_VERSION: &str = "v1";
pub const DAYS: i64 = 7;
pub const STEP_S: i64 = 60;

/// The shape of a generated cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fleet {
    pub workloads: u64,
    pub namespaces: u64,
    pub replicas: u64,
    pub containers: &'static [&'static str],
}

/// The benchmarks' cluster.
pub const BENCH: Fleet = Fleet {
    workloads: 1_000,
    namespaces: 20,
    replicas: 3,
    containers: &["main", "sidecar"],
};

/// The scan benchmark's cluster: 1,000 workloads, 2,000 containers (one replica each:
/// a third of [`BENCH`]'s samples, so it fits next to a build on a small disk).
pub const SCAN_BENCH: Fleet = Fleet {
    workloads: 1_000,
    namespaces: 20,
    replicas: 1,
    containers: &["main", "sidecar"],
};

/// The scan test's cluster: 300 workloads, 600 containers.
pub const SCAN_TEST: Fleet = Fleet {
    workloads: 300,
    namespaces: 6,
    replicas: 1,
    containers: &["main", "sidecar"],
};

impl Fleet {
    /// The cache directory's name.
    fn dir_name(&self) -> String {
        if *self == BENCH {
            return GENERATOR_VERSION.to_string();
        }
        format!(
            "{GENERATOR_VERSION}-w{}-n{}-r{}-c{}",
            self.workloads,
            self.namespaces,
            self.replicas,
            self.containers.len()
        )
    }

    /// Namespace of workload `w`.
    pub fn namespace(&self, w: u64) -> String {
        format!("team-{:02}", w % self.namespaces)
    }
}
const KSM_STEP_S: i64 = 600;
/// The window end: a UTC midnight, so each day file fills exactly one 24 h block.
pub const END_S: i64 = 1_759_968_000;
pub const START_S: i64 = END_S - DAYS * 86_400;

/// SplitMix64: a tiny, stable PRNG (the data must never change under a version).
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9e37_79b9_7f4a_7c15)
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

struct Workload {
    ns: String,
    name: String,
    rs: String,
    index: u64,
}

fn workload(f: &Fleet, w: u64) -> Workload {
    let name = format!("svc-{w:04}");
    let hash = format!("{:010x}", Rng::new(w).next() & 0xff_ffff_ffff);
    Workload {
        ns: f.namespace(w),
        rs: format!("{name}-{hash}"),
        name,
        index: w,
    }
}

fn pod_name(w: &Workload, r: u64) -> String {
    let alphabet = b"bcdfghjklmnpqrstvwxz2456789";
    let mut rng = Rng::new(w.index * 31 + r + 7);
    let suffix: String = (0..5)
        .map(|_| alphabet[(rng.next() % alphabet.len() as u64) as usize] as char)
        .collect();
    format!("{}-{suffix}", w.rs)
}

fn pod_uid(w: &Workload, r: u64) -> String {
    format!("0b5e7a1c-0000-4000-8000-{:08x}{:04x}", w.index, r)
}

/// Per-container usage profile: mean cores, diurnal amplitude and phase, memory.
struct Profile {
    cores: f64,
    swing: f64,
    phase: f64,
    mem: f64,
    seed: u64,
}

fn profile(w: u64, r: u64, c: usize) -> Profile {
    let mut rng = Rng::new(w * 1_000 + r * 10 + c as u64);
    let main = c == 0;
    Profile {
        cores: if main {
            0.05 + rng.unit() * 0.6
        } else {
            0.005 + rng.unit() * 0.03
        },
        swing: rng.unit() * 0.6, // < 1 - 0.3 (the jitter): the counter only grows
        phase: rng.unit() * std::f64::consts::TAU,
        mem: if main {
            128.0 + rng.unit() * 900.0
        } else {
            24.0 + rng.unit() * 40.0
        } * 1_048_576.0,
        seed: rng.next(),
    }
}

/// One day of OpenMetrics text: `[day_start, day_start + 1 d)`, plus the window end on
/// the last day. Every series' samples are contiguous, as promtool requires.
fn write_day(f: &Fleet, path: &Path, day: i64) -> std::io::Result<()> {
    let from = START_S + day * 86_400;
    let to = if day == DAYS - 1 {
        END_S + 1
    } else {
        from + 86_400
    };
    let mut out = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    for w in 0..f.workloads {
        let wl = workload(f, w);
        ksm_workload(&mut out, f, &wl, from, to)?;
        for r in 0..f.replicas {
            let pod = pod_name(&wl, r);
            let uid = pod_uid(&wl, r);
            ksm_pod(&mut out, f, &wl, &pod, &uid, r, from, to)?;
            for (c, container) in f.containers.iter().enumerate() {
                let p = profile(w, r, c);
                let labels = format!(
                    "{{namespace=\"{}\",pod=\"{pod}\",container=\"{container}\"}}",
                    wl.ns
                );
                cadvisor(&mut out, &labels, &p, from, to)?;
            }
        }
    }
    out.write_all(b"# EOF\n")?;
    out.flush()
}

/// The CPU counter in closed form (so each day file continues the previous one): the
/// integral of `cores × (1 + swing × sin(day + phase))` since the window start, plus a
/// jitter smaller than the least increment of a step, so it never decreases.
fn counter_at(p: &Profile, t: i64) -> f64 {
    let w = std::f64::consts::TAU / 86_400.0;
    let angle = |s: i64| (s % 86_400) as f64 * w + p.phase;
    let integral = p.cores * (t - START_S) as f64
        + p.cores * p.swing / w * (angle(START_S).cos() - angle(t).cos());
    let jitter = Rng::new(p.seed ^ t as u64).unit() * p.cores * 0.3 * STEP_S as f64;
    integral + jitter
}

fn cadvisor(
    out: &mut impl std::io::Write,
    labels: &str,
    p: &Profile,
    from: i64,
    to: i64,
) -> std::io::Result<()> {
    let mut t = from;
    while t < to {
        let counter = counter_at(p, t);
        writeln!(
            out,
            "container_cpu_usage_seconds_total{labels} {counter:.4} {t}"
        )?;
        t += STEP_S;
    }
    let mut rng = Rng::new(p.seed ^ 0x5a5a ^ from as u64);
    let mut t = from;
    while t < to {
        let day = (t % 86_400) as f64 / 86_400.0 * std::f64::consts::TAU;
        let mem = p.mem * (1.0 + 0.1 * (day + p.phase).sin() + 0.05 * rng.unit());
        writeln!(
            out,
            "container_memory_working_set_bytes{labels} {} {t}",
            mem as u64
        )?;
        t += STEP_S;
    }
    Ok(())
}

/// KSM sample times: every 10 minutes from the window start, and the window end.
fn ksm_times(from: i64, to: i64) -> impl Iterator<Item = i64> {
    let first = from + (KSM_STEP_S - (from - START_S).rem_euclid(KSM_STEP_S)) % KSM_STEP_S;
    (0..)
        .map(move |i| first + i * KSM_STEP_S)
        .take_while(move |t| *t < to)
        .chain(
            (to > END_S)
                .then_some(END_S)
                .filter(|e| (e - START_S) % KSM_STEP_S != 0),
        )
}

fn series(
    out: &mut impl std::io::Write,
    name_labels: &str,
    value: f64,
    from: i64,
    to: i64,
) -> std::io::Result<()> {
    for t in ksm_times(from, to) {
        writeln!(out, "{name_labels} {value} {t}")?;
    }
    Ok(())
}

fn ksm_workload(
    out: &mut impl std::io::Write,
    f: &Fleet,
    w: &Workload,
    from: i64,
    to: i64,
) -> std::io::Result<()> {
    let (ns, name, rs) = (&w.ns, &w.name, &w.rs);
    let created = (START_S - 30 * 86_400) as f64;
    series(
        out,
        &format!("kube_deployment_created{{namespace=\"{ns}\",deployment=\"{name}\"}}"),
        created,
        from,
        to,
    )?;
    series(
        out,
        &format!("kube_deployment_spec_replicas{{namespace=\"{ns}\",deployment=\"{name}\"}}"),
        f.replicas as f64,
        from,
        to,
    )?;
    series(
        out,
        &format!("kube_replicaset_owner{{namespace=\"{ns}\",replicaset=\"{rs}\",owner_kind=\"Deployment\",owner_name=\"{name}\"}}"),
        1.0,
        from,
        to,
    )
}

#[allow(clippy::too_many_arguments)]
fn ksm_pod(
    out: &mut impl std::io::Write,
    f: &Fleet,
    w: &Workload,
    pod: &str,
    uid: &str,
    r: u64,
    from: i64,
    to: i64,
) -> std::io::Result<()> {
    let ns = &w.ns;
    let base = format!("namespace=\"{ns}\",pod=\"{pod}\",uid=\"{uid}\"");
    series(
        out,
        &format!("kube_pod_owner{{{base},owner_kind=\"ReplicaSet\",owner_name=\"{}\",owner_is_controller=\"true\"}}", w.rs),
        1.0,
        from,
        to,
    )?;
    series(
        out,
        &format!("kube_pod_created{{{base}}}"),
        (START_S - 20 * 86_400 + r as i64) as f64,
        from,
        to,
    )?;
    for (c, container) in f.containers.iter().enumerate() {
        let p = profile(w.index, 0, c);
        let cpu = ((p.cores * 1.5 * 1000.0).round() / 1000.0).max(0.01);
        let mem = (p.mem * 1.4).round();
        for (metric, resource, unit, value) in [
            ("kube_pod_container_resource_requests", "cpu", "core", cpu),
            (
                "kube_pod_container_resource_limits",
                "cpu",
                "core",
                cpu * 2.0,
            ),
            (
                "kube_pod_container_resource_requests",
                "memory",
                "byte",
                mem,
            ),
            ("kube_pod_container_resource_limits", "memory", "byte", mem),
        ] {
            let l = format!("{metric}{{{base},container=\"{container}\",resource=\"{resource}\",unit=\"{unit}\"}}");
            series(out, &l, value, from, to)?;
        }
    }
    Ok(())
}

/// Where generated datasets are cached: `$KERF_BENCH_CACHE`, else
/// `~/.cache/kerf/bench-data` (a fresh clone or another worktree reuses it), else
/// `<target>/bench-data` when there is no home directory.
pub fn cache_dir(target_dir: &Path) -> PathBuf {
    if let Some(dir) = std::env::var_os("KERF_BENCH_CACHE") {
        return PathBuf::from(dir);
    }
    match std::env::var_os("HOME") {
        Some(home) => PathBuf::from(home).join(".cache/kerf/bench-data"),
        None => target_dir.join("bench-data"),
    }
}

/// The cached TSDB of `f`, generated and backfilled first when missing. Returns its
/// path and the seconds generation took (0 when cached).
pub fn ensure(f: &Fleet, target_dir: &Path) -> (PathBuf, f64) {
    let done = cache_dir(target_dir).join(f.dir_name());
    if done.join("complete").exists() {
        return (done.join("tsdb"), 0.0);
    }
    let root =
        cache_dir(target_dir).join(format!("{}.partial-{}", f.dir_name(), std::process::id()));
    let tsdb = root.join("tsdb");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&tsdb).expect("bench-data dir");
    eprintln!(
        "generating the benchmark cluster into {} (once)",
        root.display()
    );
    let started = Instant::now();
    let workers = 2;
    std::thread::scope(|s| {
        for worker in 0..workers {
            let (root, tsdb) = (&root, &tsdb);
            s.spawn(move || {
                for day in (worker..DAYS).step_by(workers as usize) {
                    let file = root.join(format!("day-{day}.om"));
                    let t = Instant::now();
                    write_day(f, &file, day).expect("write day");
                    let generated = t.elapsed().as_secs_f64();
                    let out = Command::new("promtool")
                        .args([
                            "tsdb",
                            "create-blocks-from",
                            "openmetrics",
                            "--max-block-duration=24h",
                        ])
                        .arg(&file)
                        .arg(tsdb)
                        .output()
                        .expect("run promtool");
                    assert!(
                        out.status.success(),
                        "promtool failed: {}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                    let _ = std::fs::remove_file(&file);
                    eprintln!(
                        "  day {day}: generated in {generated:.1} s, backfilled in {:.1} s",
                        t.elapsed().as_secs_f64() - generated
                    );
                }
            });
        }
    });
    std::fs::write(root.join("complete"), GENERATOR_VERSION).expect("marker");
    let seconds = started.elapsed().as_secs_f64();
    // Another process may have finished first: keep its copy, drop ours.
    if std::fs::rename(&root, &done).is_err() {
        let _ = std::fs::remove_dir_all(&root);
    }
    (done.join("tsdb"), seconds)
}
