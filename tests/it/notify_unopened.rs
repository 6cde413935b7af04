//! A notification channel whose sealed secret no longer opens (the data dir's
//! `secret.key` replaced, the record changed outside kerf): each of its deliveries is
//! booked as a failed attempt on the ordinary retry schedule until `max_attempts`, the
//! log says so once per minute however many attempts and deliveries there are, nothing
//! reaches its receiver, and the other channels are not held back. (Before, the
//! dispatcher re-opened the channel every 0.5 s forever, logging an error each time,
//! and the deliveries stayed pending at zero attempts.)

use serde_json::{json, Value};

use crate::support::receiver::{Receiver, Shape};
use crate::support::{eventually, secs, uuid, DataDir, Kerf};

const ATTEMPTS: i64 = 3;
const LOG_LINE: &str = "cannot open the notification channel";
const SIGNING: &str = "unopened-signing-secret-0123456789";

fn applied(name: &str) -> Value {
    json!([{
        "id": uuid(), "type": "applied", "time": "2026-11-04T10:15:00Z",
        "workload": {"namespace": "shop", "kind": "Deployment", "name": name},
        "reason": "RecommendationApplied", "strategy": "in-place",
        "containers": [{"name": "app", "from": {"requests": {"cpu": "500m"}}, "to": {"requests": {"cpu": "250m"}}}]
    }])
}

/// A webhook channel to `rx` hearing `applied`; returns its id.
async fn channel(kerf: &Kerf, admin: &str, name: &str, rx: &Receiver) -> i64 {
    let body = json!({"name": name, "type": "webhook", "url": rx.url, "signingSecret": SIGNING, "defaultRules": false});
    let path = "/v1/notifications/channels";
    let (status, ch) = kerf.api(admin).call("POST", path, Some(body)).await;
    assert_eq!(status, 201, "{ch}");
    let id = ch["id"].as_i64().expect("id");
    let rule = json!({"channelId": id, "name": name, "events": ["applied"]});
    let path = "/v1/notifications/rules";
    let (status, r) = kerf.api(admin).call("POST", path, Some(rule)).await;
    assert_eq!(status, 201, "{r}");
    id
}

/// Polls channel `id`'s delivery log until every one of `n` deliveries is settled
/// (delivered or failed); returns them.
async fn settled(kerf: &Kerf, admin: &str, id: i64, n: usize) -> Vec<Value> {
    let path = format!("/v1/notifications/deliveries?channelId={id}");
    let what = format!("channel {id}'s {n} deliveries settled");
    let api = kerf.api(admin);
    eventually(&what, secs(30), async || {
        let (_, page) = api.call("GET", &path, None).await;
        let items = page["items"].as_array().cloned().unwrap_or_default();
        let done = |d: &Value| d["status"] == "delivered" || d["status"] == "failed";
        if items.len() == n && items.iter().all(done) {
            Ok(items)
        } else {
            Err(items)
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_channel_whose_secret_does_not_open_fails_on_the_retry_schedule_and_logs_once() {
    let data = DataDir::new();
    let agent = data.create_cluster("prod");
    let admin = data.admin_token();
    let attempts = ATTEMPTS.to_string();
    let env = [
        ("KERF_NOTIFICATIONS__RETRY_BASE_MS", "100"),
        ("KERF_NOTIFICATIONS__GROUP_WINDOW_MS", "50"),
        ("KERF_NOTIFICATIONS__MAX_ATTEMPTS", attempts.as_str()),
    ];
    let kerf = Kerf::builder(data.path()).envs(&env).start();
    let broken_rx =
        Receiver::start(Shape::Webhook, "hooks/brokenpathsecret0001", Some(SIGNING)).await;
    let fine_rx = Receiver::start(Shape::Webhook, "hooks/finepathsecret0002", Some(SIGNING)).await;
    let broken = channel(&kerf, &admin, "broken", &broken_rx).await;
    let fine = channel(&kerf, &admin, "fine", &fine_rx).await;
    assert_eq!(kerf.stop(), Some(0));
    // Someone with write access to the database moves the other channel's sealed
    // secrets onto this one: bound to another record, they do not open here.
    let conn = rusqlite::Connection::open(data.path().join("kerf.db")).expect("open");
    conn.execute(
        "UPDATE notification_channels SET secrets_sealed =
            (SELECT secrets_sealed FROM notification_channels WHERE id = ?1) WHERE id = ?2",
        [fine, broken],
    )
    .expect("move the blob");
    drop(conn);
    let kerf = Kerf::builder(data.path()).envs(&env).start();
    // Two events a while apart: the second finds the first's sender gone, so the
    // log's limit has to outlive a sender.
    for (round, name) in ["catalog", "checkout"].into_iter().enumerate() {
        let (status, body) = kerf.api(&agent).post_events("prod", &applied(name)).await;
        assert_eq!(status, 200, "{body}");
        let log = settled(&kerf, &admin, broken, round + 1).await;
        for d in &log {
            assert_eq!(d["status"], "failed", "{d:#}");
            assert_eq!(d["attempts"], ATTEMPTS, "{d:#}");
            let error = d["lastError"].as_str().unwrap_or("");
            assert!(error.contains("the channel cannot be opened"), "{d:#}");
        }
        let fine_log = settled(&kerf, &admin, fine, round + 1).await;
        assert!(
            fine_log.iter().all(|d| d["status"] == "delivered"),
            "{fine_log:#?}"
        );
    }
    assert_eq!(
        broken_rx.attempts(),
        0,
        "nothing reached the broken channel's receiver"
    );
    assert_eq!(fine_rx.accepted().len(), 2);
    let logs = kerf.log_text();
    let lines = logs.matches(LOG_LINE).count();
    assert_eq!(
        lines, 1,
        "{lines} lines say the channel cannot be opened:\n{logs}"
    );
    let metrics = kerf.metrics_text().await;
    let failed = metrics
        .lines()
        .find(|l| {
            l.starts_with("kerf_notifications_sent_total")
                && l.contains("channel_type=\"webhook\"")
                && l.contains("outcome=\"failed\"")
        })
        .unwrap_or("");
    assert!(
        failed.ends_with(" 2"),
        "failed deliveries counted: {failed:?}\n{metrics}"
    );
    // Saving the channel mends it, once its secrets are given again (they cannot be kept).
    let path = format!("/v1/notifications/channels/{broken}");
    let bare = json!({"name": "broken", "type": "webhook"});
    let (status, body) = kerf.api(&admin).call("PUT", &path, Some(bare)).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["error"]["details"]["field"], "url", "{body}");
    let whole = json!({"name": "broken", "type": "webhook", "url": broken_rx.url, "signingSecret": SIGNING});
    let (status, body) = kerf.api(&admin).call("PUT", &path, Some(whole)).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = kerf.api(&agent).post_events("prod", &applied("cart")).await;
    assert_eq!(status, 200, "{body}");
    let log = settled(&kerf, &admin, broken, 3).await;
    assert_eq!(
        log.iter().filter(|d| d["status"] == "delivered").count(),
        1,
        "{log:#?}"
    );
    assert_eq!(broken_rx.accepted().len(), 1);
    assert_eq!(kerf.stop(), Some(0));
}
