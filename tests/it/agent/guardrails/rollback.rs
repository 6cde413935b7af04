//! The health watch against the real API server. A memory decrease that makes the sim
//! OOM-kill the container is rolled back within the watch (the old values are live
//! again, the cooldown holds off the next attempt, `kerf_actions_total` counts it);
//! restarts and CPU throttling (the kubelet's counters) cross their thresholds too, the
//! throttling rollback restoring the HPA's target with the values; a rollback the API
//! refuses is `failed RollbackError`; with the hub unreachable during the watch the
//! rollback still happens and its event arrives once the hub is back; and a cluster
//! paused and frozen during the watch is rolled back all the same (a pause or a freeze
//! holds new changes, never the undoing of a harmful one).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use kerf::agent::http_hub::HttpHub;
use kerf::agent::state::Phase;
use kerf::cluster::{Resources, WorkloadKey};
use serde_json::{json, Value};
use tokio::net::{TcpListener, TcpStream};

use super::super::world::{deployment, drive, ready, res, World};
use super::{actions_total, freeze_deployments, hpa, hpas, kinds, of, one, pair, workload};

/// Waits until a pod of `key` was OOM-killed (so the agent's next look sees it before
/// it decides anything else).
pub(super) async fn oom_killed(w: &World, key: &WorkloadKey) {
    crate::support::eventually(
        "an OOM kill",
        std::time::Duration::from_secs(60),
        || async {
            super::super::world::pods(w, key)
                .await
                .iter()
                .any(|p| {
                    p.status("app")
                        .and_then(|s| s.last_termination.as_ref())
                        .is_some_and(|t| t.reason == "OOMKilled")
                })
                .then_some(())
        },
    )
    .await;
}

pub(super) fn rolled_back(a: &super::super::world::TestAgent, key: &WorkloadKey) -> bool {
    a.state(key)
        .is_some_and(|s| s.phase == Phase::RolledBack && s.operation.is_none())
}

/// Every pod runs with `want` again (status), after the kubelet actuated it.
pub(super) async fn live_again(w: &World, key: &WorkloadKey, n: usize, want: Resources) {
    crate::support::eventually(
        "the old values live again",
        crate::support::secs(30),
        async || {
            let p = ready(w, key, n).await;
            let live: Vec<_> = p
                .iter()
                .map(|p| p.status("app").and_then(|s| s.resources))
                .collect();
            if live.iter().all(|r| *r == Some(want)) {
                Ok(())
            } else {
                Err(live)
            }
        },
    )
    .await;
}

/// The (type, reason) pairs of `name`'s events without the `skipped
/// NoSignificantChange` a pass reports when it finds the applied values live before the
/// watch has seen what it counts (the contract's one report after every change; whether
/// it comes first depends on timing).
fn kinds_around_the_watch(events: &[Value], name: &str) -> Vec<(String, String)> {
    kinds(&of(events, name))
        .into_iter()
        .filter(|k| *k != pair("skipped", "NoSignificantChange"))
        .collect()
}

/// A 2-replica `web` using 300 Mi under 512 Mi, in `auto-patch`, recommended down to
/// 256 Mi (which the sim OOM-kills): the world, the workload, the values before and the
/// recommendation's id.
pub(super) async fn a_memory_decrease_that_will_oom(
    tag: &str,
) -> (World, WorkloadKey, Resources, String) {
    let w = World::now(tag, 4000, 8192).await;
    let base = res(500, 1000, 512, 512);
    let key = w
        .create(&deployment("web", 2, base).using(50.0, 300.0))
        .await;
    ready(&w, &key, 2).await;
    w.policy("auto", json!({})).await;
    let rec = w.recommend(&key, res(500, 1000, 256, 256)).await;
    (w, key, base, rec)
}

