//! A workload's policy through the real binary (`kerf demo`): the effective policy does
//! not depend on the order policies were created in, soft-deleted policies stop
//! applying, overrides with expiry, approvals usable exactly once (superseded and stale
//! ones refused), the agent feed showing the pending approval, and the merged history.
//! Every change's `config_changed` row names the actor (and the team that allowed it).
//! Label selectors match the labels the demo's kube-state-metrics series carry.

use rand::seq::SliceRandom;
use rand::SeedableRng;
use reqwest::Method;
use serde_json::{json, Value};

use crate::support::audit::assert_change;
use crate::support::{eventually, secs, uuid, Api, Cred, DataDir, Demo, PASSWORD};

async fn idle(api: &Api) {
    eventually("runs to finish", secs(90), || async {
        let r = api
            .request(Method::GET, "/v1/runs?status=running")
            .send()
            .await;
        r.body["items"].as_array()?.is_empty().then_some(())
    })
    .await;
}

fn overlapping() -> Vec<Value> {
    vec![
        json!({"name": "base", "mode": {"cpu": "audit", "memory": "audit"},
               "guardrails": {"cooldown": "12h"}}),
        json!({"name": "east", "priority": 5, "selector": {"clusters": ["demo-*"]},
               "guardrails": {"minConfidence": 80}}),
        json!({"name": "tie-a", "priority": 5, "selector": {"clusters": ["demo-east"]},
               "guardrails": {"minConfidence": 60}, "apply": {"strategy": "rollout"}}),
        json!({"name": "tie-b", "priority": 5, "selector": {"clusters": ["demo-east"]},
               "apply": {"strategy": "deferred"}, "hpaCoordination": false}),
    ]
}

/// Creates `specs` in `order`, returns the workload's effective policy and the ids.
async fn create_in(api: &Api, wl: &str, specs: &[Value], order: &[usize]) -> (Value, Vec<i64>) {
    let mut ids = Vec::new();
    for &i in order {
        let r = api
            .request(Method::POST, "/v1/policies")
            .json(&specs[i].clone())
            .send()
            .await;
        assert_eq!(r.status, 201, "{}", r.body);
        ids.push(r.body["id"].as_i64().unwrap());
    }
    let p = api
        .request(Method::GET, &format!("/v1/workloads/{wl}/policy"))
        .send()
        .await;
    assert_eq!(p.status, 200, "{}", p.body);
    (p.body, ids)
}

async fn delete_all(api: &Api, ids: &[i64]) {
    for id in ids {
        let r = api
            .request(Method::DELETE, &format!("/v1/policies/{id}"))
            .cred(Cred::Bearer(&api.token))
            .if_match(1)
            .send()
            .await;
        assert_eq!(r.status, 204, "{}", r.body);
    }
}

/// A user whose only role is team-editor of a team owning `cluster`/`namespace`.
async fn team_editor(api: &Api, cluster: &str, namespace: &str) -> (String, String) {
    let u = api
        .request(Method::POST, "/v1/admin/users")
        .json(&json!({"username": "tina", "password": PASSWORD}))
        .send()
        .await;
    assert_eq!(u.status, 201, "{}", u.body);
    let uid = u.body["user"]["id"].as_str().unwrap().to_string();
    let t = api
        .request(Method::POST, "/v1/admin/teams")
        .json(&json!({"name": "shop-team",
                "namespaces": [{"cluster": cluster, "namespace": namespace}],
                "members": [{"userId": uid, "role": "team-editor"}]}))
        .send()
        .await;
    assert_eq!(t.status, 201, "{}", t.body);
    let team_id = t.body["id"].as_str().unwrap().to_string();
    let login = api
        .http
        .post(format!("{}/v1/auth/login", api.base))
        .json(&json!({"username": "tina", "password": PASSWORD}))
        .send()
        .await
        .unwrap();
    assert_eq!(login.status(), 200);
    let cookie = login.headers()["set-cookie"].to_str().unwrap().to_string();
    let body: Value = login.json().await.unwrap();
    let session = cookie.split(';').next().unwrap().to_string();
    (
        format!("{session}|{}", body["csrfToken"].as_str().unwrap()),
        team_id,
    )
}

