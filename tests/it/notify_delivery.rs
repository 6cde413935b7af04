//! Notifications end to end against the real binary and real receivers on loopback:
//! events reach Slack-, Teams- and webhook-shaped receivers once, fast, signed; a
//! receiver that fails is retried until it takes the message once; one that hangs holds
//! back only its own channel; no secret shows in answers, logs, audit or the database.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::binary::LOCAL_RECEIVERS;
use crate::support::receiver::{Receiver, Shape};
use crate::support::{eventually, secs, uuid, DataDir, Kerf};

const WEBHOOK_SECRET: &str = "whsec-0123456789abcdef-do-not-leak";

fn applied(id: &str, name: &str) -> Value {
    json!({
        "id": id, "type": "applied", "time": "2026-11-04T10:15:00Z",
        "workload": {"namespace": "shop", "kind": "Deployment", "name": name},
        "reason": "RecommendationApplied", "strategy": "in-place",
        "containers": [{"name": "app", "from": {"requests": {"cpu": "500m"}}, "to": {"requests": {"cpu": "250m"}}}]
    })
}

fn rolled_back(id: &str, name: &str) -> Value {
    json!({
        "id": id, "type": "rolled_back", "time": "2026-11-04T10:20:00Z",
        "workload": {"namespace": "shop", "kind": "Deployment", "name": name},
        "reason": "OOMKills", "strategy": "in-place", "message": "2 OOM kills within 30m",
        "containers": [{"name": "app", "from": {"requests": {"memory": "256Mi"}}, "to": {"requests": {"memory": "512Mi"}}}]
    })
}

/// Creates a channel listening to `events`; returns its id.
async fn channel(kerf: &Kerf, admin: &str, body: Value, events: &[&str]) -> i64 {
    let (status, ch) = kerf
        .api(admin)
        .call("POST", "/v1/notifications/channels", Some(body))
        .await;
    assert_eq!(status, 201, "{ch}");
    let id = ch["id"].as_i64().expect("id");
    let rule = json!({"channelId": id, "name": "changes", "events": events});
    let (status, r) = kerf
        .api(admin)
        .call("POST", "/v1/notifications/rules", Some(rule))
        .await;
    assert_eq!(status, 201, "{r}");
    id
}

