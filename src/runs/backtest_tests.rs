//! The backtest against ground truth: workloads of the simulated world (`sim::shape`
//! knows what each container wants at every moment), collected through the demo
//! datasource's generator and the shared mapping, backtested, and the risk figures
//! compared with the shapes' true distributions.

use super::*;
use crate::analysis::{Input, Policy};
use crate::datasource::demo::generate::generate;
use crate::datasource::mapping::{map_batch, PodIndex};
use crate::datasource::{CollectStats, Collection, Window};
use crate::sim::catalogue::{ContainerSpec, Kind, Resources, WorkloadSpec};
use crate::sim::shape::{cpu_exceedance, cpu_quantile, Cpu, Memory};

const MIB: f64 = 1024.0 * 1024.0;
const END: i64 = 1_800_000_000_000 - 1_800_000_000_000 % 86_400_000;
const DAY: i64 = 86_400_000;

fn spec(name: &str, cpu: Cpu, memory: Memory, age_days: Option<i64>) -> WorkloadSpec {
    WorkloadSpec {
        namespace: "truth",
        name: name.into(),
        kind: Kind::Deployment,
        replicas: 2,
        containers: vec![ContainerSpec {
            role: crate::workload::ContainerRole::App,
            name: "app",
            resources: Resources {
                cpu_request: Some(4000.0),
                cpu_limit: None,
                memory_request: Some(8192.0 * MIB),
                memory_limit: None,
            },
            scale: 1.0,
            changes: Vec::new(),
        }],
        cpu,
        memory,
        age_minutes: age_days.map(|d| d * 24 * 60),
        rollout_minutes_ago: None,
        pods_replaced_minutes_ago: None,
        pods_replaced_every_minutes: None,
        runs: None,
        hpa: None,
    }
}

fn groups(specs: &[WorkloadSpec], window: Window) -> Vec<WorkloadGroup> {
    let answers = generate(11, "truth", specs, window);
    let pods = PodIndex::build(&answers.inventory);
    let (containers, workloads) = map_batch(window, &pods, &answers.settings, answers.usage);
    let collection = Collection {
        input: Input {
            schema_version: INPUT_SCHEMA_VERSION.into(),
            evaluation_time: window.end_ms,
            window_start: window.start_ms,
            containers,
        },
        workloads,
        stats: CollectStats::default(),
    };
    group("truth", collection)
}

fn window(days: i64) -> (Window, Span) {
    let window = Window {
        end_ms: END,
        start_ms: END - days * DAY,
        step_seconds: 60,
    };
    let span = Span {
        start_ms: window.start_ms,
        split_ms: window.start_ms + days / 2 * DAY,
        end_ms: window.end_ms,
    };
    (window, span)
}

/// CPU at P90 with no headroom, and a limit 1.2 × the request.
fn p90_policy() -> Policy {
    let mut p = Policy::default();
    p.cpu.percentile = 90.0;
    p.cpu.headroom_coefficient = 1.0;
    p.cpu.limits_to_requests_ratio = 1.2;
    p
}

#[test]
fn cpu_above_the_request_and_throttling_match_the_shapes_true_distribution() {
    let shapes = [
        Cpu::Steady(200.0),
        Cpu::Diurnal(200.0, 160.0),
        Cpu::Spiky(120.0, 1000.0),
        Cpu::Idle(300.0),
    ];
    let specs: Vec<WorkloadSpec> = shapes
        .iter()
        .enumerate()
        .map(|(i, s)| spec(&format!("w{i}"), *s, Memory::Flat(200.0 * MIB), None))
        .collect();
    let (window, span) = window(4);
    let rows = backtest_groups(&groups(&specs, window), &p90_policy(), span, (0.03, 0.004));
    assert_eq!(rows.len(), shapes.len());
    for (row, shape) in rows.iter().zip(shapes) {
        let cpu = row.containers[0].cpu.recommended;
        let (request, limit) = (cpu.request.expect("request"), cpu.limit.expect("limit"));
        // The engine's nearest-rank P90 of the samples is the shape's true P90.
        let truth = cpu_quantile(shape, 0.90);
        assert!(
            (request / truth - 1.0).abs() < 0.03,
            "{shape:?}: {request} vs {truth}"
        );
        // Out of sample the values were recommended on the first half alone: their own
        // sampling error (about ±0.015 at P90 over two days of minutes) adds to the
        // scoring's, so the bound there is twice as wide.
        for (mode, score, bound) in [
            ("in", &row.in_sample, 0.015),
            ("out", &row.out_of_sample, 0.03),
        ] {
            let above = score.cpu_above_request_share.expect("samples");
            let throttled = score.cpu_throttled_share.expect("samples");
            let (want_above, want_throttled) =
                (cpu_exceedance(shape, request), cpu_exceedance(shape, limit));
            assert!(
                (above - want_above).abs() < bound,
                "{shape:?} {mode}: {above} vs {want_above}"
            );
            assert!(
                (throttled - want_throttled).abs() < bound,
                "{shape:?} {mode}: {throttled} vs {want_throttled}"
            );
        }
    }
}

