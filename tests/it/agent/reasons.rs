//! Done means 2: the skip and block reasons of the decision order, each produced by the
//! agent against the real API server and read back from `GET /v1/audit` with the
//! details the contract names. (Pause, freeze and the maintenance window: `holds`; the
//! fallbacks: `apply`; `HubUnreachable`: `remote`.)

use kerf::cluster::NodeManagers;
use serde_json::{json, Value};

use super::world::{deployment, drive, ready, res, Rec, World};
use crate::support::kube::objects::node;

fn named(name: &str, patch: Value) -> Value {
    let mut p = json!({ "priority": 20, "selector": { "names": [name] } });
    super::world::merge(&mut p, patch);
    p
}

#[tokio::test]
async fn each_skip_and_block_is_reported_once_with_its_details() {
    let w = World::new("agent-reasons", 8000, 16384).await;
    let base = res(500, 1000, 256, 512);
    let smaller = res(250, 500, 200, 400);
    let names = [
        "off", "audit", "approved", "stale", "steady", "young", "unsure", "recent",
    ];
    let mut keys = Vec::new();
    for n in names {
        keys.push(w.create(&deployment(n, 1, base)).await);
    }
    w.policy("auto", json!({})).await;
    w.policy(
        "p-off",
        named("off", json!({ "mode": { "cpu": "off", "memory": "off" } })),
    )
    .await;
    w.policy(
        "p-audit",
        named(
            "audit",
            json!({ "mode": { "cpu": "audit", "memory": "audit" } }),
        ),
    )
    .await;
    w.policy(
        "p-approved",
        named(
            "approved",
            json!({ "mode": { "cpu": "audit", "memory": "audit" } }),
        ),
    )
    .await;
    let stale_policy = w.policy("p-stale", named("stale", json!({}))).await;
    w.policy(
        "p-recent",
        named("recent", json!({ "guardrails": { "cooldown": "24h" } })),
    )
    .await;
    for (n, key) in names.iter().zip(&keys) {
        let (suggested, r) = match *n {
            "steady" => (res(490, 1000, 256, 512), Rec::default()),
            "young" => (
                smaller,
                Rec {
                    covered_seconds: 3600,
                    ..Rec::default()
                },
            ),
            "unsure" => (
                smaller,
                Rec {
                    confidence: 30,
                    ..Rec::default()
                },
            ),
            _ => (smaller, Rec::default()),
        };
        let rec = w.recommend_with(key, suggested, r).await;
        if *n == "approved" {
            let (s, v) = w
                .hub
                .as_token(&w.hub.admin)
                .call(
                    "POST",
                    &format!("/v1/workloads/{}/approve", w.workload_id(key)),
                    Some(json!({ "recommendationId": rec, "reason": "checked by hand" })),
                )
                .await;
            assert_eq!(s, 201, "{v}");
        }
    }
    // The stale one's policy changes after its recommendation was made.
    w.update_policy(
        stale_policy,
        json!({ "guardrails": { "minConfidence": 60 } }),
    )
    .await;
    let recent = keys[7].clone();
    let approved = keys[2].clone();
    let mut agent = w.agent().await;
    drive(&mut agent, "recent and approved applied", |a| {
        [&recent, &approved].iter().all(|k| {
            a.state(k).is_some_and(|s| {
                s.phase == kerf::agent::state::Phase::Applied && s.operation.is_none()
            })
        })
    })
    .await;
    // The hub stores the ApprovedOnce event and with it consumes the approval.
    w.deliver(&agent).await;
    // A new recommendation for `recent` within its cooldown.
    w.recommend(&recent, res(300, 600, 220, 440)).await;
    for _ in 0..5 {
        agent.pass().await;
    }
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
    let pair = |t: &str, r: &str| (t.to_string(), r.to_string());
    assert_eq!(of("off"), [pair("skipped", "ModeOff")]);
    assert_eq!(of("audit"), [pair("skipped", "ModeAudit")]);
    assert_eq!(of("stale"), [pair("skipped", "RecommendationStale")]);
    assert_eq!(of("steady"), [pair("skipped", "NoSignificantChange")]);
    assert_eq!(of("young"), [pair("blocked", "LearningPeriod")]);
    assert_eq!(of("unsure"), [pair("blocked", "LowConfidence")]);
    assert_eq!(
        of("recent"),
        [
            pair("applied", "RecommendationApplied"),
            pair("blocked", "Cooldown")
        ]
    );
    // ApprovedOnce consumed the approval; the workload stays in audit, so the next pass
    // reports that.
    assert_eq!(
        of("approved"),
        [
            pair("applied", "ApprovedOnce"),
            pair("skipped", "ModeAudit")
        ]
    );
    let one = |name: &str, reason: &str| -> Value {
        events
            .iter()
            .find(|e| e["workload"]["name"] == name && e["reason"] == reason)
            .cloned()
            .unwrap_or(Value::Null)
    };
    let a = one("approved", "ApprovedOnce");
    assert!(
        a["details"]["approvalId"]
            .as_str()
            .is_some_and(|s| !s.is_empty()),
        "{a}"
    );
    assert!(a["details"]["approvedBy"].as_str().is_some(), "{a}");
    assert_eq!(one("young", "LearningPeriod")["details"]["covered"], "1h");
    assert_eq!(
        one("unsure", "LowConfidence")["details"]["confidence"],
        "30"
    );
    assert_eq!(one("recent", "Cooldown")["details"]["cooldown"], "24h");
    let stale = one("stale", "RecommendationStale");
    assert_ne!(
        stale["details"]["settingsIdentity"],
        stale["details"]["policyIdentity"]
    );
    // Nothing is pending approval any more.
    let feed = w
        .hub
        .as_token(&w.hub.agent)
        .call(
            "GET",
            &format!("/v1/clusters/{}/recommendations", w.cluster),
            None,
        )
        .await
        .1;
    assert!(feed["items"]
        .as_array()
        .expect("items")
        .iter()
        .all(|i| i["approval"].is_null()));
}

#[tokio::test]
async fn in_place_is_refused_on_a_node_with_swap() {
    let w = World::with_node("agent-swap", |ns| {
        let mut n = node(ns, 4000, 8192);
        n.swap_bytes = 2 << 30;
        n.managers = NodeManagers::default();
        n
    })
    .await;
    let key = w
        .create(&deployment("web", 1, res(500, 1000, 256, 512)))
        .await;
    ready(&w, &key, 1).await;
    w.policy("auto", json!({})).await;
    w.recommend(&key, res(250, 500, 200, 400)).await;
    let mut agent = w.agent().await;
    // Until the pod is bound and running, there is no node to judge.
    let every = std::time::Duration::from_millis(200);
    crate::support::wait::eventually_every(
        "UnsupportedNode",
        crate::support::secs(60),
        every,
        async || {
            let reason = agent.state(&key).and_then(|s| s.last_reason);
            if reason == Some(kerf::wire::Reason::UnsupportedNode) {
                return Ok(());
            }
            agent.pass().await;
            Err(reason)
        },
    )
    .await;
    agent.pass().await;
    w.deliver(&agent).await;
    let events = w.audit().await;
    let unsupported: Vec<&Value> = events
        .iter()
        .filter(|e| e["reason"] == "UnsupportedNode")
        .collect();
    assert_eq!(unsupported.len(), 1, "{events:#?}");
    assert_eq!(unsupported[0]["details"]["cause"], "swap");
    assert!(events.iter().all(|e| e["type"] != "applied"));
}
