//! Chaos: 50 workloads in `auto-patch` across the guardrail shapes (plain in place, by
//! rollout, with a coordinated HPA, OOM-killed after the change, throttled after the
//! change, single replicas a resize would restart, a fixed-heap JVM, Python in place) on
//! five nodes, the agent killed at seeded random points and started again 10 times;
//! meanwhile three of the nodes are cordoned at random kills, and at one the
//! namespace's ResourceQuota is lowered to what it uses plus 300m of CPU, after which a
//! run recommends three rollout workloads more CPU than that leaves. In the end no
//! workload is left between its old and new values (each value the old or the
//! recommended one, and its pods agree unless a rollback the quota refused was reported
//! `failed`), no rollout is stalled without a `rolled_back` or `failed` event, every
//! applied change is live, the quota-blocked ones are held with their old values, and no
//! decision was stored twice. The counts are printed.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Node as KNode, ResourceQuota};
use kerf::cluster::kube::KubeCluster;
use kerf::cluster::{Cluster, Node, Resources, WorkloadKey};
use kerf::server::in_process::InProcessHub;
use kerf::sim::shape::Rng;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::{json, Value};

use super::super::world::{deployment, res, Spec, World};
use super::hpa;
use crate::support::kube::objects::node;

/// The nodes, and how many of them are cordoned during the run.
const NODES: usize = 5;
const CORDONED: usize = 3;
/// The rollout workloads recommended growth once the quota is lowered (`ro-3`..`ro-5`).
const GROWN_FROM: usize = 3;
/// CPU left in the quota when it is lowered, in millicores.
const QUOTA_ROOM: u64 = 300;
/// How far the hub's clock moves per look while the fleet settles, and at most: past
/// the stall bound twice (a stalled rollout, then its stalled rollback) and short of the
/// policy's cooldown (1 h).
const ADVANCE_MS: i64 = 30_000;
const ADVANCE_AT_MOST_MS: i64 = 40 * 60_000;

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

/// The growth recommended mid-run to `ro-3`..`ro-5`: 2 × 11.5 cores more plus a 12-core
/// surge pod, more than the quota can ever have left. Its room grows as the fleet's
/// shrinks finish (all of them free about 18 cores): a growth of 2 × 1.5 cores was once
/// held and, a pass later, rightly applied (CI).
const GROWN: fn() -> Resources = || res(12_000, 16_000, 512, 512);

/// Whether `key` is one of the rollout workloads grown mid-run.
fn grown(shape: Shape, key: &WorkloadKey) -> bool {
    shape == Shape::Rollout
        && key
            .name
            .strip_prefix("ro-")
            .and_then(|i| i.parse::<usize>().ok())
            .is_some_and(|i| i >= GROWN_FROM)
}