#[test]
fn a_leak_crosses_a_limit_sized_before_the_split_once_per_pod_and_never_in_sample() {
    // Pods five days old, 8 MiB/h: 24 h into their life at the window start. A limit
    // of the peak × 1.1 made at the split (72 h of life, 832 MiB) is reached 10 h later.
    let leak = spec(
        "leak",
        Cpu::Steady(100.0),
        Memory::Leak(256.0 * MIB, 8.0 * MIB),
        Some(5),
    );
    let flat = spec("flat", Cpu::Steady(100.0), Memory::Flat(300.0 * MIB), None);
    let mut policy = Policy::default();
    policy.memory.headroom_coefficient = 1.1;
    policy.memory.limits_to_requests_ratio = 1.0;
    let (window, span) = window(4);
    let rows = backtest_groups(&groups(&[leak, flat], window), &policy, span, (0.03, 0.004));
    let by = |n: &str| rows.iter().find(|r| r.name == n).expect("row");
    let leak = by("leak");
    // Truth: each replica's memory (b + k × life) reaches the limit made at the split
    // before the end, once.
    let life_at_split_h = (span.split_ms - (END - 5 * DAY)) as f64 / 3_600_000.0;
    let limit = (256.0 + 8.0 * life_at_split_h) * MIB * 1.1;
    let reached_after_h = (limit / MIB - 256.0) / 8.0 - life_at_split_h;
    assert!(
        reached_after_h > 0.0 && reached_after_h < 48.0,
        "{reached_after_h}"
    );
    assert_eq!(leak.out_of_sample.would_be_oom_kills, 2);
    assert_eq!(leak.in_sample.would_be_oom_kills, 0);
    let flat = by("flat");
    assert_eq!(flat.out_of_sample.would_be_oom_kills, 0);
    assert_eq!(flat.out_of_sample.memory_above_request_share, Some(0.0));
}

#[test]
fn the_report_adds_workloads_up_weighting_shares_by_samples() {
    let specs = [
        spec("a", Cpu::Steady(200.0), Memory::Flat(200.0 * MIB), None),
        spec("b", Cpu::Idle(300.0), Memory::Flat(100.0 * MIB), None),
    ];
    let (window, span) = window(2);
    let rows = backtest_groups(&groups(&specs, window), &p90_policy(), span, (0.03, 0.004));
    let r = report(&p90_policy(), span, rows.clone(), false, Vec::new());
    let mut counts = Counts::default();
    for w in &rows {
        counts.add(&w.in_sample.counts);
    }
    assert_eq!(r.in_sample.counts, counts);
    assert_eq!(
        r.in_sample.cpu_above_request_share,
        counts.cpu_above_request_share()
    );
    let cost: f64 = rows.iter().filter_map(|w| w.in_sample.cost_change).sum();
    assert!((r.in_sample.cost_change.expect("cost") - cost).abs() < 1e-9);
    // Both asked for 4 cores and 8 GiB: both shrink, none grows.
    assert_eq!((r.workloads_changed, r.workloads_grown), (2, 0));
    assert!(cost < 0.0);
    assert!(r.policy_version.starts_with("v2:"));
}
