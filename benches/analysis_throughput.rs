//! Analysis engine throughput on a deterministic synthetic fleet: by default 1,000
//! containers × 3 replicas × 7 days at 30 s, CPU (counters and gauges) and memory, leak
//! detection on. Prints engine-alone samples/s (single thread), then, when a kerf binary
//! exists (`KERF_BIN`, default `target/release/kerf`), times `kerf analyze FILE` next to
//! `jq length FILE` and reports kerf's peak RSS.
//!
//! Env: `KERF_BENCH_CONTAINERS` (default 1000), `KERF_BENCH_DAYS` (default 7),
//! `KERF_BIN`. Run: `cargo bench --bench analysis_throughput`.

use std::hint::black_box;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use kerf::analysis::{
    analyze, leak::MemoryLeakPolicy, ContainerObservation, CurrentIdentity, Input, Inventory,
    Policy, ResourceObservation, Sample, SampleKind, Series, Signal, Target,
};

const STEP_MS: i64 = 30_000;
const T0: i64 = 1_800_000_000_000;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn series(id: String, kind: SampleKind, samples: Vec<Sample>) -> Series {
    Series {
        pod_uid: id.clone(),
        id,
        workload_uid: "uid".into(),
        release: "r1".into(),
        kind,
        samples,
    }
}

fn container(i: usize, points: usize, rng: &mut Rng) -> ContainerObservation {
    let end = T0 + (points as i64 - 1) * STEP_MS;
    let counter = i.is_multiple_of(2);
    let leaking = i.is_multiple_of(10);
    let (mut cpu, mut memory) = (Vec::with_capacity(3), Vec::with_capacity(3));
    for r in 0..3 {
        let base_cpu = 50.0 + 400.0 * rng.unit();
        let base_mem = 2e8 + 8e8 * rng.unit();
        let mut total = 1000.0 * rng.unit();
        let mut cpu_samples = Vec::with_capacity(points);
        let mut mem_samples = Vec::with_capacity(points);
        for k in 0..points {
            // Replicas scrape at slightly different offsets, as real targets do.
            let ts = T0 + k as i64 * STEP_MS + r as i64 * 1_000;
            let millicores = base_cpu * (0.5 + rng.unit());
            total += millicores / 1000.0 * (STEP_MS as f64 / 1000.0);
            cpu_samples.push(Sample {
                timestamp: ts,
                value: if counter { total } else { millicores },
            });
            let growth = if leaking { k as f64 * 2_000.0 } else { 0.0 };
            mem_samples.push(Sample {
                timestamp: ts,
                value: base_mem + growth + 5e7 * rng.unit(),
            });
        }
        let kind = if counter {
            SampleKind::CpuCounterSeconds
        } else {
            SampleKind::Gauge
        };
        cpu.push(series(format!("c{i}-p{r}"), kind, cpu_samples));
        memory.push(series(format!("c{i}-p{r}"), SampleKind::Gauge, mem_samples));
    }
    let signal = |value: f64| Signal {
        available: true,
        unset: false,
        value,
        timestamp: end,
    };
    ContainerObservation {
        target: Target {
            namespace: format!("ns{}", i % 17),
            kind: "Deployment".into(),
            name: format!("app-{i}"),
            container: "main".into(),
            workload_uid: "uid".into(),
            release: "r1".into(),
        },
        identity: CurrentIdentity {
            available: true,
            workload_uid: "uid".into(),
            release: "r1".into(),
            timestamp: end,
            release_started_at: T0,
            ..CurrentIdentity::default()
        },
        inventory: Inventory {
            available: true,
            timestamp: end,
            eligible: 3,
            observed: 3,
            excluded: 0,
        },
        cpu: ResourceObservation {
            series: cpu,
            current_request: signal(1000.0),
            current_limit: signal(4000.0),
        },
        memory: ResourceObservation {
            series: memory,
            current_request: signal(2e9),
            current_limit: signal(4e9),
        },
        oom_kills: Vec::new(),
        previous_releases: Vec::new(),
    }
}

fn fleet(containers: usize, days: usize) -> Input {
    let points = days * 86_400_000 / STEP_MS as usize;
    let mut rng = Rng(42);
    let containers = (0..containers)
        .map(|i| container(i, points, &mut rng))
        .collect();
    Input {
        schema_version: "resource-analysis-input/v2".into(),
        evaluation_time: T0 + (points as i64 - 1) * STEP_MS + 2_000,
        window_start: T0,
        containers,
    }
}