async fn as_session(
    api: &Api,
    session: &str,
    m: Method,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let (cookie, csrf) = session.split_once('|').unwrap();
    let mut rb = api
        .http
        .request(m, format!("{}{path}", api.base))
        .header("cookie", cookie)
        .header("x-csrf-token", csrf);
    if let Some(b) = body {
        rb = rb.json(&b);
    }
    let r = rb.send().await.unwrap();
    (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread")]
async fn effective_policy_overrides_approvals_and_history_work_end_to_end() {
    let data = DataDir::new();
    let agent = data.create_cluster("demo-east");
    let demo = Demo::start(Some(data.path()));
    let api = Api::new(demo.kerf.url(""), demo.token.clone());
    idle(&api).await;
    let feed_path = "/v1/clusters/demo-east/recommendations";
    let feed = api
        .request(Method::GET, feed_path)
        .cred(Cred::Bearer(&agent))
        .send()
        .await;
    assert_eq!(feed.status, 200, "{}", feed.body);
    let item = feed.body["items"][0].clone();
    let wl = item["workloadId"].as_str().unwrap().to_string();
    let ns = item["workload"]["namespace"].as_str().unwrap().to_string();
    assert_eq!(item["settingsIdentity"], item["policyIdentity"], "{item}");
    assert_eq!(item["approval"], Value::Null);
    let initial = api
        .request(Method::GET, &format!("/v1/workloads/{wl}/policy"))
        .send()
        .await
        .body;
    assert_eq!(initial["identity"], item["policyIdentity"]);

    // Insertion order does not matter (seeded shuffles), and deleted policies stop applying.
    let specs = overlapping();
    let mut rng = rand::rngs::StdRng::seed_from_u64(6);
    let mut first: Option<Value> = None;
    for _ in 0..3 {
        let mut order: Vec<usize> = (0..specs.len()).collect();
        order.shuffle(&mut rng);
        let (p, ids) = create_in(&api, &wl, &specs, &order).await;
        let names: Vec<&str> = p["policies"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["tie-a", "tie-b", "east", "base"], "{p}");
        assert_eq!(p["effective"]["apply"]["strategy"], "rollout");
        assert_eq!(p["effective"]["guardrails"]["minConfidence"], 60);
        assert_eq!(p["effective"]["guardrails"]["cooldown"], "12h");
        assert_eq!(p["origins"]["hpaCoordination"]["name"], "tie-b");
        match &first {
            None => first = Some(p.clone()),
            Some(f) => assert_eq!(f["identity"], p["identity"], "order changed the result"),
        }
        // Recommendations were made under the old identity: stale now.
        let stale = api
            .request(Method::POST, &format!("/v1/workloads/{wl}/approve"))
            .json(&json!({"recommendationId": item["recommendationId"]}))
            .send()
            .await;
        assert_eq!(
            stale.body["error"]["code"], "recommendation_stale",
            "{}",
            stale.body
        );
        delete_all(&api, &ids).await;
    }
    let back = api
        .request(Method::GET, &format!("/v1/workloads/{wl}/policy"))
        .send()
        .await
        .body;
    assert_eq!(
        back["identity"], initial["identity"],
        "deleted policies no longer apply"
    );

    // Overrides, set by a team-editor: the team is named in the audit.
    let (tina, team_id) = team_editor(&api, "demo-east", &ns).await;
    let (s, b) = as_session(
        &api,
        &tina,
        Method::PUT,
        &format!("/v1/workloads/{wl}/override"),
        Some(json!({"mode": {"cpu": "off", "memory": "off"}, "reason": "r-override"})),
    )
    .await;
    assert_eq!((s, b["active"].as_bool()), (200, Some(true)), "{b}");
    let p = api
        .request(Method::GET, &format!("/v1/workloads/{wl}/policy"))
        .send()
        .await
        .body;
    assert_eq!(
        p["effective"]["mode"],
        json!({"cpu": "off", "memory": "off"})
    );
    assert_eq!(p["origins"]["mode.cpu"]["source"], "override");
    let off = api
        .request(Method::POST, &format!("/v1/workloads/{wl}/approve"))
        .json(&json!({"recommendationId": item["recommendationId"]}))
        .send()
        .await;
    assert_eq!(off.body["error"]["code"], "not_audit_mode", "{}", off.body);
    let (s, b) = as_session(
        &api,
        &tina,
        Method::PUT,
        &format!("/v1/workloads/{wl}/override"),
        Some(
            json!({"mode": {"cpu": "off"}, "expiresAt": "2020-01-01T00:00:00Z",
                    "reason": "r-expired"}),
        ),
    )
    .await;
    assert_eq!((s, b["active"].as_bool()), (200, Some(false)), "{b}");
    let p = api
        .request(Method::GET, &format!("/v1/workloads/{wl}/policy"))
        .send()
        .await
        .body;
    assert_eq!(
        p["identity"], initial["identity"],
        "an expired override is ignored"
    );
    let (s, _) = as_session(
        &api,
        &tina,
        Method::DELETE,
        &format!("/v1/workloads/{wl}/override?reason=r-clear"),
        None,
    )
    .await;
    assert_eq!(s, 204);
    let set = api.changes("OverrideSet").await;
    let c = assert_change(
        &set,
        "r-override",
        "tina",
        ("workload-override", &wl),
        (false, true),
    );
    assert_eq!(c["actor"]["teams"][0]["id"], team_id.as_str(), "{c}");
    assert_change(
        &set,
        "r-expired",
        "tina",
        ("workload-override", &wl),
        (true, true),
    );
    let cleared = api.changes("OverrideCleared").await;
    assert_change(
        &cleared,
        "r-clear",
        "tina",
        ("workload-override", &wl),
        (true, false),
    );

    // Approval: usable exactly once, shown in the feed until consumed.
    let rec = item["recommendationId"].as_str().unwrap().to_string();
    let approve = |reason: &'static str| {
        let (api, wl, rec) = (&api, wl.clone(), rec.clone());
        async move {
            api.request(Method::POST, &format!("/v1/workloads/{wl}/approve"))
                .json(&json!({"recommendationId": rec, "reason": reason}))
                .send()
                .await
        }
    };
    // The demo's own agent for demo-east would take the approval itself (an approval
    // wakes it at once): the cluster is paused, and the agent has said so, before this
    // test plays the agent that consumes it.
    let pause = api
        .request(Method::POST, "/v1/clusters/demo-east/pause")
        .json(&json!({"reason": "the test plays the agent"}))
        .send()
        .await;
    assert!(pause.status < 300, "{}", pause.body);
    crate::support::eventually(
        "the demo's agent to report the pause",
        crate::support::secs(60),
        async || {
            let audit = api
                .request(Method::GET, "/v1/audit?cluster=demo-east&limit=200")
                .send()
                .await;
            let items = audit.body["items"].as_array().cloned().unwrap_or_default();
            items.iter().any(|e| e["reason"] == "Paused")
        },
    )
    .await;
    let ok = approve("r-approve").await;
    assert_eq!(ok.status, 201, "{}", ok.body);
    let approval = ok.body["id"].as_str().unwrap().to_string();
    assert_eq!(
        approve("again").await.body["error"]["code"],
        "already_approved"
    );
    let feed = api
        .request(Method::GET, feed_path)
        .cred(Cred::Bearer(&agent))
        .send()
        .await;
    let mine = |f: &Value| -> Value {
        f["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["workloadId"] == wl.as_str())
            .cloned()
            .unwrap()
    };
    let shown = mine(&feed.body);
    assert_eq!(shown["approval"]["id"], approval.as_str(), "{shown}");
    assert_eq!(shown["approval"]["approvedBy"], "demo", "{shown}");
    let w = &shown["workload"];
    let applied = json!([{"id": uuid(), "type": "applied", "reason": "ApprovedOnce",
        "time": "2026-11-04T10:15:00Z", "recommendationID": rec,
        "strategy": "in-place", "resources": ["memory"],
        "containers": [{"name": "app",
            "from": {"requests": {"memory": "384Mi"}}, "to": {"requests": {"memory": "512Mi"}}}],
        "workload": {"namespace": w["namespace"], "kind": w["kind"], "name": w["name"]},
        "details": {"approvalId": approval}}]);
    let (s, b) = Api::new(&api.base, &agent)
        .post_events("demo-east", &applied)
        .await;
    assert_eq!((s, b["accepted"].as_i64()), (200, Some(1)), "{b}");
    let feed = api
        .request(Method::GET, feed_path)
        .cred(Cred::Bearer(&agent))
        .send()
        .await;
    assert_eq!(mine(&feed.body)["approval"], Value::Null, "consumed");
    assert_eq!(
        approve("third").await.body["error"]["code"],
        "already_approved"
    );
    assert_change(
        &api.changes("WorkloadApproved").await,
        "r-approve",
        "demo",
        ("approval", &approval),
        (false, true),
    );

    // A new run supersedes the recommendation.
    let run = api
        .request(Method::POST, "/v1/clusters/demo-east/runs")
        .send()
        .await;
    assert_eq!(run.status, 202, "{}", run.body);
    idle(&api).await;
    let sup = approve("late").await;
    assert_eq!(
        sup.body["error"]["code"], "recommendation_superseded",
        "{}",
        sup.body
    );

    // History: events, recommendations and config changes, newest first, paginated.
    let mut seen = Vec::new();
    let mut next: Option<String> = None;
    loop {
        let q = next
            .as_ref()
            .map(|n| format!("&next={n}"))
            .unwrap_or_default();
        let page = api
            .request(
                Method::GET,
                &format!("/v1/workloads/{wl}/history?limit=2{q}"),
            )
            .send()
            .await;
        assert_eq!(page.status, 200, "{}", page.body);
        seen.extend(page.body["items"].as_array().unwrap().iter().cloned());
        match page.body["next"].as_str() {
            Some(n) => next = Some(n.to_string()),
            None => break,
        }
    }
    let kinds: Vec<&str> = seen.iter().map(|i| i["type"].as_str().unwrap()).collect();
    let count = |k: &str| kinds.iter().filter(|x| **x == k).count();
    assert!(count("recommendation") >= 2, "{kinds:?}");
    // The demo's own agent for demo-east reports its decisions (e.g. `skipped
    // ModeAudit`) as it cycles; the applied event posted above is there exactly once.
    let events: Vec<&Value> = seen
        .iter()
        .filter(|i| i["type"] == "event")
        .map(|i| &i["event"])
        .collect();
    let ours = events
        .iter()
        .filter(|e| e["id"] == applied[0]["id"])
        .count();
    assert_eq!(ours, 1, "the applied event, once: {events:?}");
    assert!(
        events
            .iter()
            .all(|e| e["id"] == applied[0]["id"] || e["type"] != "applied"),
        "no other event applied a change: {events:?}"
    );
    assert_eq!(
        count("configChange"),
        4,
        "3 override changes and the approval: {kinds:?}"
    );
    let times: Vec<&str> = seen.iter().map(|i| i["time"].as_str().unwrap()).collect();
    let mut sorted = times.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(times, sorted, "newest first");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_label_selector_matches_demo_workloads_by_their_collected_labels() {
    let demo = Demo::start(None);
    let api = Api::new(demo.kerf.url(""), demo.token.clone());
    idle(&api).await;
    let id = |ns: &str, kind: &str, name: &str| {
        kerf::runs::workload::workload_id("demo-east", ns, kind, name)
    };
    let (catalog, ledger) = (
        id("shop", "Deployment", "catalog"),
        id("payments", "Deployment", "ledger"),
    );
    let w = eventually("catalog to be stored", secs(90), || async {
        let r = api
            .request(Method::GET, &format!("/v1/workloads/{catalog}"))
            .send()
            .await;
        (r.status == 200).then_some(r.body)
    })
    .await;
    assert_eq!(
        w["labels"],
        json!({"app": "catalog", "team": "commerce", "tier": "backend"})
    );
    let r = api
        .request(Method::POST, "/v1/policies")
        .json(&json!({"name": "commerce", "priority": 3,
                "selector": {"labels": {"team": "commerce", "tier": "backend"}},
                "guardrails": {"minConfidence": 70}}))
        .send()
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let matched = |body: &Value| -> Vec<String> {
        let list = body["policies"].as_array().cloned().unwrap_or_default();
        list.iter()
            .filter_map(|m| m["name"].as_str().map(String::from))
            .collect()
    };
    let p = api
        .request(Method::GET, &format!("/v1/workloads/{catalog}/policy"))
        .send()
        .await;
    assert_eq!(p.status, 200, "{}", p.body);
    assert_eq!(matched(&p.body), ["commerce"], "{}", p.body);
    assert_eq!(p.body["effective"]["guardrails"]["minConfidence"], 70);
    let other = api
        .request(Method::GET, &format!("/v1/workloads/{ledger}/policy"))
        .send()
        .await;
    assert_eq!(other.status, 200, "{}", other.body);
    assert!(matched(&other.body).is_empty(), "{}", other.body);
}
