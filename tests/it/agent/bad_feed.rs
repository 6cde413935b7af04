//! Bad input from the hub, end to end: the agent (over HTTP, as `mode = "agent"`) reads
//! the real hub's feeds through a loopback proxy that rewrites them the way a newer or a
//! broken hub would. Fields this build does not know are accepted everywhere (the
//! windows of the effective policy too); a workload whose config entry or recommendation
//! does not parse is reported `failed ApplyError` and the others go on; a config feed
//! that does not parse as a whole is `blocked HubUnreachable` and nothing changes.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use kerf::agent::http_hub::HttpHub;
use kerf::agent::state::Phase;
use kerf::agent::{Agent, Options, Outbox};
use kerf::cluster::kube::KubeCluster;
use serde_json::{json, Value};

use super::world::{deployment, ready, res, World};
use crate::support::kube::control_plane;

/// How the proxy rewrites the hub's feeds.
#[derive(Clone, Copy, PartialEq)]
enum Rewrite {
    /// Unknown fields everywhere; workload `b`'s config entry and workload `c`'s
    /// recommendation broken.
    NewerAndBroken,
    /// The config feed is not a config feed at all.
    Garbage,
}

struct Proxy {
    upstream: String,
    rewrite: Mutex<Rewrite>,
    http: reqwest::Client,
}

fn newer_config(v: &mut Value) {
    v["shards"] = json!(3);
    v["flags"]["draining"] = json!(true);
    v["agent"]["profile"] = json!("fast");
    for w in v["workloads"].as_array_mut().into_iter().flatten() {
        w["priorityClass"] = json!("high");
        w["policy"]["guardrails"]["futureKnob"] = json!(1);
        // A window long past, with a field this build does not know.
        w["policy"]["apply"]["freezeWindows"]
            .as_array_mut()
            .expect("freeze windows")
            .push(
                json!({ "start": "2000-01-01T00:00:00Z", "end": "2000-01-02T00:00:00Z",
                          "label": "millennium" }),
            );
        if w["name"] == "b" {
            w["mode"]["cpu"] = json!("turbo");
        }
    }
}

fn newer_recommendations(v: &mut Value) {
    v["region"] = json!("eu");
    for item in v["items"].as_array_mut().into_iter().flatten() {
        item["explanation"] = json!({ "text": "newer hubs say why" });
        item["workload"]["cell"] = json!("b7");
        for c in item["containers"].as_array_mut().into_iter().flatten() {
            c["gpu"] = json!({ "requests": null });
        }
        if item["workload"]["name"] == "c" {
            item["containers"] = json!("not a list of containers");
        }
    }
}

async fn forward(State(p): State<Arc<Proxy>>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let bytes = axum::body::to_bytes(body, 4 << 20)
        .await
        .unwrap_or_default();
    let path = parts
        .uri
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_string();
    let method = reqwest::Method::from_bytes(parts.method.as_str().as_bytes()).expect("method");
    let mut out = p
        .http
        .request(method, format!("{}{path}", p.upstream))
        .body(bytes.to_vec());
    for name in ["authorization", "content-type"] {
        if let Some(v) = parts.headers.get(name).and_then(|v| v.to_str().ok()) {
            out = out.header(name, v);
        }
    }
    let Ok(resp) = out.send().await else {
        return (axum::http::StatusCode::BAD_GATEWAY, "upstream").into_response();
    };
    let status = axum::http::StatusCode::from_u16(resp.status().as_u16()).expect("status");
    let text = resp.text().await.unwrap_or_default();
    let rewrite = *p.rewrite.lock().expect("lock");
    let body = match serde_json::from_str::<Value>(&text) {
        Ok(mut v) if status.is_success() && parts.method == axum::http::Method::GET => {
            let config = parts.uri.path().ends_with("/config");
            match (rewrite, config) {
                (Rewrite::Garbage, true) => v = json!({ "cluster": 7, "workloads": "none" }),
                (Rewrite::NewerAndBroken, true) => newer_config(&mut v),
                (_, false) => newer_recommendations(&mut v),
            }
            v.to_string()
        }
        _ => text,
    };
    (
        status,
        [("content-type", "application/json")],
        Body::from(body),
    )
        .into_response()
}