fn sample_count(input: &Input) -> usize {
    input
        .containers
        .iter()
        .flat_map(|c| c.cpu.series.iter().chain(&c.memory.series))
        .map(|s| s.samples.len())
        .sum()
}

fn main() {
    let containers = env_usize("KERF_BENCH_CONTAINERS", 1000);
    let days = env_usize("KERF_BENCH_DAYS", 7);
    let started = Instant::now();
    let input = fleet(containers, days);
    let samples = sample_count(&input);
    println!(
        "fleet: {containers} containers × 3 replicas × {days} d at 30 s = {samples} samples (generated in {:.1?})",
        started.elapsed()
    );
    let mut policy = Policy::default();
    policy.memory.leak_detection = Some(MemoryLeakPolicy::default());
    let mut best = Duration::MAX;
    for run in 0..3 {
        let t = Instant::now();
        let out = analyze(black_box(&input), &policy).expect("synthetic fleet analyzes");
        let took = t.elapsed();
        black_box(&out);
        println!(
            "engine run {run}: {took:.2?}, {} results",
            out.results.len()
        );
        best = best.min(took);
    }
    let rate = samples as f64 / best.as_secs_f64();
    println!("engine alone, leak detection on (single thread, best of 3): {:.1} M samples/s (target ≥ 100)", rate / 1e6);
    policy.memory.leak_detection = None;
    let t = Instant::now();
    black_box(analyze(black_box(&input), &policy).expect("synthetic fleet analyzes"));
    let sizing_only = samples as f64 / t.elapsed().as_secs_f64();
    println!(
        "engine alone, leak detection off: {:.1} M samples/s",
        sizing_only / 1e6
    );
    cli_comparison(&input);
}

fn cli_comparison(input: &Input) {
    let bin =
        PathBuf::from(std::env::var("KERF_BIN").unwrap_or_else(|_| "target/release/kerf".into()));
    if !bin.is_file() {
        println!(
            "kerf binary {} not found; skipping the CLI comparison (set KERF_BIN)",
            bin.display()
        );
        return;
    }
    let file = std::env::temp_dir().join(format!("kerf-bench-input-{}.json", std::process::id()));
    let t = Instant::now();
    let writer = std::fs::File::create(&file).expect("create temp input");
    let mut writer = BufWriter::new(writer);
    serde_json::to_writer(&mut writer, input).expect("write input JSON");
    writer.flush().expect("flush input JSON");
    let size = std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0);
    println!(
        "input JSON: {:.1} MB written in {:.1?} to {}",
        size as f64 / 1e6,
        t.elapsed(),
        file.display()
    );
    let (kerf_time, rss) = timed(&bin, &["analyze", &file.to_string_lossy()]);
    println!(
        "kerf analyze FILE > /dev/null: {kerf_time:.2?}, peak RSS {}",
        rss.map_or("unknown".into(), |k| format!("{:.0} MB", k as f64 / 1024.0))
    );
    let (jq_time, _) = timed(Path::new("jq"), &["length", &file.to_string_lossy()]);
    println!("jq length FILE > /dev/null:    {jq_time:.2?}");
    let _ = std::fs::remove_file(&file);
}

/// Runs a command with stdout discarded; returns wall time and peak RSS in KiB when
/// `/usr/bin/time -v` is available.
fn timed(program: &Path, args: &[&str]) -> (Duration, Option<u64>) {
    let gnu_time = Path::new("/usr/bin/time");
    let t = Instant::now();
    let output = if gnu_time.is_file() {
        Command::new(gnu_time)
            .arg("-v")
            .arg(program)
            .args(args)
            .stdout(Stdio::null())
            .output()
    } else {
        Command::new(program)
            .args(args)
            .stdout(Stdio::null())
            .output()
    };
    let took = t.elapsed();
    let Ok(output) = output else {
        println!("could not run {}", program.display());
        return (took, None);
    };
    if !output.status.success() {
        println!("{} exited with {}", program.display(), output.status);
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let rss = stderr
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("Maximum resident set size (kbytes): ")
        })
        .and_then(|v| v.trim().parse().ok());
    (took, rss)
}
