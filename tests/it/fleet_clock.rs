//! Fleet behaviour that depends on time, proven with a manual clock through the real
//! router on a bound port (real SQLite file, real HTTP): auto-resume at `resumeAt`, and
//! each readiness transition recording exactly one `ReadinessChanged`.

use kerf::fleet::{datasource_check, ticker};
use kerf::readiness;
use kerf::runs::{Runs, Trigger};
use serde_json::{json, Value};

use crate::support::hub::{at, hub, Hub, T0};

#[tokio::test(flavor = "multi_thread")]
async fn a_pause_with_resume_at_is_lifted_by_the_ticker_exactly_when_the_clock_reaches_it() {
    let h = hub("prod", false).await;
    let body = json!({"reason": "incident 42", "resumeAt": at(T0 + 60_000)});
    let (s, v) = h
        .as_token(&h.admin)
        .call("POST", "/v1/clusters/prod/pause", Some(body))
        .await;
    assert_eq!(s, 200, "{v}");
    let before = h.config("prod").await;
    assert_eq!(before["flags"]["paused"], true);
    assert_eq!(before["flags"]["pauseScope"], "cluster");
    assert_eq!(before["pause"]["resumeAt"], at(T0 + 60_000));
    assert_eq!(before["serverTime"], at(T0));

    h.clock.set(T0 + 59_999);
    assert!(ticker::tick(&h.store, &h.runs).await.resumed.is_empty());
    assert_eq!(
        h.config("prod").await["flags"]["paused"],
        true,
        "a millisecond early"
    );
    assert!(h.changes("AutomationResumed").await.is_empty());

    h.clock.set(T0 + 60_000);
    let report = ticker::tick(&h.store, &h.runs).await;
    assert_eq!(report.resumed, vec!["prod".to_string()]);
    let after = h.config("prod").await;
    assert_eq!(after["flags"]["paused"], false);
    assert_eq!(after["flags"]["pauseScope"], Value::Null);
    let resumed = h.changes("AutomationResumed").await;
    assert_eq!(resumed.len(), 1, "{resumed:?}");
    let r = &resumed[0];
    assert_eq!(r["actor"]["type"], "system");
    assert_eq!(
        r["target"],
        json!({"type": "automation", "id": "prod", "name": "prod"})
    );
    assert_eq!(r["before"]["paused"], true);
    assert_eq!(r["before"]["reason"], "incident 42");
    assert_eq!(r["after"]["paused"], false);
    assert_eq!(r["reason"], "resumeAt reached");

    h.clock.advance(3_600_000);
    assert!(ticker::tick(&h.store, &h.runs).await.resumed.is_empty());
    assert_eq!(
        h.changes("AutomationResumed").await.len(),
        1,
        "resumed once"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fleet_pause_covers_every_cluster_and_wins_over_a_cluster_pause() {
    let h = hub("prod", false).await;
    let cluster = json!({"reason": "one cluster"});
    let fleet = json!({"reason": "everything", "resumeAt": at(T0 + 1_000)});
    assert_eq!(
        h.as_token(&h.admin)
            .call("POST", "/v1/clusters/prod/pause", Some(cluster))
            .await
            .0,
        200
    );
    assert_eq!(
        h.as_token(&h.admin)
            .call("POST", "/v1/fleet/pause", Some(fleet))
            .await
            .0,
        200
    );
    let c = h.config("prod").await;
    assert_eq!(
        (
            c["flags"]["paused"].clone(),
            c["flags"]["pauseScope"].clone()
        ),
        (json!(true), json!("fleet"))
    );
    h.clock.advance(1_000);
    assert_eq!(
        ticker::tick(&h.store, &h.runs).await.resumed,
        vec!["*".to_string()]
    );
    let c = h.config("prod").await;
    assert_eq!(
        c["flags"]["pauseScope"], "cluster",
        "the cluster's own pause stays"
    );
    let (s, _) = h
        .as_token(&h.admin)
        .call("POST", "/v1/fleet/resume", Some(json!({})))
        .await;
    assert_eq!(s, 409, "the fleet is no longer paused");
}

/// The readiness state now and the number of `ReadinessChanged` rows so far.
async fn readiness_now(h: &Hub) -> (String, usize) {
    let (s, v) = h
        .as_token(&h.admin)
        .call("GET", "/v1/clusters/demo-east/readiness", None)
        .await;
    assert_eq!(s, 200, "{v}");
    let n = h.changes("ReadinessChanged").await.len();
    (v["state"].as_str().expect("state").to_string(), n)
}

async fn last_change(h: &Hub) -> Value {
    h.changes("ReadinessChanged").await[0].clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn each_readiness_transition_records_exactly_one_readiness_changed() {
    // `demo-east` is a demo-fleet cluster: `ok` reads the demo fleet, `broken` has no datasource.
    let h = hub("demo-east", true).await;
    let ok = h.runs.clone();
    let broken = Runs::new(h.store.clone(), h.clock.clone());
    assert_eq!(readiness_now(&h).await, ("not-ready".into(), 0));

    // The agent reports, but the datasource was never checked: still not ready, no row.
    assert_eq!(h.heartbeat("demo-east").await["state"], "not-ready");
    assert_eq!(readiness_now(&h).await, ("not-ready".into(), 0));
    datasource_check::check_datasource(&h.store, &ok, "demo-east")
        .await
        .expect("check");
    assert_eq!(readiness_now(&h).await, ("ready".into(), 1));
    let c = last_change(&h).await;
    assert_eq!(
        (c["before"].clone(), c["after"].clone()),
        (json!({"state": "not-ready"}), json!({"state": "ready"}))
    );
    assert_eq!(c["actor"]["type"], "system");
    assert_eq!(
        c["target"],
        json!({"type": "readiness", "id": "demo-east", "name": "demo-east"})
    );

    // Heartbeat missing: 3 loop intervals (90 s) pass without one.
    h.clock.advance(90_000);
    ticker::tick(&h.store, &ok).await;
    assert_eq!(
        readiness_now(&h).await,
        ("ready".into(), 1),
        "90 s is still fresh"
    );
    h.clock.advance(1);
    ticker::tick(&h.store, &ok).await;
    ticker::tick(&h.store, &ok).await;
    assert_eq!(readiness_now(&h).await, ("not-ready".into(), 2));
    assert!(last_change(&h).await["reason"]
        .as_str()
        .unwrap_or("")
        .contains("heartbeat is stale"));
    h.heartbeat("demo-east").await;
    h.heartbeat("demo-east").await;
    assert_eq!(readiness_now(&h).await, ("ready".into(), 3), "recovery");

    // Datasource failing, then recovering.
    datasource_check::check_datasource(&h.store, &broken, "demo-east")
        .await
        .expect("check");
    datasource_check::check_datasource(&h.store, &broken, "demo-east")
        .await
        .expect("check");
    assert_eq!(readiness_now(&h).await, ("not-ready".into(), 4));
    assert!(last_change(&h).await["reason"]
        .as_str()
        .unwrap_or("")
        .contains("datasource unreachable"));
    datasource_check::check_datasource(&h.store, &ok, "demo-east")
        .await
        .expect("check");
    assert_eq!(readiness_now(&h).await, ("ready".into(), 5));

    // The last run failing, then a run succeeding.
    let failed = broken
        .run_to_end("demo-east", Trigger::Manual)
        .await
        .expect("run");
    assert_eq!(failed.status.as_str(), "failed");
    assert_eq!(readiness_now(&h).await, ("degraded".into(), 6));
    let c = last_change(&h).await;
    assert_eq!(
        (c["before"].clone(), c["after"].clone()),
        (json!({"state": "ready"}), json!({"state": "degraded"}))
    );
    let good = ok
        .run_to_end("demo-east", Trigger::Manual)
        .await
        .expect("run");
    assert_eq!(good.status.as_str(), "succeeded", "{:?}", good.errors);
    assert_eq!(readiness_now(&h).await, ("ready".into(), 7));
    let (s, list) = h.as_token(&h.admin).call("GET", "/v1/clusters", None).await;
    assert_eq!(s, 200);
    assert_eq!(list["items"][0]["readiness"]["state"], "ready");
}

#[tokio::test(flavor = "multi_thread")]
async fn concurrent_evaluations_record_a_change_once() {
    let h = hub("demo-east", true).await;
    h.heartbeat("demo-east").await;
    datasource_check::check_datasource(&h.store, &h.runs, "demo-east")
        .await
        .expect("check");
    h.clock.advance(120_000);
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let store = h.store.clone();
        let now = kerf::clock::Clock::now_ms(h.clock.as_ref());
        tasks.push(tokio::spawn(async move {
            readiness::evaluate(&store, now, "demo-east").await
        }));
    }
    let mut changed = 0;
    for t in tasks {
        if t.await.expect("join").expect("evaluate").1 {
            changed += 1;
        }
    }
    assert_eq!(changed, 1);
    assert_eq!(readiness_now(&h).await, ("not-ready".into(), 2));
}
