//! The four presets backtested on the demo fleet (both clusters, the hub's default
//! 7-day window at 60 s, split in half), as `POST /v1/policies/backtest` computes it:
//! cost change, share of CPU above the request, would-be OOM kills, throttling, and
//! how many workloads change and grow. docs/contracts/policy.md quotes its output.
//!
//! `cargo run --example backtest_presets` prints the table; `-- sweep` also tries a
//! grid of CPU percentiles and headrooms and memory headrooms and limit ratios (how the
//! `balanced` numbers were chosen).

use kerf::analysis::Policy;
use kerf::datasource::{ClusterScope, DemoFleet};
use kerf::policy::presets;
use kerf::runs::backtest::{backtest_groups, report, span_for, Report};
use kerf::runs::workload::{group, WorkloadGroup};
use kerf::runs::{Pricing, RecommenderSettings};

/// A fixed window end (a Monday 00:00 UTC), so the figures do not move from run to run.
const END_MS: i64 = 1_767_571_200_000;

fn fleet(settings: &RecommenderSettings) -> Vec<(String, Vec<WorkloadGroup>)> {
    let (window, _) = span_for(END_MS, settings, 0.5);
    DemoFleet::clusters()
        .iter()
        .map(|cluster| {
            let scope = ClusterScope {
                cluster: cluster.to_string(),
                selector_label: None,
                selector_value: None,
            };
            let collection = DemoFleet::new(kerf::demo::DEMO_SEED)
                .collect_now(&scope, window)
                .expect("the demo collects");
            let mut groups = group(cluster, collection);
            groups.retain(|g| !settings.excludes(&g.info.namespace));
            (cluster.to_string(), groups)
        })
        .collect()
}

fn run(
    fleet: &[(String, Vec<WorkloadGroup>)],
    policy: &Policy,
    settings: &RecommenderSettings,
) -> Report {
    let (_, span) = span_for(END_MS, settings, 0.5);
    let pricing = Pricing::default();
    let mut rows = Vec::new();
    for (cluster, groups) in fleet {
        rows.extend(backtest_groups(
            groups,
            policy,
            span,
            pricing.for_cluster(cluster),
        ));
    }
    report(policy, span, rows, false, Vec::new())
}

fn pct(v: Option<f64>) -> String {
    v.map_or("—".into(), |x| format!("{:.2} %", x * 100.0))
}

fn line(name: &str, r: &Report) {
    let i = &r.in_sample;
    let o = &r.out_of_sample;
    println!(
        "{name:<16} {:>10.2} {:>10.2} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>4}/{:<4} {:>4}",
        i.cost_change.unwrap_or(0.0),
        o.cost_change.unwrap_or(0.0),
        pct(i.cpu_above_request_share),
        pct(o.cpu_above_request_share),
        i.would_be_oom_kills,
        o.would_be_oom_kills,
        pct(i.cpu_throttled_share),
        pct(o.cpu_throttled_share),
        pct(i.memory_above_request_share),
        pct(o.memory_above_request_share),
        r.workloads_changed,
        r.workloads.len(),
        r.workloads_grown,
    );
}

fn header() {
    println!(
        "{:<16} {:>10} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>4}",
        "",
        "cost/mo",
        "cost/mo",
        "cpu>req",
        "cpu>req",
        "OOMs",
        "OOMs",
        "throttle",
        "throttle",
        "mem>req",
        "mem>req",
        "changed",
        "grow"
    );
    println!(
        "{:<16} {:>10} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "preset", "in", "out", "in", "out", "in", "out", "in", "out", "in", "out"
    );
}

fn main() {
    let settings = RecommenderSettings::default();
    let fleet = fleet(&settings);
    let total: usize = fleet.iter().map(|(_, g)| g.len()).sum();
    println!(
        "demo fleet: {total} workloads, 7 days at 60 s, split at 50 % (in = recommended on the whole window and scored on it, out = recommended on the first half, scored on the second)\n"
    );
    header();
    for p in presets::all() {
        line(p.name, &run(&fleet, &p.analysis, &settings));
    }
    if std::env::args().any(|a| a == "rows") {
        let r = run(&fleet, &presets::fleet_default(), &settings);
        for w in &r.workloads {
            println!(
                "{:<10} {:<14} {:>8.2} {:>8.2} cpu>req {:>7} / {:>7} ooms {:>2}/{:>2} thr {:>7} {}",
                w.namespace,
                w.name,
                w.in_sample.cost_change.unwrap_or(0.0),
                w.out_of_sample.cost_change.unwrap_or(0.0),
                pct(w.in_sample.cpu_above_request_share),
                pct(w.out_of_sample.cpu_above_request_share),
                w.in_sample.would_be_oom_kills,
                w.out_of_sample.would_be_oom_kills,
                pct(w.in_sample.cpu_throttled_share),
                w.note.clone().unwrap_or_default()
            );
        }
    }
    if let Some(name) = std::env::args().skip_while(|a| a != "detail").nth(1) {
        let r = run(&fleet, &presets::fleet_default(), &settings);
        for w in r.workloads.iter().filter(|w| w.name == name) {
            println!("{}", serde_json::to_string_pretty(w).unwrap_or_default());
        }
    }
    if std::env::args().any(|a| a == "sweep") {
        sweep(&fleet, &settings);
    }
}

fn sweep(fleet: &[(String, Vec<WorkloadGroup>)], settings: &RecommenderSettings) {
    println!("\nCPU: percentile × headroom (requests only, memory as balanced)");
    header();
    for percentile in [90.0, 95.0, 99.0] {
        for headroom in [1.0, 1.1, 1.15, 1.2, 1.3, 1.5] {
            let mut p = presets::fleet_default();
            p.cpu.percentile = percentile;
            p.cpu.headroom_coefficient = headroom;
            line(
                &format!("p{percentile} × {headroom}"),
                &run(fleet, &p, settings),
            );
        }
    }
    println!("\nMemory: headroom × limit ratio (CPU as balanced)");
    header();
    for headroom in [1.0, 1.1, 1.15, 1.2, 1.3] {
        for ratio in [1.0, 1.15, 1.3, 1.5, 2.0] {
            let mut p = presets::fleet_default();
            p.memory.headroom_coefficient = headroom;
            p.memory.limits_to_requests_ratio = ratio;
            line(
                &format!("×{headroom} lim ×{ratio}"),
                &run(fleet, &p, settings),
            );
        }
    }
}
