//! SIGKILL during a burst of 1,000 events: after the restart every event that matched a
//! rule reaches the receiver, none twice, and none that matched no rule. The guarantee
//! (docs/contracts/notifications.md): deliveries are recorded in the transaction that
//! moves the dispatcher's cursor, so no event is lost or recorded twice; a message in
//! flight at the kill is sent again under the same X-Kerf-Delivery id, which receivers
//! use to drop the repeat — this receiver counts events per distinct delivery id, and
//! the raw repeats are bounded by what one sender can have in flight.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::watch;

use crate::support::api::send_until_acked;
use crate::support::receiver::{event_ids, Receiver, Shape};
use crate::support::wait::eventually_every;
use crate::support::{client, secs, uuid, DataDir, Kerf};

const SECRET: &str = "burst-signing-secret-0123456789";
const EVENTS: usize = 1000;
const BATCH: usize = 20;
const MATCHING: [&str; 4] = ["applied", "rolled_back", "blocked", "failed"];

fn event(i: usize) -> Value {
    let (kind, reason) = match i % 5 {
        0 => ("applied", "RecommendationApplied"),
        1 => ("rolled_back", "Restarts"),
        2 => ("blocked", "Cooldown"),
        3 => ("failed", "ApplyError"),
        _ => ("skipped", "ModeAudit"),
    };
    let mut e = json!({
        "id": uuid(), "type": kind, "reason": reason, "time": "2026-11-04T10:15:00Z",
        "workload": {"namespace": format!("ns-{}", i % 7), "kind": "Deployment", "name": format!("w-{i}")},
    });
    if matches!(kind, "applied" | "rolled_back") {
        e["strategy"] = json!("rollout");
        e["containers"] = json!([{"name": "app", "from": {"requests": {"cpu": "1"}}, "to": {"requests": {"cpu": "500m"}}}]);
    }
    e
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigkill_during_a_burst_of_1000_events_loses_none_and_delivers_none_twice() {
    let data = DataDir::new();
    let agent = data.create_cluster("prod");
    let admin = data.admin_token();
    let env = [
        ("KERF_NOTIFICATIONS__RETRY_BASE_MS", "100"),
        ("KERF_NOTIFICATIONS__GROUP_WINDOW_MS", "100"),
        ("KERF_NOTIFICATIONS__MAX_PER_MINUTE", "100000"),
    ];
    let kerf = Kerf::builder(data.path()).envs(&env).start();
    let http = client();
    let rx = Receiver::start(Shape::Webhook, "hooks/burstpathsecret", Some(SECRET)).await;
    // Slow enough that a message is often in flight when the kill comes.
    rx.delay(30);
    let body = json!({"name": "burst", "type": "webhook", "url": rx.url, "signingSecret": SECRET, "defaultRules": false});
    let (status, ch) = kerf
        .api(&admin)
        .call("POST", "/v1/notifications/channels", Some(body))
        .await;
    assert_eq!(status, 201, "{ch}");
    let rule = json!({"channelId": ch["id"], "name": "burst", "events": MATCHING});
    assert_eq!(
        kerf.api(&admin)
            .call("POST", "/v1/notifications/rules", Some(rule))
            .await
            .0,
        201
    );

    let events: Vec<Value> = (0..EVENTS).map(event).collect();
    let matching: BTreeSet<String> = events
        .iter()
        .filter(|e| MATCHING.contains(&e["type"].as_str().unwrap_or("")))
        .map(|e| e["id"].as_str().expect("id").to_string())
        .collect();
    assert_eq!(matching.len(), 800);
    let (url_tx, url_rx) = watch::channel(kerf.url(""));
    let acked = Arc::new(AtomicUsize::new(0));
    let sender = {
        let (http, agent, acked, url_rx) =
            (http.clone(), agent.clone(), acked.clone(), url_rx.clone());
        let batches: Vec<Value> = events
            .chunks(BATCH)
            .map(|c| Value::Array(c.to_vec()))
            .collect();
        tokio::spawn(async move {
            for b in batches {
                send_until_acked(&http, &url_rx, &agent, &b).await;
                acked.fetch_add(1, Ordering::SeqCst);
            }
        })
    };
    eventually_every(
        "half the burst acknowledged and two deliveries",
        secs(60),
        Duration::from_millis(5),
        async || {
            let (n, accepted) = (acked.load(Ordering::SeqCst), rx.accepted().len());
            if n >= EVENTS / BATCH / 2 && accepted >= 2 {
                Ok(())
            } else {
                Err((n, accepted))
            }
        },
    )
    .await;
    let delivered_before = rx.event_counts().len();
    kerf.kill();
    assert!(
        delivered_before < matching.len(),
        "killed mid-burst ({delivered_before} delivered)"
    );
    let kerf = Kerf::builder(data.path()).envs(&env).start();
    url_tx.send(kerf.url("")).expect("sender listens");
    sender.await.expect("every batch acknowledged");

    rx.wait_until(
        Duration::from_secs(90),
        "every matching event after the restart",
        |_| rx.event_counts().len() >= matching.len(),
    )
    .await;
    let counts = rx.event_counts();
    let got: BTreeSet<String> = counts.keys().cloned().collect();
    assert_eq!(got, matching, "exactly the matching events arrived");
    let twice: Vec<_> = counts.iter().filter(|(_, n)| **n > 1).collect();
    assert!(
        twice.is_empty(),
        "events in two different deliveries: {twice:?}"
    );
    // Raw receipts: a delivery id seen more than once is the same message resent (the one
    // in flight at the kill), and one sender has at most one in flight.
    let mut by_delivery: HashMap<String, Vec<Vec<String>>> = HashMap::new();
    for r in rx.accepted() {
        by_delivery
            .entry(r.delivery.clone())
            .or_default()
            .push(event_ids(&r));
    }
    let repeats: usize = by_delivery.values().map(|v| v.len() - 1).sum();
    assert!(repeats <= 1, "{repeats} repeated receipts");
    assert!(
        by_delivery
            .values()
            .all(|v| v.iter().all(|ids| *ids == v[0])),
        "a repeat differs"
    );
    assert!(rx.faults().is_empty(), "{:?}", rx.faults());
    // The log agrees: every delivery delivered, their event ids disjoint and complete.
    let mut logged = BTreeSet::new();
    let mut next: Option<String> = None;
    loop {
        let q = next
            .as_ref()
            .map(|n| format!("&next={n}"))
            .unwrap_or_default();
        let (_, page) = kerf
            .api(&admin)
            .call(
                "GET",
                &format!("/v1/notifications/deliveries?limit=500{q}"),
                None,
            )
            .await;
        for d in page["items"].as_array().expect("items") {
            assert_eq!(d["status"], "delivered", "{d}");
            for id in d["eventIds"].as_array().expect("ids") {
                assert!(
                    logged.insert(id.as_str().expect("id").to_string()),
                    "{id} logged twice"
                );
            }
        }
        match page["next"].as_str() {
            Some(n) => next = Some(n.to_string()),
            None => break,
        }
    }
    assert_eq!(logged, matching);
    assert_eq!(kerf.stop(), Some(0));
}