/// What `key` of `shape` is recommended.
fn recommended_for(shape: Shape, key: &WorkloadKey) -> Resources {
    if grown(shape, key) {
        GROWN()
    } else {
        recommended(shape)
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
fn old_or_recommended(got: Resources, rec: Resources) -> bool {
    let old = OLD();
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

/// The namespace's quota: all the room in the world until it is lowered.
async fn quota(w: &World) -> Api<ResourceQuota> {
    // Created before the workloads, and counted before they come.
    let api = Api::<ResourceQuota>::namespaced(w.admin.clone(), &w.ns.name);
    let q: ResourceQuota = serde_json::from_value(json!({
        "metadata": { "name": "team", "namespace": w.ns.name },
        "spec": { "hard": { "requests.cpu": "1000" } },
    }))
    .expect("quota");
    api.create(&PostParams::default(), &q)
        .await
        .expect("create quota");
    crate::support::eventually("the quota counted", Duration::from_secs(30), async || {
        api.get("team").await.ok()?.status?.used
    })
    .await;
    api
}

/// Lowers the quota to what it uses now plus [`QUOTA_ROOM`]; returns the new hard CPU.
async fn lower(api: &Api<ResourceQuota>) -> String {
    let used =
        crate::support::eventually("the quota counted", Duration::from_secs(30), async || {
            let q = api.get("team").await.ok()?;
            let used = q.status?.used?.get("requests.cpu")?.0.clone();
            kerf::cluster::quantity::cpu_millis(&used)
        })
        .await;
    let hard = kerf::cluster::quantity::format_cpu(used + QUOTA_ROOM);
    let patch = json!({ "spec": { "hard": { "requests.cpu": hard } } });
    api.patch("team", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("lower the quota");
    hard
}

/// Cordons node `name`, as `kubectl cordon` does.
async fn cordon(w: &World, name: &str) {
    let patch = json!({ "spec": { "unschedulable": true } });
    Api::<KNode>::all(w.admin.clone())
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("cordon");
}

fn nodes(ns: &str) -> Vec<Node> {
    (0..NODES)
        .map(|i| Node {
            name: format!("{ns}-node-{i}"),
            ..node(ns, 16_000, 16_384)
        })
        .collect()
}

#[tokio::test]
async fn fifty_workloads_survive_agent_kills_cordons_and_a_lowered_quota_with_nothing_stranded() {
    let w = World::now_with_nodes("guard-chaos", nodes).await;
    let quota = quota(&w).await;
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
    // Every pod runs before the chaos starts (the quota admits pods only once its
    // controller has counted the namespace).
    let admin = KubeCluster::new(w.admin.clone());
    crate::support::eventually("every pod running", Duration::from_secs(120), async || {
        let snap = admin
            .snapshot(std::slice::from_ref(&w.ns.name))
            .await
            .ok()?;
        let short: Vec<&str> = fleet
            .iter()
            .filter(|(_, key)| {
                let want = snap.workload(key).map_or(1, |w| w.replicas) as usize;
                snap.pods_of(key).filter(|p| p.ready).count() < want
            })
            .map(|(_, key)| key.name.as_str())
            .collect();
        short.is_empty().then_some(())
    })
    .await;
    w.policy("auto", json!({})).await;
    w.policy(
        "by-rollout",
        json!({ "priority": 20, "selector": { "names": ["ro-*"] }, "apply": { "strategy": "rollout" } }),
    )
    .await;
    for (shape, key) in fleet.iter().filter(|(s, k)| !grown(*s, k)) {
        w.recommend(key, recommended(*shape)).await;
    }
    let hub = || InProcessHub::new(w.hub.state.clone(), &w.cluster);
    let mut rng = Rng::new(13, "chaos");
    // Which kills also cordon a node (three distinct ones), and which node each.
    let mut cordon_at: Vec<usize> = Vec::new();
    while cordon_at.len() < CORDONED {
        let k = (rng.unit() * 10.0) as usize % 10;
        if !cordon_at.contains(&k) {
            cordon_at.push(k);
        }
    }
    let mut schedulable: Vec<usize> = (0..NODES).collect();
    let mut cordoned = Vec::new();
    let mut lowered = None;
    let mut task = run(w.agent().await, hub());
    for kill in 0..10 {
        let after = 300 + (rng.unit() * 2500.0) as u64;
        tokio::time::sleep(Duration::from_millis(after)).await;
        task.abort();
        let _ = task.await;
        eprintln!("chaos: agent killed ({}), after {after} ms", kill + 1);
        if cordon_at.contains(&kill) {
            let n = schedulable
                .remove((rng.unit() * schedulable.len() as f64) as usize % schedulable.len());
            let name = format!("{}-node-{n}", w.ns.name);
            cordon(&w, &name).await;
            eprintln!("chaos: {name} cordoned");
            cordoned.push(name);
        }
        if kill == 4 {
            let hard = lower(&quota).await;
            eprintln!("chaos: quota lowered to requests.cpu {hard}");
            // A run now recommends growth the quota has no room for.
            for (shape, key) in fleet.iter().filter(|(s, k)| grown(*s, k)) {
                w.recommend(key, recommended_for(*shape, key)).await;
            }
            lowered = Some(hard);
        }
        task = run(w.agent().await, hub());
    }
    // Let the last agent finish: every workload reaches its end.
    let mut pending: Vec<String> = Vec::new();
    let mut last_snap: Option<kerf::cluster::Snapshot> = None;
    let every = Duration::from_millis(500);
    let what = "every workload at its end";
    let mut advanced = 0;
    let settled =
        crate::support::wait::within_every(what, Duration::from_secs(240), every, async || {
            // Time passes for the agent (the hub's clock, which its watches read): a
            // rollout stalled by a cordon or the quota is rolled back once the stall
            // bound has passed, and a rollback that cannot progress fails. Short of the
            // cooldown, after which rolled-back changes would be tried again.
            if advanced < ADVANCE_AT_MOST_MS {
                w.hub.clock.advance(ADVANCE_MS);
                advanced += ADVANCE_MS;
            }
            // Fifty workloads keep the API server busy: a slow answer is asked again.
            let Ok(snap) = admin.snapshot(std::slice::from_ref(&w.ns.name)).await else {
                return Err(Vec::new());
            };
            last_snap = Some(snap.clone());
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
            if let Some(snap) = &last_snap {
                for (_, key) in fleet.iter().filter(|(_, k)| pending.contains(&k.name)) {
                    let wl = snap.workload(key);
                    let pods: Vec<String> = snap
                        .pods_of(key)
                        .map(|p| {
                            format!(
                                "{} ready={} deleting={} unschedulable={:?} {:?}",
                                p.pod.name,
                                p.ready,
                                p.deleting,
                                p.unschedulable,
                                p.status("app").and_then(|s| s.resources)
                            )
                        })
                        .collect();
                    eprintln!(
                        "{key}: template {:?} rolled out {:?} pods {pods:?}",
                        wl.map(|w| w.containers[0].resources),
                        wl.map(|w| (w.rolled_out(), &w.rollout)),
                    );
                    for e in w
                        .audit()
                        .await
                        .iter()
                        .filter(|e| e["workload"]["name"] == key.name.as_str())
                    {
                        eprintln!(
                            "  {} {} {} {}",
                            e["time"], e["type"], e["reason"], e["message"]
                        );
                    }
                }
            }
            panic!("not at their end: {pending:?} ({timed_out})");
        }
    };
    task.abort();
    let (snap, events) = settled;
    let mut ends: BTreeMap<&str, usize> = BTreeMap::new();
    for (shape, key) in &fleet {
        let rec = recommended_for(*shape, key);
        let wl = snap.workload(key).expect("workload");
        let mine: Vec<&Value> = events
            .iter()
            .filter(|e| e["workload"]["name"] == key.name.as_str())
            .collect();
        // A rollback the cluster would not let progress (the lowered quota refuses its
        // new pods) is reported failed, and notified; its pods keep what they run.
        let failed = mine.iter().any(|e| e["type"] == "failed");
        // Nothing between old and new: each value old or recommended, on the template
        // and on every pod, and the pods all agree (unless a rollback failed).
        let template = wl.containers[0].resources;
        assert!(
            old_or_recommended(template, rec),
            "{key}: template {template:?}"
        );
        let running: Vec<Resources> = snap
            .pods_of(key)
            .filter(|p| !p.deleting)
            .map(|p| p.status("app").and_then(|s| s.resources).expect("status"))
            .collect();
        assert!(
            running.iter().all(|r| old_or_recommended(*r, rec))
                && (failed || running.iter().all(|r| *r == running[0])),
            "{key}: pods {running:?}"
        );
        // No rollout stalled without a rollback or a failure reported.
        let rolled = failed || mine.iter().any(|e| e["type"] == "rolled_back");
        assert!(
            wl.rolled_out() || rolled,
            "{key}: stalled with nothing said ({:?})",
            wl.rollout
        );
        // The last change applied is live.
        let last = mine.iter().rev().find(|e| {
            ["applied", "rolled_back", "failed"].contains(&e["type"].as_str().unwrap_or_default())
        });
        if let Some(e) = last.filter(|e| e["type"] == "applied") {
            let to = live_values(e, running[0]);
            assert_eq!(running[0], to, "{key}: the applied change is live ({e})");
        }
        if failed {
            *ends.entry("rollback failed").or_default() += 1;
            continue;
        }
        *ends.entry(end_of(*shape, key, running[0])).or_default() += 1;
    }
    // No decision stored twice: one applied per workload that changed, one rollback
    // per rolled-back one, each skip or block once.
    let mut count: BTreeMap<(String, String, String, String), usize> = BTreeMap::new();
    let mut per_reason: BTreeMap<(String, String), usize> = BTreeMap::new();
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
        *per_reason.entry((f("type"), f("reason"))).or_default() += 1;
    }
    let twice: Vec<_> = count.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "stored more than once: {twice:?}");
    eprintln!(
        "chaos: 50 workloads, 10 agent kills, cordoned {cordoned:?}, quota lowered to requests.cpu {}",
        lowered.as_deref().unwrap_or("-")
    );
    eprintln!("chaos: workloads at their end: {ends:?}");
    eprintln!("chaos: events by type and reason: {per_reason:?}");
    assert_eq!(cordoned.len(), CORDONED);
}

/// The values an `applied` event says are live, over `running` (the resources it does
/// not name keep theirs).
fn live_values(e: &Value, running: Resources) -> Resources {
    let to = &e["containers"][0]["to"];
    let cpu = |v: &Value| v.as_str().and_then(kerf::cluster::quantity::cpu_millis);
    let mem = |v: &Value| v.as_str().and_then(kerf::cluster::quantity::memory_bytes);
    Resources {
        cpu_request: cpu(&to["requests"]["cpu"]).or(running.cpu_request),
        cpu_limit: cpu(&to["limits"]["cpu"]).or(running.cpu_limit),
        memory_request: mem(&to["requests"]["memory"]).or(running.memory_request),
        memory_limit: mem(&to["limits"]["memory"]).or(running.memory_limit),
    }
}

/// Where a workload ended, for the printed counts.
fn end_of(shape: Shape, key: &WorkloadKey, running: Resources) -> &'static str {
    if running == OLD() {
        "old values"
    } else if running == recommended_for(shape, key) {
        "recommended values"
    } else {
        "cpu recommended, memory kept"
    }
}

/// True when `key` of `shape` shows its end: values (pods) and events. The rollout
/// workloads may end applied, or held or rolled back by the cordons and the quota
/// (with their old values); the grown ones are held by the quota.
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
    let all_at = |v: Resources| {
        !pods.is_empty()
            && pods
                .iter()
                .all(|p| p.status("app").and_then(|s| s.resources) == Some(v))
    };
    let done = snap.workload(key).is_some_and(|w| w.rolled_out());
    // A rollback refused progress ends with `failed RollbackError`: nothing more
    // happens to the workload until someone acts.
    if has("failed", "RollbackError") {
        return true;
    }
    let expected_replicas = if shape == Shape::Solo { 1 } else { 2 };
    if pods.len() != expected_replicas {
        return false;
    }
    if grown(shape, key) {
        return all_at(OLD()) && has("blocked", "ResourceQuota");
    }
    let reported = match shape {
        Shape::Rollout => {
            let applied = has("applied", "RecommendationApplied");
            let back = mine
                .iter()
                .any(|e| e["type"] == "rolled_back" || e["type"] == "failed");
            let held = has("blocked", "ResourceQuota") || has("blocked", "NoFittingNode");
            return done
                && ((applied && !back && all_at(recommended(shape)))
                    || (back && all_at(OLD()))
                    || (held && !applied && all_at(OLD())));
        }
        Shape::Plain | Shape::Hpa => has("applied", "RecommendationApplied"),
        Shape::Oom => has("rolled_back", "OOMKills"),
        Shape::Throttle => has("rolled_back", "Throttling"),
        Shape::Solo => has("blocked", "SingleReplicaUnsafe"),
        Shape::Jvm => has("blocked", "JVMFixedHeap") && has("applied", "RecommendationApplied"),
        Shape::Python => {
            has("blocked", "RestartPolicyRequired") && has("applied", "RecommendationApplied")
        }
    };
    all_at(want) && reported && done
}
