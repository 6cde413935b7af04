//! A stored secret belongs to its destination (issue 36, defect 1), through the real
//! binary on loopback. Each attack moved a channel or datasource an admin set up to a
//! server the attacker listens on, leaving the secret out so the stored one came along:
//! the SMTP password (in clear), the webhook's signing key, the datasource's token. Each
//! edit is now refused, naming the secret, and the attacker's server hears nothing.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};

use crate::support::receiver::{Receiver, Shape};
use crate::support::{Api, DataDir};

/// A port where an attacker's SMTP server would listen: counts who connects.
async fn listener() -> (u16, Arc<AtomicUsize>) {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = l.local_addr().expect("addr").port();
    let seen = Arc::new(AtomicUsize::new(0));
    let count = seen.clone();
    tokio::spawn(async move {
        while let Ok((socket, _)) = l.accept().await {
            count.fetch_add(1, Ordering::SeqCst);
            drop(socket);
        }
    });
    (port, seen)
}

/// A port nothing listens on (bound, then let go).
async fn closed_port() -> u16 {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    l.local_addr().expect("addr").port()
}

fn field_errors(v: &Value) -> String {
    v["error"]["details"].to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_cannot_move_an_smtp_channel_to_their_server_and_keep_its_password() {
    let dir = DataDir::new();
    let admin = dir.token("ops-admin", "admin");
    let editor = dir.token("ops-editor", "editor");
    let kerf = dir.start();
    let (admin, editor) = (kerf.api(&admin), kerf.api(&editor));
    let corp = closed_port().await;
    let (s, ch) = admin
        .call(
            "POST",
            "/v1/notifications/channels",
            Some(json!({"name": "mail", "type": "email", "email": {
                "host": "127.0.0.1", "port": corp, "security": "starttls",
                "username": "kerf", "password": "the-admins-smtp-password",
                "from": "kerf@corp.example", "to": ["ops@corp.example"]}})),
        )
        .await;
    assert_eq!(s, 201, "{ch}");
    let id = ch["id"].as_i64().expect("id");
    let (theirs, heard) = listener().await;

    // The attack: their host and port, no TLS, the password left out to keep it.
    let path = format!("/v1/notifications/channels/{id}");
    let moved = json!({"name": "mail", "type": "email", "email": {
        "host": "localhost", "port": theirs, "security": "none", "username": "kerf",
        "from": "kerf@corp.example", "to": ["ops@corp.example"]}});
    let (s, v) = editor.call("PUT", &path, Some(moved)).await;
    assert_eq!(s, 400, "the move must be refused: {v}");
    assert_eq!(v["error"]["details"]["field"], "email.password", "{v}");
    assert!(
        field_errors(&v).contains("never sent to a new destination"),
        "{v}"
    );
    // The channel is as the admin left it, and its test goes there, not to them.
    let (_, now) = admin.get(&path).await;
    assert_eq!(now["email"]["port"], corp, "{now}");
    let (s, t) = editor
        .call("POST", &format!("{path}/test"), Some(json!({})))
        .await;
    assert_eq!(s, 200, "{t}");
    assert_eq!(
        heard.load(Ordering::SeqCst),
        0,
        "their server heard nothing"
    );

    // A password is never sent without TLS to a host that is not loopback.
    let (s, v) = admin
        .call(
            "POST",
            "/v1/notifications/channels",
            Some(json!({"name": "clear", "type": "email", "email": {
                "host": "smtp.corp.example", "port": 25, "security": "none",
                "username": "kerf", "password": "pw",
                "from": "kerf@corp.example", "to": ["ops@corp.example"]}})),
        )
        .await;
    assert_eq!(s, 400, "{v}");
    assert_eq!(v["error"]["details"]["field"], "email.security", "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_moved_to_another_origin_does_not_keep_its_signing_secret() {
    let dir = DataDir::new();
    let admin = dir.token("ops-admin", "admin");
    let editor = dir.token("ops-editor", "editor");
    let kerf = dir.start();
    let (admin, editor) = (kerf.api(&admin), kerf.api(&editor));
    let secret = "the-admins-signing-key";
    let ours = Receiver::start(Shape::Webhook, "hook", Some(secret)).await;
    let theirs = Receiver::start(Shape::Webhook, "steal", None).await;
    let (s, ch) = admin
        .call(
            "POST",
            "/v1/notifications/channels",
            Some(json!({"name": "hook", "type": "webhook", "url": ours.url, "signingSecret": secret})),
        )
        .await;
    assert_eq!(s, 201, "{ch}");
    let path = format!("/v1/notifications/channels/{}", ch["id"]);
    let (s, v) = editor
        .call(
            "PUT",
            &path,
            Some(json!({"name": "hook", "type": "webhook", "url": theirs.url})),
        )
        .await;
    assert_eq!(s, 400, "the move must be refused: {v}");
    assert_eq!(v["error"]["details"]["field"], "signingSecret", "{v}");
    let (s, t) = editor
        .call("POST", &format!("{path}/test"), Some(json!({})))
        .await;
    assert_eq!(s, 200, "{t}");
    assert_eq!(theirs.attempts(), 0, "their receiver heard nothing");
    assert_eq!(
        ours.attempts(),
        1,
        "the test went where the admin pointed it"
    );
    // With a signing key of their own the move is theirs to make.
    let (s, v) = editor
        .call(
            "PUT",
            &path,
            Some(json!({"name": "hook", "type": "webhook", "url": theirs.url, "signingSecret": "a-key-of-their-own"})),
        )
        .await;
    assert_eq!(s, 200, "{v}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_datasource_moved_to_another_host_does_not_send_its_token_there() {
    let dir = DataDir::new();
    let admin = dir.token("ops-admin", "admin");
    let kerf = dir.start();
    let api: Api = kerf.api(&admin);
    let (port, heard) = listener().await;
    let theirs = format!("http://127.0.0.1:{port}/");
    let ours = format!("http://127.0.0.1:{}/", closed_port().await);
    let (s, ds) = api
        .call(
            "POST",
            "/v1/datasources",
            Some(json!({"name": "prom", "url": ours,
                "auth": {"type": "bearer", "token": "the-datasource-token"},
                "headers": [{"name": "X-Scope-OrgID", "value": "tenant-secret", "secret": true}]})),
        )
        .await;
    assert_eq!(s, 201, "{ds}");
    let path = format!("/v1/datasources/{}", ds["id"]);
    let (s, v) = api
        .call(
            "PUT",
            &path,
            Some(json!({"name": "prom", "url": theirs,
                "auth": {"type": "bearer"},
                "headers": [{"name": "X-Scope-OrgID", "secret": true}]})),
        )
        .await;
    assert_eq!(s, 400, "the move must be refused: {v}");
    let paths: Vec<&str> = v["error"]["details"]["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .filter_map(|e| e["path"].as_str())
        .collect();
    assert_eq!(paths, ["$.auth.token", "$.headers[0].value"], "{v}");
    // Its test (whatever it finds) goes where the admin pointed it.
    let _ = api
        .call("POST", &format!("{path}/test"), Some(json!({})))
        .await;
    assert_eq!(
        heard.load(Ordering::SeqCst),
        0,
        "their server heard nothing"
    );
    // The same host with another path keeps both secrets.
    let (s, v) = api
        .call(
            "PUT",
            &path,
            Some(json!({"name": "prom", "url": format!("{ours}prometheus"),
                "auth": {"type": "bearer"},
                "headers": [{"name": "X-Scope-OrgID", "secret": true}]})),
        )
        .await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(v["auth"]["tokenSet"], true, "{v}");
}