#[tokio::test]
async fn an_oom_after_a_memory_decrease_is_rolled_back_and_the_cooldown_holds() {
    let (w, key, base, rec) = a_memory_decrease_that_will_oom("guard-rollback-oom").await;
    let mut agent = w.agent().await;
    drive(&mut agent, "applied", |a| {
        a.state(&key).is_some_and(|s| s.watch.is_some())
    })
    .await;
    oom_killed(&w, &key).await;
    drive(&mut agent, "rolled back", |a| rolled_back(a, &key)).await;
    live_again(&w, &key, 2, base).await;
    // The next attempt waits for the cooldown.
    w.recommend(&key, res(500, 1000, 384, 384)).await;
    for _ in 0..3 {
        agent.pass().await;
    }
    w.deliver(&agent).await;
    let events = w.audit().await;
    let got = kinds_around_the_watch(&events, "web");
    assert_eq!(
        got,
        [
            pair("applied", "RecommendationApplied"),
            pair("rolled_back", "OOMKills"),
            pair("blocked", "Cooldown")
        ]
    );
    let e = one(&events, "web", "OOMKills");
    assert_eq!(e["strategy"], "in-place");
    assert_eq!(e["recommendationID"], rec.as_str());
    assert_eq!(e["details"]["watchDuration"], "30m");
    let kills: u32 = e["details"]["oomKills"]
        .as_str()
        .and_then(|k| k.parse().ok())
        .expect("oomKills");
    assert!(kills >= 1, "{e}");
    assert_eq!(
        e["containers"],
        json!([{ "name": "app",
                 "from": { "requests": { "memory": "256Mi" }, "limits": { "memory": "256Mi" } },
                 "to": { "requests": { "memory": "512Mi" }, "limits": { "memory": "512Mi" } } }])
    );
    assert_eq!(actions_total(&w, "rolled_back", "OOMKills").await, 1.0);
    let state = agent.state(&key).expect("state");
    assert!(state.watch.is_none());
    assert_eq!(
        state.rolled_back.as_ref().map(|r| r.reason),
        Some(kerf::wire::Reason::OOMKills)
    );
}

#[tokio::test]
async fn restarts_beyond_the_threshold_are_rolled_back() {
    let w = World::now("guard-rollback-restarts", 4000, 8192).await;
    let base = res(500, 1000, 512, 512);
    let key = w
        .create(&deployment("jobs", 1, base).using(50.0, 300.0))
        .await;
    ready(&w, &key, 1).await;
    w.policy(
        "auto",
        json!({ "guardrails": { "rollback": { "oomKills": 50, "restarts": 2, "watchDuration": "1h" } } }),
    )
    .await;
    w.recommend(&key, res(500, 1000, 256, 256)).await;
    let mut agent = w.agent().await;
    drive(&mut agent, "rolled back", |a| rolled_back(a, &key)).await;
    live_again(&w, &key, 1, base).await;
    w.deliver(&agent).await;
    let events = w.audit().await;
    let e = one(&events, "jobs", "Restarts");
    assert_eq!(e["type"], "rolled_back");
    assert_eq!(e["details"]["watchDuration"], "1h");
    let restarts: u32 = e["details"]["restarts"]
        .as_str()
        .and_then(|r| r.parse().ok())
        .expect("restarts");
    assert!(restarts >= 2, "{e}");
    assert_eq!(actions_total(&w, "rolled_back", "Restarts").await, 1.0);
}

#[tokio::test]
async fn throttling_after_a_cpu_decrease_rolls_back_the_values_and_the_hpa() {
    let w = World::now("guard-rollback-cpu", 4000, 8192).await;
    // Wants 400m: unthrottled under 1000m, throttled about half the time under 200m.
    let base = res(500, 1000, 256, 512);
    let key = w
        .create(&deployment("api", 2, base).using(400.0, 100.0))
        .await;
    ready(&w, &key, 2).await;
    hpa(&w, "api", 40).await;
    w.policy("auto", json!({})).await;
    w.recommend(&key, res(200, 200, 256, 512)).await;
    let mut agent = w.agent().await;
    drive(&mut agent, "applied", |a| {
        a.state(&key).is_some_and(|s| s.watch.is_some())
    })
    .await;
    // 500m → 200m: the HPA's target followed (40 % × 500 / 200).
    assert_eq!(hpas(&w).await[0].metrics[0].target_utilization, Some(100));
    drive(&mut agent, "rolled back", |a| rolled_back(a, &key)).await;
    live_again(&w, &key, 2, base).await;
    assert_eq!(hpas(&w).await[0].metrics[0].target_utilization, Some(40));
    w.deliver(&agent).await;
    let events = w.audit().await;
    let e = one(&events, "api", "Throttling");
    assert_eq!(e["type"], "rolled_back");
    let ratio: f64 = e["details"]["throttlingRatio"]
        .as_str()
        .and_then(|r| r.parse().ok())
        .expect("ratio");
    assert!(ratio > 0.25, "{e}");
    assert_eq!(e["details"]["hpa"], "api");
    assert_eq!(e["details"]["hpaTargetTo"], "40");
}

