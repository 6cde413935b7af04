//! Outbound calls under policy (issue 36, defect 2), through the real binary on
//! loopback: channels cannot aim the hub at cloud metadata, link-local addresses or the
//! hub itself, Slack and Teams only reach their vendors, the test button tells a status
//! and a verdict but never what the receiver said, and it is rate-limited per caller.
//! One timeout governs an SMTP test against a silent port.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::receiver::{Receiver, Shape};
use crate::support::{DataDir, Kerf};

fn webhook(url: &str) -> Value {
    json!({"name": "hook", "type": "webhook", "url": url, "signingSecret": "0123456789abcdef"})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn channels_cannot_aim_the_hub_at_metadata_link_local_addresses_or_itself() {
    let dir = DataDir::new();
    let editor = dir.token("ops-editor", "editor");
    let kerf = dir.start();
    let api = kerf.api(&editor);
    let own = kerf.url("/v1/openapi.yaml");
    let own_port = own
        .trim_start_matches("http://127.0.0.1:")
        .split('/')
        .next()
        .expect("port")
        .to_string();
    let cases = [
        (
            webhook("http://169.254.169.254/latest/meta-data/"),
            "url",
            "metadata",
        ),
        (webhook("http://[fd00:ec2::254]/"), "url", "metadata"),
        (webhook("http://169.254.3.4:8000/"), "url", "link-local"),
        (
            webhook(&format!("http://0x7f000001:{own_port}/v1/openapi.yaml")),
            "url",
            "hub's own",
        ),
        (webhook(&own), "url", "hub's own"),
        (
            json!({"name": "chat", "type": "slack", "url": "http://127.0.0.1:9/services/T/B/X"}),
            "url",
            "not a Slack host",
        ),
        (
            json!({"name": "chat", "type": "teams", "url": "https://teams.evil.example/webhookb2/x"}),
            "url",
            "not a Teams host",
        ),
        (
            json!({"name": "mail", "type": "email", "email": {"host": "169.254.169.254",
                "port": 25, "security": "none", "from": "k@corp.example", "to": ["o@corp.example"]}}),
            "email.host",
            "metadata",
        ),
    ];
    for (body, field, why) in cases {
        let (s, v) = api
            .call("POST", "/v1/notifications/channels", Some(body.clone()))
            .await;
        assert_eq!(s, 400, "{body} → {v}");
        assert_eq!(v["error"]["details"]["field"], field, "{body} → {v}");
        assert!(v.to_string().contains(why), "{body} → {v}");
    }
    // A name is checked after resolution, when it is used: `localhost` on the hub's
    // own port is saved, and its test refused before any request.
    let (s, ch) = api
        .call(
            "POST",
            "/v1/notifications/channels",
            Some(webhook(&format!(
                "http://localhost:{own_port}/v1/openapi.yaml"
            ))),
        )
        .await;
    assert_eq!(s, 201, "{ch}");
    let (s, t) = api
        .call(
            "POST",
            &format!("/v1/notifications/channels/{}/test", ch["id"]),
            Some(json!({})),
        )
        .await;
    assert_eq!(s, 200, "{t}");
    assert_eq!(t["delivered"], false, "{t}");
    assert_eq!(t["status"], Value::Null, "no request was made: {t}");
    assert!(
        t["answer"]
            .as_str()
            .is_some_and(|a| a.contains("hub's own")),
        "{t}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_test_button_says_a_status_and_a_verdict_and_is_limited_per_caller() {
    let dir = DataDir::new();
    let editor = dir.token("ops-editor", "editor");
    let other = dir.token("other-editor", "editor");
    let kerf = dir.start();
    let api = kerf.api(&editor);
    let rx = Receiver::start(Shape::Webhook, "hook", Some("0123456789abcdef")).await;
    let (s, ch) = api
        .call("POST", "/v1/notifications/channels", Some(webhook(&rx.url)))
        .await;
    assert_eq!(s, 201, "{ch}");
    let test = format!("/v1/notifications/channels/{}/test", ch["id"]);
    // The receiver answers 500 with its own text ("no route for /hook").
    rx.fail_next(1);
    let (s, t) = api.call("POST", &test, Some(json!({}))).await;
    assert_eq!(s, 200, "{t}");
    assert_eq!(
        (&t["delivered"], &t["status"], &t["answer"], &t["error"]),
        (
            &json!(false),
            &json!(500),
            &json!("refused by the receiver"),
            &Value::Null
        ),
        "{t}"
    );
    assert!(
        !t.to_string().contains("no route"),
        "the receiver's words: {t}"
    );
    for _ in 1..6 {
        let (s, t) = api.call("POST", &test, Some(json!({}))).await;
        assert_eq!((s, &t["answer"]), (200, &json!("delivered")), "{t}");
    }
    let (s, v) = api.call("POST", &test, Some(json!({}))).await;
    assert_eq!(s, 429, "the seventh test in a minute: {v}");
    assert_eq!(v["error"]["code"], "too_many_tests", "{v}");
    assert!(
        v["error"]["details"]["retryAfterSeconds"]
            .as_i64()
            .unwrap_or(0)
            >= 1,
        "{v}"
    );
    let (s, t) = kerf.api(&other).call("POST", &test, Some(json!({}))).await;
    assert_eq!(s, 200, "another caller has their own budget: {t}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_smtp_test_against_a_silent_port_ends_within_the_send_timeout() {
    let dir = DataDir::new();
    let admin = dir.token("ops-admin", "admin");
    let kerf = Kerf::builder(dir.path())
        .env("KERF_NOTIFICATIONS__SEND_TIMEOUT_SECONDS", "2")
        .start();
    let api = kerf.api(&admin);
    // Accepts and never says a word.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = silent.local_addr().expect("addr").port();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            held.push(socket);
        }
    });
    let (s, ch) = api
        .call(
            "POST",
            "/v1/notifications/channels",
            Some(json!({"name": "mail", "type": "email", "email": {"host": "127.0.0.1",
                "port": port, "security": "none", "from": "k@corp.example", "to": ["o@corp.example"]}})),
        )
        .await;
    assert_eq!(s, 201, "{ch}");
    let started = Instant::now();
    let (s, t) = api
        .call(
            "POST",
            &format!("/v1/notifications/channels/{}/test", ch["id"]),
            Some(json!({})),
        )
        .await;
    let took = started.elapsed();
    assert_eq!(s, 200, "{t}");
    assert_eq!(t["answer"], "no answer from the receiver", "{t}");
    // One timeout (2 s) governs; before, the wait was twice it.
    assert!(took < Duration::from_millis(3_500), "{took:?}");
}