async fn start_proxy(upstream: &str) -> (String, Arc<Proxy>) {
    let proxy = Arc::new(Proxy {
        upstream: upstream.trim_end_matches('/').to_string(),
        rewrite: Mutex::new(Rewrite::NewerAndBroken),
        http: reqwest::Client::new(),
    });
    let app = axum::Router::new()
        .fallback(forward)
        .with_state(proxy.clone());
    let url = crate::support::serve(app).await;
    (url, proxy)
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_fields_are_accepted_a_broken_item_fails_only_its_workload_and_a_broken_feed_holds_everything(
) {
    let w = World::new("agent-bad-feed", 6000, 12288).await;
    let old = res(500, 1000, 256, 512);
    let new = res(250, 500, 200, 400);
    let mut keys = Vec::new();
    for name in ["a", "b", "c"] {
        keys.push(w.create(&deployment(name, 1, old)).await);
    }
    for k in &keys {
        ready(&w, k, 1).await;
    }
    w.policy("auto", json!({})).await;
    for k in &keys {
        w.recommend(k, new).await;
    }
    let (url, proxy) = start_proxy(&w.hub.base).await;
    let hub = Arc::new(
        HttpHub::new(
            &url,
            &w.cluster,
            w.hub.agent.clone(),
            None,
            Duration::from_secs(10),
        )
        .expect("client"),
    );
    let options = Options {
        cluster: w.cluster.clone(),
        namespaces: vec![w.ns.name.clone()],
        agent_version: "test".into(),
    };
    let kube = KubeCluster::new(control_plane().agent().await);
    let mut agent = Agent::start(
        kube,
        hub.clone(),
        w.hub.clock.clone(),
        options,
        Outbox::new(1000, Default::default()),
    )
    .await
    .expect("agent starts");
    let phase = |a: &Agent<KubeCluster, HttpHub>, i: usize| a.state(&keys[i]).map(|s| s.phase);
    let settled = |a: &Agent<KubeCluster, HttpHub>, i: usize| {
        a.state(&keys[i]).is_some_and(|s| s.operation.is_none())
    };
    agent.pass().await;
    let every = Duration::from_millis(200);
    crate::support::wait::eventually_every(
        "a applied",
        crate::support::secs(90),
        every,
        async || {
            if phase(&agent, 0) == Some(Phase::Applied) && settled(&agent, 0) {
                return Ok(());
            }
            let seen = phase(&agent, 0);
            if agent.busy() {
                agent.advance_all().await;
            } else {
                agent.pass().await;
            }
            Err(seen)
        },
    )
    .await;
    assert_eq!(phase(&agent, 1), Some(Phase::Failed));
    assert_eq!(phase(&agent, 2), Some(Phase::Failed));
    let flushed = agent.outbox().flush(hub.as_ref()).await;
    assert!(
        matches!(flushed, kerf::agent::outbox::Flushed::Empty { .. }),
        "{flushed:?}"
    );
    let events = w.audit().await;
    let of = |name: &str| -> Vec<&Value> {
        events
            .iter()
            .filter(|e| e["workload"]["name"] == name)
            .collect()
    };
    let a: Vec<(&str, &str)> = of("a")
        .iter()
        .map(|e| (e["type"].as_str().unwrap(), e["reason"].as_str().unwrap()))
        .collect();
    assert_eq!(a, [("applied", "RecommendationApplied")], "{events:#?}");
    for (name, what) in [("b", "config"), ("c", "recommendation")] {
        let e = of(name);
        assert_eq!(e.len(), 1, "{name}: {events:#?}");
        assert_eq!(
            (e[0]["type"].as_str(), e[0]["reason"].as_str()),
            (Some("failed"), Some("ApplyError"))
        );
        let message = e[0]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(&format!("the hub's {what}")),
            "{name}: {message}"
        );
    }
    let applied = ready(&w, &keys[0], 1).await;
    assert_eq!(
        applied[0].status("app").and_then(|s| s.resources),
        Some(new)
    );
    for k in &keys[1..] {
        assert_eq!(ready(&w, k, 1).await[0].containers[0].resources, old);
    }

    // A config feed that does not parse as a whole: the hub counts as unreachable.
    *proxy.rewrite.lock().expect("lock") = Rewrite::Garbage;
    let before = w.workload_objects().await;
    w.recommend(&keys[0], res(200, 400, 160, 320)).await;
    agent.pass().await;
    agent.pass().await;
    let flushed = agent.outbox().flush(hub.as_ref()).await;
    assert!(
        matches!(flushed, kerf::agent::outbox::Flushed::Empty { .. }),
        "{flushed:?}"
    );
    let later = w.audit().await;
    let unreachable: Vec<&Value> = later[events.len()..]
        .iter()
        .filter(|e| e["workload"]["name"] == "a")
        .collect();
    assert_eq!(unreachable.len(), 1, "{later:#?}");
    assert_eq!(
        (
            unreachable[0]["type"].as_str(),
            unreachable[0]["reason"].as_str()
        ),
        (Some("blocked"), Some("HubUnreachable"))
    );
    assert_eq!(
        w.workload_objects().await,
        before,
        "nothing changed in the cluster"
    );
}