#[tokio::test]
async fn a_rollback_the_api_refuses_is_failed_rollback_error() {
    let w = World::now("guard-rollback-error", 4000, 8192).await;
    let base = res(500, 1000, 512, 512);
    let key = w
        .create(&deployment("web", 2, base).using(50.0, 300.0))
        .await;
    ready(&w, &key, 2).await;
    w.policy("auto", json!({ "apply": { "strategy": "rollout" } }))
        .await;
    let smaller = res(500, 1000, 256, 256);
    w.recommend(&key, smaller).await;
    let mut agent = w.agent().await;
    drive(&mut agent, "applied", |a| {
        a.state(&key).is_some_and(|s| s.watch.is_some())
    })
    .await;
    // A policy engine freezes the Deployment before the agent looks again; by then the
    // new pods are OOM-killed.
    freeze_deployments(&w, &key).await;
    oom_killed(&w, &key).await;
    drive(&mut agent, "the rollback failed", |a| {
        a.state(&key).is_some_and(|s| s.phase == Phase::Failed)
    })
    .await;
    w.deliver(&agent).await;
    let events = w.audit().await;
    let got = kinds_around_the_watch(&events, "web");
    assert_eq!(
        got,
        [
            pair("applied", "RecommendationApplied"),
            pair("failed", "RollbackError")
        ]
    );
    let e = one(&events, "web", "RollbackError");
    assert!(
        e["message"]
            .as_str()
            .is_some_and(|m| m.contains("frozen by the change board")),
        "{e}"
    );
    // The template keeps the values the API would not let kerf restore.
    assert_eq!(workload(&w, &key).await.containers[0].resources, smaller);
}

/// A loopback gate in front of the hub: closed, it cuts the connections it relays and
/// refuses new ones outright, as when the hub's process is stopped.
struct Gate {
    url: String,
    open: Arc<AtomicBool>,
    relays: Arc<Mutex<Vec<tokio::task::JoinHandle<()>>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Gate {
    async fn start(upstream: &str) -> Gate {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let target = upstream.trim_start_matches("http://").to_string();
        let open = Arc::new(AtomicBool::new(true));
        let relays: Arc<Mutex<Vec<tokio::task::JoinHandle<()>>>> = Arc::default();
        let (flag, list) = (open.clone(), relays.clone());
        let task = tokio::spawn(async move {
            while let Ok((mut client, _)) = listener.accept().await {
                if !flag.load(Ordering::SeqCst) {
                    drop(client);
                    continue;
                }
                let target = target.clone();
                let relay = tokio::spawn(async move {
                    if let Ok(mut server) = TcpStream::connect(&target).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                    }
                });
                list.lock().unwrap_or_else(|p| p.into_inner()).push(relay);
            }
        });
        Gate {
            url,
            open,
            relays,
            task,
        }
    }

    fn close(&self) {
        self.open.store(false, Ordering::SeqCst);
        for r in self
            .relays
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .drain(..)
        {
            r.abort();
        }
    }
}

impl Drop for Gate {
    fn drop(&mut self) {
        self.close();
        self.task.abort();
    }
}

