//! Issue 18: what a signed-in caller can learn or stall outside its scope. A team cannot
//! tell another team's workload from a missing one (defect 8), a team-admin cannot walk
//! user ids to learn usernames, cluster labels refuse control characters, a hostile
//! event batch gets a bounded answer (defect 3), and authentication never waits for the
//! database writer to note that a token or a session was used.

use std::time::Duration;

use kerf::clock::Clock;
use serde_json::{json, Value};

use crate::support::hub::{hub_after_run, Hub};
use crate::support::{error_code, eventually, secs, uuid, Api};

const CLUSTER: &str = "demo-east";

/// A token of `role` in a new team owning `namespace` of the cluster.
async fn team_token(h: &Hub, name: &str, namespace: &str, role: &str) -> (String, String) {
    let (s, team) = h
        .as_token(&h.admin)
        .call(
            "POST",
            "/v1/admin/teams",
            Some(
                json!({"name": name, "namespaces": [{"cluster": CLUSTER, "namespace": namespace}]}),
            ),
        )
        .await;
    assert_eq!(s, 201, "{team}");
    let team_id = team["id"].as_str().expect("id").to_string();
    let (s, t) = h
        .as_token(&h.admin)
        .call(
            "POST",
            "/v1/admin/tokens",
            Some(json!({"name": format!("{name}-{role}"), "role": role, "team": team_id})),
        )
        .await;
    assert_eq!(s, 201, "{t}");
    let value = t["token"].as_str().or_else(|| t["value"].as_str());
    (team_id, value.expect("token value").to_string())
}

