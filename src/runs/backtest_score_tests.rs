use super::*;
use crate::analysis::{
    ContainerObservation, OomKill, ResourceObservation, Sample, SampleKind, Series, Target,
};

const MIB: f64 = 1024.0 * 1024.0;

fn series(id: &str, kind: SampleKind, points: &[(i64, f64)]) -> Series {
    Series {
        id: id.into(),
        pod_uid: format!("pod-{id}"),
        workload_uid: "w".into(),
        release: "r".into(),
        kind,
        samples: points
            .iter()
            .map(|(t, v)| Sample {
                timestamp: *t,
                value: *v,
            })
            .collect(),
    }
}

fn container(cpu: Vec<Series>, memory: Vec<Series>, kills: Vec<OomKill>) -> ContainerObservation {
    ContainerObservation {
        target: Target {
            container: "app".into(),
            ..Target::default()
        },
        cpu: ResourceObservation {
            series: cpu,
            ..ResourceObservation::default()
        },
        memory: ResourceObservation {
            series: memory,
            ..ResourceObservation::default()
        },
        oom_kills: kills,
        ..ContainerObservation::default()
    }
}

fn under(cpu: (Option<f64>, Option<f64>), memory: (Option<f64>, Option<f64>)) -> ContainerValues {
    let v = |(request, limit)| Values { request, limit };
    ContainerValues {
        name: "app".into(),
        cpu: Change {
            current: Values::default(),
            recommended: v(cpu),
        },
        memory: Change {
            current: Values::default(),
            recommended: v(memory),
        },
    }
}

#[test]
fn cpu_counters_become_rates_scored_against_the_request_and_the_limit() {
    // 60 s steps; rates 100, 300, 100, 600 millicores after the first sample.
    let counter = series(
        "a",
        SampleKind::CpuCounterSeconds,
        &[
            (0, 0.0),
            (60_000, 6.0),
            (120_000, 24.0),
            (180_000, 30.0),
            (240_000, 66.0),
        ],
    );
    let c = container(vec![counter], Vec::new(), Vec::new());
    let counts = score(
        &c,
        &under((Some(200.0), Some(500.0)), (None, None)),
        0,
        240_000,
    );
    assert_eq!(counts.cpu_samples, 4);
    assert_eq!(counts.cpu_above_request, 2);
    assert_eq!(counts.cpu_above_limit, 1);
    assert_eq!(counts.cpu_above_request_share(), Some(0.5));
    // Only samples after the start of the scored window count.
    let later = score(
        &c,
        &under((Some(200.0), None), (None, None)),
        120_000,
        240_000,
    );
    assert_eq!(
        (
            later.cpu_samples,
            later.cpu_above_request,
            later.cpu_above_limit
        ),
        (2, 1, 0)
    );
}

#[test]
fn a_lifetime_that_reaches_the_limit_is_one_would_be_oom_kill() {
    let up_down = series(
        "m",
        SampleKind::Gauge,
        &[
            (60_000, 100.0 * MIB),
            (120_000, 300.0 * MIB),
            (180_000, 310.0 * MIB),
            (240_000, 90.0 * MIB),
            (300_000, 400.0 * MIB),
        ],
    );
    let c = container(Vec::new(), vec![up_down], Vec::new());
    let counts = score(
        &c,
        &under((None, None), (Some(200.0 * MIB), Some(256.0 * MIB))),
        0,
        300_000,
    );
    assert_eq!(counts.memory_samples, 5);
    assert_eq!(counts.memory_above_request, 3);
    // Killed at 300 MiB: what the restarted container would have done is not recorded.
    assert_eq!(counts.would_be_oom_kills, 1);
    let other = series("n", SampleKind::Gauge, &[(60_000, 260.0 * MIB)]);
    let two = container(
        Vec::new(),
        vec![c.memory.series[0].clone(), other],
        Vec::new(),
    );
    let both = score(
        &two,
        &under((None, None), (Some(200.0 * MIB), Some(256.0 * MIB))),
        0,
        300_000,
    );
    assert_eq!(both.would_be_oom_kills, 2);
    // Without a limit nothing is killed.
    let free = score(
        &c,
        &under((None, None), (Some(200.0 * MIB), None)),
        0,
        300_000,
    );
    assert_eq!(free.would_be_oom_kills, 0);
}

#[test]
fn a_recorded_kill_counts_when_the_limit_it_hit_is_no_lower_than_the_recommended_one() {
    let kill = |ts: i64, limit: f64| OomKill {
        id: format!("k{ts}"),
        pod_uid: "pod-x".into(),
        workload_uid: "w".into(),
        release: "r".into(),
        timestamp: ts,
        memory_limit_bytes: limit,
    };
    let flat = series(
        "x",
        SampleKind::Gauge,
        &[(60_000, 100.0 * MIB), (120_000, 120.0 * MIB)],
    );
    let c = container(
        Vec::new(),
        vec![flat],
        vec![
            kill(90_000, 256.0 * MIB),
            kill(100_000, 0.0),
            kill(10_000_000, 256.0 * MIB),
        ],
    );
    let lower = score(
        &c,
        &under((None, None), (None, Some(200.0 * MIB))),
        0,
        200_000,
    );
    // Both kills in the window: one at a higher limit, one at an unknown one.
    assert_eq!((lower.recorded_oom_kills, lower.would_be_oom_kills), (2, 2));
    let higher = score(
        &c,
        &under((None, None), (None, Some(384.0 * MIB))),
        0,
        200_000,
    );
    // Above the 256 MiB it was killed at: not shown to fail (the unknown one still counts).
    assert_eq!(
        (higher.recorded_oom_kills, higher.would_be_oom_kills),
        (2, 1)
    );
}

#[test]
fn a_kill_right_after_an_excursion_of_its_pod_is_that_excursion() {
    let climb = series(
        "y",
        SampleKind::Gauge,
        &[(60_000, 100.0 * MIB), (120_000, 250.0 * MIB)],
    );
    let kill = OomKill {
        id: "k".into(),
        pod_uid: "pod-y".into(),
        workload_uid: "w".into(),
        release: "r".into(),
        timestamp: 150_000,
        memory_limit_bytes: 256.0 * MIB,
    };
    let c = container(Vec::new(), vec![climb], vec![kill]);
    let counts = score(
        &c,
        &under((None, None), (None, Some(200.0 * MIB))),
        0,
        200_000,
    );
    assert_eq!(
        (counts.recorded_oom_kills, counts.would_be_oom_kills),
        (1, 1)
    );
}