#[tokio::test]
async fn with_the_hub_away_during_the_watch_the_rollback_still_happens() {
    let (w, key, base, _) = a_memory_decrease_that_will_oom("guard-rollback-away").await;
    let gate = Gate::start(&w.hub.base).await;
    let hub = HttpHub::new(
        &gate.url,
        &w.cluster,
        w.hub.agent.clone(),
        None,
        std::time::Duration::from_secs(5),
    )
    .expect("hub client");
    let hub = Arc::new(hub);
    let mut agent = w.agent_with(hub.clone()).await;
    // The change goes live while the hub answers, and its event is delivered.
    let mut applied = false;
    for _ in 0..200 {
        if agent.state(&key).is_some_and(|s| s.watch.is_some()) {
            applied = true;
            break;
        }
        if agent.busy() {
            agent.advance_all().await;
        } else {
            agent.pass().await;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(applied, "the change went live");
    oom_killed(&w, &key).await;
    let flushed = agent.outbox().flush(hub.as_ref()).await;
    assert!(matches!(
        flushed,
        kerf::agent::outbox::Flushed::Empty { .. }
    ));
    // The hub goes away: the watch goes on, the rollback happens, nothing is delivered.
    gate.close();
    let mut done = false;
    for _ in 0..300 {
        agent.pass().await;
        if agent
            .state(&key)
            .is_some_and(|s| s.phase == Phase::RolledBack && s.operation.is_none())
        {
            done = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(done, "rolled back with the hub away");
    live_again(&w, &key, 2, base).await;
    // One more pass without the hub: it says so (nothing new is applied).
    agent.pass().await;
    let flushed = agent.outbox().flush(hub.as_ref()).await;
    assert!(
        matches!(flushed, kerf::agent::outbox::Flushed::Stopped(_)),
        "{flushed:?}"
    );
    let away: Vec<Value> = w.audit().await;
    assert_eq!(
        kinds(&of(&away, "web")),
        [pair("applied", "RecommendationApplied")],
        "nothing arrived while the hub was away"
    );
    // Back: the buffered events arrive, each once.
    gate.open.store(true, Ordering::SeqCst);
    let flushed = agent.outbox().flush(hub.as_ref()).await;
    assert!(
        matches!(flushed, kerf::agent::outbox::Flushed::Empty { .. }),
        "{flushed:?}"
    );
    let events = w.audit().await;
    let mine = of(&events, "web");
    let got = kinds(&mine);
    let n = |k: (String, String)| got.iter().filter(|g| **g == k).count();
    assert_eq!(n(pair("applied", "RecommendationApplied")), 1, "{got:?}");
    assert_eq!(n(pair("rolled_back", "OOMKills")), 1, "{got:?}");
    // Reported once before the rollback (if a pass decided while the watch had not
    // yet crossed) and once after it: a rollback starts the reporting over.
    let away = n(pair("blocked", "HubUnreachable"));
    assert!((1..=2).contains(&away), "{got:?}");
    assert_eq!(got.len(), 2 + away, "nothing else: {got:?}");
    let mut ids: Vec<&str> = mine.iter().filter_map(|e| e["id"].as_str()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), mine.len(), "each stored once");
}

#[tokio::test]
async fn a_cluster_paused_and_frozen_during_the_watch_is_still_rolled_back() {
    let (w, key, base, _) = a_memory_decrease_that_will_oom("guard-rollback-paused").await;
    let mut agent = w.agent().await;
    drive(&mut agent, "applied", |a| {
        a.state(&key).is_some_and(|s| s.watch.is_some())
    })
    .await;
    // The change is live and watched; the operator pauses and freezes the cluster.
    w.cluster_action("POST", "pause", json!({ "reason": "incident" }))
        .await;
    w.cluster_action(
        "PUT",
        "freeze",
        json!({ "enabled": true, "reason": "release week" }),
    )
    .await;
    oom_killed(&w, &key).await;
    drive(&mut agent, "rolled back while paused and frozen", |a| {
        rolled_back(a, &key)
    })
    .await;
    live_again(&w, &key, 2, base).await;
    // The next pass finds the cluster still paused and says so.
    agent.pass().await;
    w.deliver(&agent).await;
    let events = w.audit().await;
    let got = kinds(&of(&events, "web"));
    let n = |k: (String, String)| got.iter().filter(|g| **g == k).count();
    assert_eq!(n(pair("applied", "RecommendationApplied")), 1, "{got:?}");
    assert_eq!(n(pair("rolled_back", "OOMKills")), 1, "{got:?}");
    // The agent saw the pause (the rollback ran despite it, not before it).
    assert!(n(pair("blocked", "Paused")) >= 1, "{got:?}");
    // Nothing but the change, its undoing, and the holds the pause reports.
    assert!(
        got.iter().all(|k| [
            pair("applied", "RecommendationApplied"),
            pair("rolled_back", "OOMKills"),
            pair("skipped", "NoSignificantChange"),
            pair("blocked", "Paused"),
        ]
        .contains(k)),
        "{got:?}"
    );
    let e = one(&events, "web", "OOMKills");
    assert_eq!(
        e["containers"][0]["to"]["requests"]["memory"], "512Mi",
        "{e}"
    );
}
