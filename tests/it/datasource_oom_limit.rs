//! An OOM kill carries the memory limit in force at the kill, not the pod's last one:
//! a pod resized in place from 256 MiB to 512 MiB, OOM-killed once before the resize
//! and once after, against a real Prometheus. And when kube-state-metrics does not
//! export the termination timestamp, the restarts seen while the last termination
//! reason is `OOMKilled` bound each kill to one step, marked as inferred.

use kerf::analysis::{analyze, default_policy, Input, Resource, INPUT_SCHEMA_VERSION};
use kerf::datasource::prometheus::ClientAuth;
use kerf::datasource::Source;

use crate::support::prometheus::{OpenMetrics, Prometheus};
use crate::support::series::{scope, source, END, START, WINDOW};

const MIN: i64 = 60_000;
const MIB: f64 = 1_048_576.0;

fn resized_pod(with_timestamp: bool) -> OpenMetrics {
    let mut om = OpenMetrics::new();
    let every = |from: i64, to: i64| (from..=to).step_by(30_000);
    let (early, resize, late) = (END - 120 * MIN, END - 60 * MIN, END - 30 * MIN);
    let dep = [
        ("cluster", "oom"),
        ("namespace", "db"),
        ("deployment", "cache"),
    ];
    for t in every(START - 60 * MIN, END) {
        om.sample(
            "kube_deployment_created",
            &dep,
            ((START - 1_440 * MIN) / 1000) as f64,
            t,
        );
    }
    for t in every(START - 60 * MIN, END) {
        om.sample("kube_deployment_spec_replicas", &dep, 1.0, t);
    }
    let rs = [
        ("cluster", "oom"),
        ("namespace", "db"),
        ("replicaset", "cache-r1"),
        ("owner_kind", "Deployment"),
        ("owner_name", "cache"),
    ];
    for t in every(START - 60 * MIN, END) {
        om.sample("kube_replicaset_owner", &rs, 1.0, t);
    }
    let pod = [
        ("cluster", "oom"),
        ("namespace", "db"),
        ("pod", "cache-r1-aaaaa"),
        ("uid", "cache-uid"),
    ];
    let mut owner = pod.to_vec();
    owner.extend([
        ("owner_kind", "ReplicaSet"),
        ("owner_name", "cache-r1"),
        ("owner_is_controller", "true"),
    ]);
    for t in every(START - 60 * MIN, END) {
        om.sample("kube_pod_owner", &owner, 1.0, t);
    }
    for t in every(START - 60 * MIN, END) {
        om.sample(
            "kube_pod_created",
            &pod,
            ((START - 60 * MIN) / 1000) as f64,
            t,
        );
    }
    let mut limit = pod.to_vec();
    limit.extend([("container", "app"), ("resource", "memory")]);
    for t in every(START - 60 * MIN, END) {
        let value = if t < resize { 256.0 } else { 512.0 };
        om.sample("kube_pod_container_resource_limits", &limit, value * MIB, t);
    }
    let mut ids = pod.to_vec();
    ids.push(("container", "app"));
    let mut reason = ids.clone();
    reason.push(("reason", "OOMKilled"));
    for t in every(early, END) {
        om.sample(
            "kube_pod_container_status_last_terminated_reason",
            &reason,
            1.0,
            t,
        );
    }
    for t in every(early, END).filter(|_| with_timestamp) {
        let last = if t < late { early } else { late };
        om.sample(
            "kube_pod_container_status_last_terminated_timestamp",
            &ids,
            (last / 1000) as f64,
            t,
        );
    }
    // Killed a few seconds before a scrape: the restart shows at the next one.
    for t in every(START - 60 * MIN, END) {
        let restarts = [early, late].iter().filter(|k| t >= **k).count();
        om.sample(
            "kube_pod_container_status_restarts_total",
            &ids,
            restarts as f64,
            t,
        );
    }
    let mut usage = pod[..3].to_vec();
    usage.extend([("container", "app"), ("id", "/c1")]);
    for (i, t) in every(START - 60 * MIN, END).enumerate() {
        om.sample(
            "container_cpu_usage_seconds_total",
            &usage,
            i as f64 * 3.0,
            t,
        );
    }
    for t in every(START - 60 * MIN, END) {
        om.sample("container_memory_working_set_bytes", &usage, 240.0 * MIB, t);
    }
    om
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_oom_kill_carries_the_memory_limit_at_its_time() {
    let prom = Prometheus::with_data(&resized_pod(true), false);
    let collected = source(&prom.url, ClientAuth::None)
        .collect(&scope("oom"), WINDOW)
        .await
        .expect("collect");
    let cache = collected
        .input
        .containers
        .iter()
        .find(|c| c.target.name == "cache")
        .expect("the resized workload");
    let kills: Vec<(i64, f64)> = cache
        .oom_kills
        .iter()
        .map(|k| ((END - k.timestamp) / MIN, k.memory_limit_bytes / MIB))
        .collect();
    assert_eq!(
        kills,
        [(120, 256.0), (30, 512.0)],
        "(minutes before the end, MiB): the kill before the resize keeps 256 MiB"
    );
    assert_eq!(
        cache.memory.current_limit.value / MIB,
        512.0,
        "today's limit is 512 MiB"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_termination_timestamp_kills_are_inferred_from_restarts_and_marked() {
    let prom = Prometheus::with_data(&resized_pod(false), false);
    let collected = source(&prom.url, ClientAuth::None)
        .collect(&scope("oom"), WINDOW)
        .await
        .expect("collect");
    let cache = collected
        .input
        .containers
        .iter()
        .find(|c| c.target.name == "cache")
        .expect("the resized workload");
    let kills: Vec<(i64, f64, bool)> = cache
        .oom_kills
        .iter()
        .map(|k| {
            let after_ms = k.timestamp
                - (END
                    - if k.memory_limit_bytes < 300.0 * MIB {
                        120
                    } else {
                        30
                    } * MIN);
            assert!(
                (0..=60_000).contains(&after_ms),
                "{} ms after the kill",
                after_ms
            );
            (
                (END - k.timestamp + 59_999) / MIN,
                k.memory_limit_bytes / MIB,
                k.id.ends_with("/inferred"),
            )
        })
        .collect();
    assert_eq!(
        kills,
        [(120, 256.0, true), (30, 512.0, true)],
        "(minutes before the end, MiB, inferred): each within one step of its kill"
    );
    // The engine takes the OOM floor (1.5 × the 512 MiB limit), not the peak × 1.2.
    let input = Input {
        schema_version: INPUT_SCHEMA_VERSION.into(),
        evaluation_time: WINDOW.end_ms,
        window_start: WINDOW.start_ms,
        containers: vec![cache.clone()],
    };
    let out = analyze(&input, &default_policy()).expect("analyze");
    let memory = out
        .results
        .iter()
        .find(|r| r.resource == Resource::Memory)
        .expect("memory");
    let adj = memory.oom_adjustment.as_ref().expect("an OOM floor");
    assert_eq!(adj.oom_request_floor_bytes / MIB, 768.0);
    assert!(memory
        .evidence
        .oom_kills
        .iter()
        .all(|k| k.id.ends_with("/inferred")));
}
