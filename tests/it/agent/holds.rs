//! Done means 4: a pause, a freeze and a closed maintenance window make zero changes
//! to the cluster (read from the API server), each reported once; the deferred change
//! rolls out when its window opens.

use serde_json::{json, Value};

use super::world::{deployment, drive, res, World};
use crate::support::hub::at;

/// 2027-01-16T03:00:00Z, the Saturday after the hub's start (2027-01-15T08:00Z).
const WINDOW_OPENS: i64 = 1_800_068_400_000;

#[tokio::test]
async fn pause_freeze_and_a_closed_window_change_nothing() {
    let w = World::new("agent-holds", 4000, 8192).await;
    let web = w
        .create(&deployment("web", 2, res(500, 1000, 256, 512)))
        .await;
    let batch = w
        .create(&deployment("batch", 1, res(500, 1000, 256, 512)))
        .await;
    w.policy("auto", json!({})).await;
    w.policy(
        "nightly",
        json!({ "priority": 20, "selector": { "names": ["batch"] },
                "apply": { "strategy": "deferred",
                           "maintenanceWindows": [{ "cron": "0 3 * * 6", "duration": "1h", "timezone": "UTC" }] } }),
    )
    .await;
    w.recommend(&web, res(250, 500, 200, 400)).await;
    w.recommend(&batch, res(250, 500, 200, 400)).await;
    // Let the pods come up before taking the picture.
    w.pods_running(3).await;
    let before = w.workload_objects().await;
    let mut agent = w.agent().await;

    w.cluster_action("POST", "pause", json!({ "reason": "incident" }))
        .await;
    for _ in 0..3 {
        agent.pass().await;
    }
    assert_eq!(
        w.workload_objects().await,
        before,
        "paused: nothing changed"
    );

    w.cluster_action("POST", "resume", json!({})).await;
    w.cluster_action(
        "PUT",
        "freeze",
        json!({ "enabled": true, "reason": "release week" }),
    )
    .await;
    for _ in 0..3 {
        agent.pass().await;
    }
    assert_eq!(
        w.workload_objects().await,
        before,
        "frozen: nothing changed"
    );

    // Unfrozen, `web` gets a freeze window of its own policy; `batch` waits for its
    // maintenance window.
    w.cluster_action("PUT", "freeze", json!({ "enabled": false }))
        .await;
    let now = kerf::clock::Clock::now_ms(w.hub.clock.as_ref());
    w.policy(
        "code-freeze",
        json!({ "priority": 30, "selector": { "names": ["web"] },
                "apply": { "freezeWindows": [{ "start": at(now - 3_600_000), "end": at(now + 86_400_000) }] } }),
    )
    .await;
    for _ in 0..3 {
        agent.pass().await;
    }
    assert_eq!(
        w.workload_objects().await,
        before,
        "windows: nothing changed"
    );
    w.deliver(&agent).await;
    let events = w.audit().await;
    let of = |name: &str| -> Vec<(String, String)> {
        events
            .iter()
            .filter(|e| e["workload"]["name"] == name)
            .map(|e| {
                (
                    e["type"].as_str().unwrap_or("").into(),
                    e["reason"].as_str().unwrap_or("").into(),
                )
            })
            .collect()
    };
    let blocked = |r: &str| ("blocked".to_string(), r.to_string());
    // The new policy changed web's effective policy: its freeze is reported again, once.
    assert_eq!(
        of("web"),
        [
            blocked("Paused"),
            blocked("FreezeWindow"),
            blocked("FreezeWindow")
        ]
    );
    let scopes: Vec<&Value> = events
        .iter()
        .filter(|e| e["workload"]["name"] == "web" && e["reason"] == "FreezeWindow")
        .map(|e| &e["details"]["scope"])
        .collect();
    assert_eq!(scopes, [&json!("cluster"), &json!("policy")]);
    assert_eq!(
        of("batch"),
        [
            blocked("Paused"),
            blocked("FreezeWindow"),
            blocked("OutsideMaintenanceWindow")
        ]
    );
    let detail = |reason: &str, key: &str| -> Value {
        events
            .iter()
            .find(|e| e["reason"] == reason)
            .map(|e| e["details"][key].clone())
            .unwrap_or(Value::Null)
    };
    assert_eq!(detail("Paused", "pauseScope"), "cluster");
    assert_eq!(
        detail("OutsideMaintenanceWindow", "nextWindow"),
        at(WINDOW_OPENS).as_str()
    );

    // The window opens: the queued change rolls out.
    w.hub.clock.set(WINDOW_OPENS + 600_000);
    drive(&mut agent, "batch applied in its window", |a| {
        a.state(&batch)
            .is_some_and(|s| s.phase == kerf::agent::state::Phase::Applied)
    })
    .await;
    w.deliver(&agent).await;
    let applied: Vec<Value> = w
        .audit()
        .await
        .into_iter()
        .filter(|e| e["type"] == "applied")
        .collect();
    assert_eq!(applied.len(), 1, "{applied:#?}");
    assert_eq!(applied[0]["workload"]["name"], "batch");
    assert_eq!(applied[0]["strategy"], "rollout");
    assert!(applied[0]["details"]["maintenanceWindow"]
        .as_str()
        .is_some_and(|w| w.starts_with(&at(WINDOW_OPENS))));
}
