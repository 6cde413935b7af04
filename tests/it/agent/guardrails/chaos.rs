//! Chaos: 50 workloads in `auto-patch` across the guardrail shapes (plain in place, by
//! rollout, with a coordinated HPA, OOM-killed after the change, throttled after the
//! change, single replicas a resize would restart, a fixed-heap JVM, Python in place),
//! the agent killed at seeded random points and started again 10 times. In the end no
//! resource of any workload has values that are neither its old nor its recommended
//! ones, every rollback happened and was reported, and no decision was stored twice.

use std::collections::BTreeMap;
use std::time::Duration;

use kerf::cluster::kube::KubeCluster;
use kerf::cluster::{Cluster, Resources, WorkloadKey};
use kerf::server::in_process::InProcessHub;
use kerf::sim::shape::Rng;
use serde_json::{json, Value};

use super::super::world::{deployment, res, Spec, World};
use super::hpa;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Plain,
    Rollout,
    Hpa,
    Oom,
    Throttle,
    Solo,
    Jvm,
    Python,
}

/// (shape, how many).
const FLEET: [(Shape, usize); 8] = [
    (Shape::Plain, 10),
    (Shape::Rollout, 6),
    (Shape::Hpa, 5),
    (Shape::Oom, 8),
    (Shape::Throttle, 6),
    (Shape::Solo, 5),
    (Shape::Jvm, 5),
    (Shape::Python, 5),
];

const OLD: fn() -> Resources = || res(500, 1000, 512, 512);

/// What each shape is recommended.
fn recommended(shape: Shape) -> Resources {
    match shape {
        Shape::Throttle => res(200, 200, 512, 512),
        Shape::Oom => res(500, 1000, 256, 256),
        _ => res(250, 500, 400, 400),
    }
}

fn name(shape: Shape, i: usize) -> &'static str {
    let prefix = match shape {
        Shape::Plain => "plain",
        Shape::Rollout => "ro",
        Shape::Hpa => "hpa",
        Shape::Oom => "oom",
        Shape::Throttle => "hot",
        Shape::Solo => "solo",
        Shape::Jvm => "jvm",
        Shape::Python => "py",
    };
    Box::leak(format!("{prefix}-{i}").into_boxed_str())
}

fn spec(shape: Shape, name: &'static str) -> Spec {
    let replicas = if shape == Shape::Solo { 1 } else { 2 };
    let base = deployment(name, replicas, OLD());
    match shape {
        Shape::Oom => base.using(50.0, 300.0),
        Shape::Throttle => base.using(400.0, 100.0),
        Shape::Solo => base.container(json!({
            "resizePolicy": [{ "resourceName": "memory", "restartPolicy": "RestartContainer" }],
        })),
        Shape::Jvm => base.container(json!({
            "env": [{ "name": "JAVA_TOOL_OPTIONS", "value": "-Xmx384m" }],
        })),
        Shape::Python => base.container(json!({ "image": "python:3.12-slim" })),
        _ => base.using(50.0, 100.0),
    }
}

/// Per resource, the values a workload of `shape` must end with.
fn expected(shape: Shape) -> (Resources, &'static str) {
    let (old, rec) = (OLD(), recommended(shape));
    let mix = |cpu: Resources, mem: Resources| Resources {
        cpu_request: cpu.cpu_request,
        cpu_limit: cpu.cpu_limit,
        memory_request: mem.memory_request,
        memory_limit: mem.memory_limit,
    };
    match shape {
        Shape::Plain | Shape::Rollout | Shape::Hpa => (rec, "applied"),
        Shape::Oom | Shape::Throttle => (old, "rolled back"),
        Shape::Solo => (old, "held"),
        Shape::Jvm | Shape::Python => (mix(rec, old), "cpu only"),
    }
}

/// Each resource of `got` is the old or the recommended value.
fn old_or_recommended(got: Resources, shape: Shape) -> bool {
    let (old, rec) = (OLD(), recommended(shape));
    let cpu = |r: Resources| (r.cpu_request, r.cpu_limit);
    let mem = |r: Resources| (r.memory_request, r.memory_limit);
    (cpu(got) == cpu(old) || cpu(got) == cpu(rec)) && (mem(got) == mem(old) || mem(got) == mem(rec))
}

/// The agent's loop as a task: passes, advances, delivers; killed by aborting it.
fn run(
    mut agent: super::super::world::TestAgent,
    hub: InProcessHub,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            agent.pass().await;
            agent.advance_all().await;
            let _ = agent.outbox().flush(&hub).await;
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
}