/// Polls the delivery log until `done` holds for the deliveries of `channel`.
async fn deliveries_until(
    kerf: &Kerf,
    admin: &str,
    channel: i64,
    limit: Duration,
    done: impl Fn(&[Value]) -> bool,
) -> Vec<Value> {
    let started = Instant::now();
    loop {
        let (_, page) = kerf
            .api(admin)
            .call(
                "GET",
                &format!("/v1/notifications/deliveries?channelId={channel}"),
                None,
            )
            .await;
        let items = page["items"].as_array().cloned().unwrap_or_default();
        if done(&items) {
            return items;
        }
        assert!(
            started.elapsed() < limit,
            "deliveries of channel {channel}: {items:#?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn applied_and_rolled_back_events_reach_slack_teams_and_a_signed_webhook_once_within_five_seconds(
) {
    let data = DataDir::new();
    let agent = data.create_cluster("prod");
    let admin = data.admin_token();
    let kerf = data.start_for_local_receivers();
    let slack = Receiver::start(
        Shape::Slack,
        "services/T0001/B0001/slackpathsecret0001",
        None,
    )
    .await;
    let teams = Receiver::start(
        Shape::Teams,
        "webhookb2/teamspathsecret0002/IncomingWebhook",
        None,
    )
    .await;
    let hook = Receiver::start(
        Shape::Webhook,
        "hooks/webhookpathsecret0003",
        Some(WEBHOOK_SECRET),
    )
    .await;
    let events = ["applied", "rolled_back"];
    let ids = [
        channel(&kerf, &admin, json!({"name": "ops-slack", "type": "slack", "url": slack.url}), &events).await,
        channel(&kerf, &admin, json!({"name": "ops-teams", "type": "teams", "url": teams.url}), &events).await,
        channel(&kerf, &admin, json!({"name": "ops-hook", "type": "webhook", "url": hook.url, "signingSecret": WEBHOOK_SECRET}), &events).await,
    ];
    let (a, r) = (uuid(), uuid());
    let sent = Instant::now();
    let (status, body) = kerf
        .api(&agent)
        .post_events(
            "prod",
            &json!([applied(&a, "catalog"), rolled_back(&r, "checkout")]),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    for (rx, name) in [(&slack, "slack"), (&teams, "teams"), (&hook, "webhook")] {
        rx.wait_until(
            Duration::from_secs(5).saturating_sub(sent.elapsed()),
            name,
            |got| got.len() >= 2,
        )
        .await;
    }
    assert!(
        sent.elapsed() < Duration::from_secs(5),
        "all three within 5 s: {:?}",
        sent.elapsed()
    );
    // Exactly once: every delivery is booked delivered after one attempt, nothing is
    // pending, and each receiver accepted exactly those two messages.
    for (ch, rx) in ids.iter().zip([&slack, &teams, &hook]) {
        let log = deliveries_until(&kerf, &admin, *ch, Duration::from_secs(10), |d| {
            d.len() == 2 && d.iter().all(|x| x["status"] == "delivered")
        })
        .await;
        assert!(log.iter().all(|d| d["attempts"] == 1), "{log:#?}");
        assert_eq!(rx.accepted().len(), 2, "exactly two messages");
        assert_eq!(rx.attempts(), 2, "no retries");
        assert!(rx.faults().is_empty(), "{:?}", rx.faults());
        let mut kinds: Vec<String> = rx.accepted().iter().map(|m| m.kind.clone()).collect();
        kinds.dedup();
        assert_eq!(kinds, ["events"]);
    }
    let counts = hook.event_counts();
    assert_eq!(counts.get(&a), Some(&1));
    assert_eq!(counts.get(&r), Some(&1));
    let titles: Vec<String> = hook
        .accepted()
        .iter()
        .map(|m| m.body["title"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(
        titles.contains(&"Resized shop/Deployment/catalog in prod".to_string()),
        "{titles:?}"
    );
    assert!(
        titles.contains(&"Rolled back shop/Deployment/checkout in prod".to_string()),
        "{titles:?}"
    );
    let slack_text = slack
        .accepted()
        .iter()
        .map(|m| m.body.to_string())
        .collect::<String>();
    assert!(
        slack_text.contains("OOMKills") && slack_text.contains("memory 256Mi→512Mi"),
        "{slack_text}"
    );
    no_secret_anywhere(
        &kerf,
        &admin,
        &data,
        &[&slack.url, &teams.url, &hook.url],
        WEBHOOK_SECRET,
    )
    .await;
    assert_eq!(kerf.stop(), Some(0));
}

/// The secret parts of the URLs and the signing secret appear in no API answer, no log
/// line, no audit row and nowhere in the database (delivery records included).
async fn no_secret_anywhere(
    kerf: &Kerf,
    admin: &str,
    data: &DataDir,
    urls: &[&str],
    signing: &str,
) {
    let mut secrets: Vec<String> = urls
        .iter()
        .map(|u| {
            u.split_once("://")
                .and_then(|(_, r)| r.split_once('/'))
                .map(|(_, p)| p.to_string())
                .expect("path")
        })
        .collect();
    secrets.push(signing.to_string());
    let mut answers = String::new();
    for path in [
        "/v1/notifications/channels",
        "/v1/notifications/rules",
        "/v1/notifications/deliveries?limit=500",
        "/v1/notifications/digest",
        "/v1/audit/config?targetType=notification&limit=500",
    ] {
        let (status, body) = kerf.api(admin).call("GET", path, None).await;
        assert_eq!(status, 200, "{path}: {body}");
        answers.push_str(&body.to_string());
    }
    let (_, chans) = kerf
        .api(admin)
        .call("GET", "/v1/notifications/channels", None)
        .await;
    for c in chans["items"].as_array().expect("items") {
        let id = c["id"].as_i64().expect("id");
        for p in [
            format!("/v1/notifications/channels/{id}"),
            format!("/v1/notifications/channels/{id}/digest"),
        ] {
            answers.push_str(&kerf.api(admin).call("GET", &p, None).await.1.to_string());
        }
    }
    // The answers to changes and tests: a channel made with a secret URL path (on a
    // closed port, so its test fails and the error names what it tried) and the signing
    // secret, replaced with them again, tested, deleted.
    let url = format!("http://127.0.0.1:1/{}", secrets[0]);
    let body = json!({"name": "leak-probe", "type": "webhook", "url": url, "signingSecret": signing,
                      "defaultRules": false});
    let (s, made) = kerf
        .api(admin)
        .call("POST", "/v1/notifications/channels", Some(body.clone()))
        .await;
    assert_eq!(s, 201, "{made}");
    let probe = format!("/v1/notifications/channels/{}", made["id"]);
    let (s, replaced) = kerf.api(admin).call("PUT", &probe, Some(body)).await;
    assert_eq!(s, 200, "{replaced}");
    answers.push_str(&made.to_string());
    answers.push_str(&replaced.to_string());
    let (s, tested) = kerf
        .api(admin)
        .call("POST", &format!("{probe}/test"), None)
        .await;
    assert_eq!(s, 200, "{tested}");
    assert_eq!(tested["delivered"], false, "{tested}");
    answers.push_str(&tested.to_string());
    let (s, _) = kerf.api(admin).call("DELETE", &probe, None).await;
    assert_eq!(s, 204);
    assert!(
        answers.contains("NotificationChannelCreated"),
        "the audit was read"
    );
    let logs = kerf.log_text();
    let db: Vec<u8> = ["kerf.db", "kerf.db-wal"]
        .iter()
        .filter_map(|f| std::fs::read(data.path().join(f)).ok())
        .flatten()
        .collect();
    let db = String::from_utf8_lossy(&db);
    for s in &secrets {
        assert!(!answers.contains(s.as_str()), "API answers leak {s}");
        assert!(!logs.contains(s.as_str()), "logs leak {s}");
        assert!(!db.contains(s.as_str()), "the database holds {s} in clear");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_receiver_failing_three_times_gets_the_message_once_and_a_hanging_one_delays_only_itself()
{
    let data = DataDir::new();
    let agent = data.create_cluster("prod");
    let admin = data.admin_token();
    let env = [
        ("KERF_NOTIFICATIONS__RETRY_BASE_MS", "200"),
        ("KERF_NOTIFICATIONS__SEND_TIMEOUT_SECONDS", "120"),
        ("KERF_OUTBOUND__ALLOW", LOCAL_RECEIVERS),
    ];
    let kerf = Kerf::builder(data.path()).envs(&env).start();
    let flaky = Receiver::start(
        Shape::Webhook,
        "hooks/flakypathsecret0004",
        Some(WEBHOOK_SECRET),
    )
    .await;
    let stuck = Receiver::start(
        Shape::Webhook,
        "hooks/stuckpathsecret0005",
        Some(WEBHOOK_SECRET),
    )
    .await;
    let fine = Receiver::start(Shape::Slack, "services/T1/B1/finepathsecret0006", None).await;
    flaky.fail_next(3);
    stuck.hang(true);
    let hook = |name: &str, url: &str| json!({"name": name, "type": "webhook", "url": url, "signingSecret": WEBHOOK_SECRET});
    let flaky_id = channel(&kerf, &admin, hook("flaky", &flaky.url), &["applied"]).await;
    let stuck_id = channel(&kerf, &admin, hook("stuck", &stuck.url), &["applied"]).await;
    channel(
        &kerf,
        &admin,
        json!({"name": "fine", "type": "slack", "url": fine.url}),
        &["applied"],
    )
    .await;
    let a = uuid();
    let sent = Instant::now();
    let (status, _) = kerf
        .api(&agent)
        .post_events("prod", &json!([applied(&a, "catalog")]))
        .await;
    assert_eq!(status, 200);
    fine.wait_until(
        Duration::from_secs(5),
        "the healthy channel beside a hanging one",
        |g| g.len() == 1,
    )
    .await;
    assert!(sent.elapsed() < Duration::from_secs(5));
    flaky
        .wait_until(
            Duration::from_secs(20),
            "the flaky receiver after three 500s",
            |g| g.len() == 1,
        )
        .await;
    let log = deliveries_until(&kerf, &admin, flaky_id, Duration::from_secs(10), |d| {
        d.first().is_some_and(|x| x["status"] == "delivered")
    })
    .await;
    assert_eq!(log.len(), 1);
    assert_eq!(
        log[0]["attempts"], 4,
        "three failures then success: {log:#?}"
    );
    assert_eq!(flaky.attempts(), 4);
    assert_eq!(flaky.accepted().len(), 1, "taken once");
    assert_eq!(flaky.event_counts().get(&a), Some(&1));
    // The hanging receiver got its request and never answered: still pending, no attempt booked.
    eventually("the hanging receiver to be called", secs(5), async || {
        stuck.attempts() > 0
    })
    .await;
    assert_eq!(stuck.attempts(), 1);
    let (_, page) = kerf
        .api(&admin)
        .call(
            "GET",
            &format!("/v1/notifications/deliveries?channelId={stuck_id}"),
            None,
        )
        .await;
    assert_eq!(page["items"][0]["status"], "pending", "{page}");
    assert_eq!(page["items"][0]["attempts"], 0);
    let metrics = kerf.metrics_text().await;
    for line in [
        "kerf_notifications_sent_total{channel_type=\"webhook\",outcome=\"retry\"} 3",
        "kerf_notifications_sent_total{channel_type=\"webhook\",outcome=\"delivered\"} 1",
        "kerf_notifications_sent_total{channel_type=\"slack\",outcome=\"delivered\"} 1",
    ] {
        assert!(metrics.contains(line), "{line} in\n{metrics}");
    }
    // The flaky receiver echoed its path in the 500 answers; kerf kept none of it.
    no_secret_anywhere(
        &kerf,
        &admin,
        &data,
        &[&flaky.url, &stuck.url, &fine.url],
        WEBHOOK_SECRET,
    )
    .await;
    kerf.kill();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn forty_changes_applied_by_one_run_are_one_message() {
    let data = DataDir::new();
    let agent = data.create_cluster("prod");
    let admin = data.admin_token();
    let kerf = data.start();
    let hook = Receiver::start(Shape::Webhook, "hooks/burst40", Some(WEBHOOK_SECRET)).await;
    let body = json!({"name": "burst", "type": "webhook", "url": hook.url, "signingSecret": WEBHOOK_SECRET});
    let id = channel(&kerf, &admin, body, &["applied"]).await;
    let events: Vec<Value> = (0..40)
        .map(|i| applied(&uuid(), &format!("svc-{i:02}")))
        .collect();
    let (status, _) = kerf
        .api(&agent)
        .post_events("prod", &Value::Array(events))
        .await;
    assert_eq!(status, 200);
    hook.wait_until(Duration::from_secs(5), "the burst's message", |g| {
        !g.is_empty()
    })
    .await;
    let log = deliveries_until(&kerf, &admin, id, Duration::from_secs(10), |d| {
        d.iter().all(|x| x["status"] == "delivered") && !d.is_empty()
    })
    .await;
    assert_eq!(log.len(), 1, "one delivery: {log:#?}");
    let m = &hook.accepted()[0];
    assert_eq!(m.body["title"], "40 changes applied in prod");
    assert_eq!(m.body["data"]["events"].as_array().map(Vec::len), Some(40));
    assert_eq!(
        (
            m.body["lines"].as_array().map(Vec::len),
            m.body["more"].as_u64()
        ),
        (Some(15), Some(25))
    );
    assert_eq!(hook.event_counts().len(), 40);
    kerf.kill();
}
