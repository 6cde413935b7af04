//! Property tests of the analysis engine: determinism, independence from series,
//! container and sample order, no input mutation, and duplicate samples counted once.

use kerf::analysis::{
    analyze, json, ContainerObservation, CurrentIdentity, Input, Inventory, OomKill, Policy,
    ResourceObservation, Sample, SampleKind, Series, Signal, Target,
};
use proptest::prelude::*;

const T0: i64 = 1_800_000_000_000;
const EVAL: i64 = T0 + 3_600_000;

fn signal(value: f64) -> Signal {
    Signal {
        available: true,
        unset: false,
        value,
        timestamp: EVAL,
    }
}

fn series(id: &str, kind: SampleKind, values: &[f64]) -> Series {
    let mut total = 0.0;
    let samples = values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            total += v;
            let value = if kind == SampleKind::Gauge { *v } else { total };
            Sample {
                timestamp: T0 + i as i64 * 60_000,
                value,
            }
        })
        .collect();
    Series {
        id: id.into(),
        pod_uid: id.into(),
        workload_uid: "uid".into(),
        release: "A".into(),
        kind,
        samples,
    }
}

fn container(name: &str, cpu: Vec<Series>, memory: Vec<Series>, oom: bool) -> ContainerObservation {
    let replicas = cpu.len().max(memory.len()) as i64;
    ContainerObservation {
        target: Target {
            namespace: "ns".into(),
            kind: "Deployment".into(),
            name: name.into(),
            container: "app".into(),
            workload_uid: "uid".into(),
            release: "A".into(),
        },
        identity: CurrentIdentity {
            available: true,
            workload_uid: "uid".into(),
            release: "A".into(),
            timestamp: EVAL,
            release_started_at: T0,
            ..CurrentIdentity::default()
        },
        inventory: Inventory {
            available: true,
            timestamp: EVAL,
            eligible: replicas,
            observed: replicas,
            excluded: 0,
        },
        cpu: ResourceObservation {
            series: cpu,
            current_request: signal(500.0),
            current_limit: signal(2000.0),
        },
        memory: ResourceObservation {
            series: memory,
            current_request: signal(300.0 * 1048576.0),
            current_limit: signal(600.0 * 1048576.0),
        },
        oom_kills: if oom {
            vec![OomKill {
                id: "k".into(),
                pod_uid: "p0".into(),
                workload_uid: "uid".into(),
                release: "A".into(),
                timestamp: T0 + 1_800_000,
                memory_limit_bytes: 0.0,
            }]
        } else {
            Vec::new()
        },
        previous_releases: Vec::new(),
    }
}

/// Per container: replica value lists for CPU and memory, counter or gauge, OOM or not.
fn arb_input() -> impl Strategy<Value = Input> {
    let replica = prop::collection::vec(0.0f64..500.0, 1..70);
    let one = (
        prop::collection::vec(replica.clone(), 1..4),
        prop::collection::vec(replica, 1..4),
        any::<bool>(),
        any::<bool>(),
    );
    prop::collection::vec(one, 1..4).prop_map(|containers| {
        let containers = containers
            .into_iter()
            .enumerate()
            .map(|(i, (cpu, mem, counter, oom))| {
                let kind = if counter {
                    SampleKind::CpuCounterSeconds
                } else {
                    SampleKind::Gauge
                };
                let cpu = cpu
                    .iter()
                    .enumerate()
                    .map(|(j, v)| series(&format!("p{j}"), kind, v))
                    .collect();
                let mem = mem
                    .iter()
                    .enumerate()
                    .map(|(j, v)| {
                        let bytes: Vec<f64> = v.iter().map(|x| x * 1048576.0).collect();
                        series(&format!("p{j}"), SampleKind::Gauge, &bytes)
                    })
                    .collect();
                container(&format!("c{i}"), cpu, mem, oom)
            })
            .collect();
        Input {
            schema_version: "resource-analysis-input/v2".into(),
            evaluation_time: EVAL,
            window_start: T0,
            containers,
        }
    })
}

fn policy() -> Policy {
    let mut p = Policy::default();
    p.evidence.minimum_history_seconds = 600;
    p.evidence.minimum_samples = 10;
    p
}

fn encoded(input: &Input) -> String {
    let out = analyze(input, &policy()).map(|o| json::to_vec_compact(&o).expect("encodes"));
    match out {
        Ok(bytes) => String::from_utf8(bytes).expect("utf8"),
        Err(e) => format!("error: {e}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn analysis_is_deterministic_and_does_not_mutate_its_input(input in arb_input()) {
        let before = input.clone();
        let first = encoded(&input);
        prop_assert_eq!(&input, &before);
        prop_assert_eq!(first, encoded(&input));
    }

    #[test]
    fn output_is_independent_of_container_series_and_sample_order(input in arb_input(), seed in any::<u64>()) {
        let mut shuffled = input.clone();
        shuffled.containers.reverse();
        for (i, c) in shuffled.containers.iter_mut().enumerate() {
            for s in c.cpu.series.iter_mut().chain(c.memory.series.iter_mut()) {
                s.samples.reverse();
                let n = s.samples.len();
                if n > 2 {
                    s.samples.swap(0, (seed as usize + i) % n);
                }
            }
            c.cpu.series.reverse();
            let len = c.memory.series.len().max(1);
            c.memory.series.rotate_left(seed as usize % len);
        }
        prop_assert_eq!(encoded(&input), encoded(&shuffled));
    }

    #[test]
    fn duplicate_samples_are_counted_once(input in arb_input()) {
        let mut doubled = input.clone();
        for c in doubled.containers.iter_mut() {
            for s in c.cpu.series.iter_mut().chain(c.memory.series.iter_mut()) {
                let copy = s.samples.clone();
                s.samples.extend(copy);
            }
            let kills = c.oom_kills.clone();
            c.oom_kills.extend(kills);
        }
        prop_assert_eq!(encoded(&input), encoded(&doubled));
    }

    #[test]
    fn a_json_round_trip_of_the_input_changes_nothing(input in arb_input()) {
        let text = serde_json::to_vec(&input).expect("encodes");
        let back: Input = serde_json::from_slice(&text).expect("decodes");
        prop_assert_eq!(encoded(&input), encoded(&back));
    }
}
