//! Black-box harness: runs the real `kerf` binary on port 0 with a temp data dir
//! ([`binary`]), talks to it through one client ([`api::Api`]) and waits with one
//! [`wait::eventually`]. Test files share helpers only through this module.

#![allow(dead_code)]

pub mod api;
pub mod audit;
pub mod binary;
pub mod cut_proxy;
pub mod fault_proxy;
pub mod fleet_tsdb;
pub mod hub;
pub mod kube;
pub mod oidc_provider;
pub mod openapi;
pub mod prometheus;
pub mod raw_tsdb;
pub mod receiver;
pub mod series;
pub mod smtp;
pub mod source_tree;
pub mod tools;
pub mod victoria;
pub mod wait;

pub use api::{client, Api, Cred, Session};
pub use binary::{bin, stdout_line, DataDir, Demo, Kerf};
pub use wait::{eventually, secs, within};

/// Serves `app` on a fresh loopback port (a stand-in upstream, proxy or receiver);
/// returns its `http://127.0.0.1:<port>` base URL.
pub async fn serve(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    url
}

/// A distinctive password nobody would type by accident.
pub const PASSWORD: &str = "Zebra-Quokka-7781-Lantern";

/// A valid event with the given id.
pub fn event(id: &str) -> serde_json::Value {
    serde_json::json!({
        "id": id,
        "type": "skipped",
        "time": "2026-11-04T10:15:00Z",
        "workload": {"namespace": "shop", "kind": "Deployment", "name": "api"},
        "reason": "ModeAudit",
    })
}

/// A fresh random UUID string.
pub fn uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// Asserts the API's error shape and returns the code.
pub fn error_code(body: &serde_json::Value) -> String {
    let e = &body["error"];
    assert!(e.is_object(), "no error object in {body}");
    assert!(
        e["message"].as_str().is_some_and(|m| !m.is_empty()),
        "no message in {body}"
    );
    assert!(e.get("details").is_some(), "no details in {body}");
    e["code"].as_str().expect("code").to_string()
}