#[tokio::test]
async fn fifty_workloads_survive_ten_agent_kills_with_no_stray_value_or_lost_rollback() {
    let w = World::now("guard-chaos", 64_000, 65_536).await;
    let mut fleet: Vec<(Shape, WorkloadKey)> = Vec::new();
    for (shape, n) in FLEET {
        for i in 0..n {
            let key = w.create(&spec(shape, name(shape, i))).await;
            if shape == Shape::Hpa {
                hpa(&w, &key.name, 40).await;
            }
            fleet.push((shape, key));
        }
    }
    w.policy("auto", json!({})).await;
    w.policy(
        "by-rollout",
        json!({ "priority": 20, "selector": { "names": ["ro-*"] }, "apply": { "strategy": "rollout" } }),
    )
    .await;
    for (shape, key) in &fleet {
        w.recommend(key, recommended(*shape)).await;
    }
    let hub = || InProcessHub::new(w.hub.state.clone(), &w.cluster);
    let mut rng = Rng::new(13, "chaos");
    let mut task = run(w.agent().await, hub());
    for kill in 0..10 {
        let after = 300 + (rng.unit() * 2500.0) as u64;
        tokio::time::sleep(Duration::from_millis(after)).await;
        task.abort();
        let _ = task.await;
        eprintln!("chaos: agent killed ({}), after {after} ms", kill + 1);
        task = run(w.agent().await, hub());
    }
    // Let the last agent finish: every workload reaches its end.
    let admin = KubeCluster::new(w.admin.clone());
    let mut pending: Vec<String> = Vec::new();
    let every = Duration::from_millis(500);
    let what = "every workload at its end";
    let settled =
        crate::support::wait::within_every(what, Duration::from_secs(240), every, async || {
            // Fifty workloads keep the API server busy: a slow answer is asked again.
            let Ok(snap) = admin.snapshot(std::slice::from_ref(&w.ns.name)).await else {
                return Err(Vec::new());
            };
            let events = w.audit().await;
            pending = fleet
                .iter()
                .filter(|(shape, key)| !at_end(*shape, key, &snap, &events))
                .map(|(_, key)| key.name.clone())
                .collect();
            if pending.is_empty() {
                Ok((snap, events))
            } else {
                Err(pending.clone())
            }
        })
        .await;
    let settled = match settled {
        Ok(settled) => settled,
        Err(timed_out) => {
            let records = admin
                .records(std::slice::from_ref(&w.ns.name))
                .await
                .unwrap_or_default();
            for r in records
                .iter()
                .filter(|r| pending.iter().any(|p| r.name.ends_with(p.as_str())))
            {
                eprintln!(
                    "{}: {} {} watch={} op={}",
                    r.name,
                    r.status["phase"],
                    r.status["message"],
                    r.status["agent"]["watch"],
                    r.status["agent"]["operation"]
                );
            }
            panic!("not at their end: {pending:?} ({timed_out})");
        }
    };
    task.abort();
    let (snap, events) = settled;
    // Every resource is old or recommended, on the template and on every pod.
    for (shape, key) in &fleet {
        let w = snap
            .workloads
            .iter()
            .find(|x| &x.key == key)
            .expect("workload");
        assert!(
            old_or_recommended(w.containers[0].resources, *shape),
            "{key}: template {:?}",
            w.containers[0].resources
        );
        for p in snap.pods_of(key).filter(|p| !p.deleting) {
            let r = p.status("app").and_then(|s| s.resources).expect("status");
            assert!(old_or_recommended(r, *shape), "{}: {r:?}", p.pod.name);
        }
    }
    // No decision stored twice: one applied per workload that changed, one rollback
    // per rolled-back one, each skip or block once.
    let mut count: BTreeMap<(String, String, String, String), usize> = BTreeMap::new();
    let mut ids = std::collections::BTreeSet::new();
    for e in &events {
        assert!(
            ids.insert(e["id"].as_str().unwrap_or_default().to_string()),
            "{e}"
        );
        let f = |k: &str| e[k].as_str().unwrap_or_default().to_string();
        let key = (
            e["workload"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            f("type"),
            f("reason"),
            e["resources"].to_string(),
        );
        *count.entry(key).or_default() += 1;
    }
    let twice: Vec<_> = count.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "stored more than once: {twice:?}");
}

/// True when `key` of `shape` shows its end: values (template or pods) and events.
fn at_end(
    shape: Shape,
    key: &WorkloadKey,
    snap: &kerf::cluster::Snapshot,
    events: &[Value],
) -> bool {
    let (want, _) = expected(shape);
    let mine: Vec<&Value> = events
        .iter()
        .filter(|e| e["workload"]["name"] == key.name.as_str())
        .collect();
    let has = |t: &str, r: &str| mine.iter().any(|e| e["type"] == t && e["reason"] == r);
    let pods: Vec<_> = snap.pods_of(key).filter(|p| !p.deleting).collect();
    let running = !pods.is_empty()
        && pods
            .iter()
            .all(|p| p.status("app").and_then(|s| s.resources) == Some(want));
    let reported = match shape {
        Shape::Plain | Shape::Rollout | Shape::Hpa => has("applied", "RecommendationApplied"),
        Shape::Oom => has("rolled_back", "OOMKills"),
        Shape::Throttle => has("rolled_back", "Throttling"),
        Shape::Solo => has("blocked", "SingleReplicaUnsafe"),
        Shape::Jvm => has("blocked", "JVMFixedHeap") && has("applied", "RecommendationApplied"),
        Shape::Python => {
            has("blocked", "RestartPolicyRequired") && has("applied", "RecommendationApplied")
        }
    };
    let expected_replicas = if shape == Shape::Solo { 1 } else { 2 };
    running && reported && pods.len() == expected_replicas
}