async fn workloads(h: &Hub) -> Vec<Value> {
    let (s, body) = h
        .as_token(&h.admin)
        .call("GET", "/v1/workloads?limit=500", None)
        .await;
    assert_eq!(s, 200, "{body}");
    body["items"].as_array().expect("items").clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn another_teams_workload_answers_exactly_as_a_missing_one_on_every_route() {
    let h = hub_after_run(CLUSTER).await;
    let all = workloads(&h).await;
    let ours = all[0]["namespace"].as_str().expect("namespace").to_string();
    let theirs = all
        .iter()
        .find(|w| w["namespace"] != ours.as_str())
        .expect("a workload of another namespace");
    let theirs = theirs["id"].as_str().expect("id");
    // A deterministic-looking id that names nothing.
    let missing = format!("{}0", &theirs[..theirs.len() - 1]);
    let missing = if all.iter().any(|w| w["id"] == missing.as_str()) {
        "0000000000000000".to_string()
    } else {
        missing
    };
    let (_, editor) = team_token(&h, "ours", &ours, "team-editor").await;
    let probes = [
        (
            "PUT",
            "/override",
            json!({"mode": {"cpu": "off"}, "reason": "probe"}),
        ),
        ("DELETE", "/override", json!(null)),
        ("POST", "/approve", json!({"recommendationId": "x"})),
        ("GET", "", json!(null)),
        ("GET", "/policy", json!(null)),
        ("GET", "/history", json!(null)),
        ("GET", "/recommendations", json!(null)),
        ("GET", "/usage?resource=cpu", json!(null)),
        ("GET", "/usage?resource=memory&container=app", json!(null)),
    ];
    for (method, suffix, body) in probes {
        let real = h
            .as_token(&editor)
            .call(
                method,
                &format!("/v1/workloads/{theirs}{suffix}"),
                Some(body.clone()),
            )
            .await;
        let gone = h
            .as_token(&editor)
            .call(
                method,
                &format!("/v1/workloads/{missing}{suffix}"),
                Some(body),
            )
            .await;
        assert_eq!(real.0, 404, "{method} {suffix}: {}", real.1);
        let scrub = |v: &Value, id: &str| v.to_string().replace(id, "ID");
        assert_eq!(
            scrub(&real.1, theirs),
            scrub(&gone.1, &missing),
            "{method} {suffix}: the answers differ"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_team_admin_cannot_walk_user_ids_to_learn_usernames() {
    let h = hub_after_run(CLUSTER).await;
    let ns = workloads(&h).await[0]["namespace"]
        .as_str()
        .expect("namespace")
        .to_string();
    let (team, admin) = team_token(&h, "walkers", &ns, "team-admin").await;
    let (s, user) = h
        .as_token(&h.admin)
        .call(
            "POST",
            "/v1/admin/users",
            Some(json!({"username": "quiet.person"})),
        )
        .await;
    assert_eq!(s, 201, "{user}");
    let real = user["user"]["id"].as_str().expect("id").to_string();
    let path = format!("/v1/admin/teams/{team}/members");
    let by_id = |id: &str| json!({"members": [{"userId": id, "role": "team-viewer"}]});
    let (s_real, b_real) = h
        .as_token(&admin)
        .call("PUT", &path, Some(by_id(&real)))
        .await;
    let (s_none, b_none) = h
        .as_token(&admin)
        .call("PUT", &path, Some(by_id("987654")))
        .await;
    assert_eq!((s_real, s_none), (400, 400), "{b_real} {b_none}");
    assert_eq!(
        b_real.to_string().replace(&real, "ID"),
        b_none.to_string().replace("987654", "ID"),
        "an existing id answers as a missing one"
    );
    assert!(!b_real.to_string().contains("quiet.person"));
    // Colleagues are added by the name they go by.
    let by_name = json!({"members": [{"username": "quiet.person", "role": "team-viewer"}]});
    let (s, team_view) = h.as_token(&admin).call("PUT", &path, Some(by_name)).await;
    assert_eq!(s, 200, "{team_view}");
    assert_eq!(team_view["members"][0]["username"], "quiet.person");
    // A fleet admin may still name anyone by id.
    let (s, _) = h
        .as_token(&h.admin)
        .call("PUT", &path, Some(by_id(&real)))
        .await;
    assert_eq!(s, 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn cluster_labels_and_names_refuse_control_characters() {
    let h = hub_after_run(CLUSTER).await;
    let bad = [
        json!({"labels": {"env": "prod\n2026-01-01T00:00:00Z INFO kerf: forged"}}),
        json!({"labels": {"env\u{1b}[2J": "prod"}}),
        json!({"labels": {"env": "\u{7}"}}),
        json!({"displayName": "East\r\nX-Injected: 1"}),
        json!({"description": "fine\n\u{1b}]0;title\u{7}"}),
    ];
    for patch in bad {
        let (s, body) = h
            .as_token(&h.admin)
            .call(
                "PATCH",
                &format!("/v1/clusters/{CLUSTER}"),
                Some(patch.clone()),
            )
            .await;
        assert_eq!(s, 400, "{patch}: {body}");
        assert_eq!(error_code(&body), "invalid_field");
        assert!(!body.to_string().contains('\u{1b}'), "{body}");
    }
    let ok = json!({"labels": {"kerf.dev/tier": "gold"}, "description": "two\nlines"});
    let (s, body) = h
        .as_token(&h.admin)
        .call("PATCH", &format!("/v1/clusters/{CLUSTER}"), Some(ok))
        .await;
    assert_eq!(s, 200, "{body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hostile_event_batch_gets_an_answer_bounded_by_the_caps() {
    let h = hub_after_run(CLUSTER).await;
    // The original attack: one 30,000-character id and 3,000 unknown keys (~69 KB
    // before; the answer was 90 MB).
    let mut item = crate::support::event(&uuid());
    item["id"] = json!("i".repeat(30_000));
    for k in 0..3000 {
        item[format!("k{k:05}")] = json!(1);
    }
    let batch = json!([item.clone(), item]);
    let (status, body) = Api::new(&h.base, &h.agent)
        .post_events(CLUSTER, &batch)
        .await;
    assert_eq!(status, 400);
    assert_eq!(error_code(&body), "invalid_item");
    let details = &body["error"]["details"];
    assert_eq!(details["total"], 2 * 3001);
    assert_eq!(details["omitted"], 2 * 3001 - 20);
    assert!(
        body.to_string().len() < 16 * 1024,
        "{} bytes",
        body.to_string().len()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn authentication_never_waits_for_the_writer_to_note_a_token_was_used() {
    let h = hub_after_run(CLUSTER).await;
    // The token's "last used" mark is due again.
    h.clock.advance(5 * 60 * 1000);
    let (release, writer) = hold_the_writer(&h).await;
    let me = tokio::time::timeout(
        Duration::from_secs(5),
        h.as_token(&h.admin).call("GET", "/v1/me", None),
    )
    .await;
    let _ = release.send(());
    let (s, body) = me.expect("answered while the writer was busy");
    assert_eq!(s, 200, "{body}");
    writer.await.expect("join");
    // The mark still lands once the writer is free.
    eventually("the token's last use to be marked", secs(10), async || {
        let (_, tokens) = h.api.get("/v1/admin/tokens").await;
        let used = tokens["items"][0]["lastUsedAt"]
            .as_str()
            .map(str::to_string);
        if used.is_some_and(|u| u >= crate::support::hub::at(h.clock.now_ms())) {
            Ok(())
        } else {
            Err(tokens)
        }
    })
    .await;
}

/// Holds the store's one writer until the returned sender is used or dropped.
async fn hold_the_writer(h: &Hub) -> (std::sync::mpsc::Sender<()>, tokio::task::JoinHandle<()>) {
    let (release, held) = std::sync::mpsc::channel::<()>();
    let (entered_tx, entered) = tokio::sync::oneshot::channel();
    let store = h.store.clone();
    let writer = tokio::spawn(async move {
        store
            .writing(move |_tx| {
                let _ = entered_tx.send(());
                let _ = held.recv_timeout(Duration::from_secs(30));
                Ok(())
            })
            .await
            .expect("writer");
    });
    entered.await.expect("the writer is held");
    (release, writer)
}

#[tokio::test]
async fn authentication_never_waits_for_the_writer_to_note_a_session_was_used() {
    let h = hub_after_run(CLUSTER).await;
    let password = "seven quiet rivers bend twice";
    let (s, user) = h
        .as_token(&h.admin)
        .call(
            "POST",
            "/v1/admin/users",
            Some(json!({"username": "sam.session", "role": "viewer", "password": password})),
        )
        .await;
    assert_eq!(s, 201, "{user}");
    let login = h
        .api
        .http
        .post(format!("{}/v1/auth/login", h.base))
        .json(&json!({"username": "sam.session", "password": password}))
        .send()
        .await
        .expect("login");
    assert_eq!(login.status(), 200);
    let cookie = login.headers()["set-cookie"].to_str().expect("ascii");
    let value = cookie
        .split(';')
        .next()
        .and_then(|c| c.strip_prefix("kerf_session="))
        .expect("the session cookie")
        .to_string();
    let digest = kerf::auth::token::hash(&value);
    let seen = |h: &Hub| {
        let (store, digest) = (h.store.clone(), digest.clone());
        async move {
            store
                .reading(move |r| r.session_by_hash(&digest))
                .await
                .expect("read")
                .expect("the session")
                .last_seen_at
        }
    };
    let first = seen(&h).await;
    // The session's "last seen" mark is due again, and the writer is busy.
    h.clock.advance(5 * 60 * 1000);
    let (release, writer) = hold_the_writer(&h).await;
    let me = tokio::time::timeout(
        Duration::from_secs(5),
        h.api
            .http
            .get(format!("{}/v1/me", h.base))
            .header("cookie", format!("kerf_session={value}"))
            .send(),
    )
    .await;
    let _ = release.send(());
    let me = me.expect("answered while the writer was busy").expect("me");
    assert_eq!(me.status(), 200);
    writer.await.expect("join");
    // The mark still lands once the writer is free.
    let what = format!("last seen to move on from {first}");
    eventually(&what, secs(10), async || {
        let at = seen(&h).await;
        if at == h.clock.now_ms() {
            Ok(())
        } else {
            Err(at)
        }
    })
    .await;
}
