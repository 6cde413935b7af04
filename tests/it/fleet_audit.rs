//! Fleet configuration through the real binary: every cluster and automation action is
//! one `config_changed` row with the right actor, target, before/after and reason; roles
//! follow the matrix; retiring and rotating lock the old agent token out; a pause with
//! `resumeAt` is lifted by the server's own ticker (actor `system`).

use serde_json::{json, Value};

use crate::support::{self, Api, DataDir};

impl Api {
    /// The newest config change with `action`.
    async fn last(&self, admin: &str, action: &str) -> Value {
        let (s, v) = self
            .as_token(admin)
            .call(
                "GET",
                &format!("/v1/audit/config?action={action}&limit=1"),
                None,
            )
            .await;
        assert_eq!(s, 200, "{v}");
        v["items"][0].clone()
    }

    async fn count(&self, admin: &str, action: &str) -> usize {
        let (_, v) = self
            .as_token(admin)
            .call("GET", &format!("/v1/audit/config?action={action}"), None)
            .await;
        v["items"].as_array().map_or(0, Vec::len)
    }
}

fn assert_actor(row: &Value, name: &str) {
    assert_eq!(row["actor"]["type"], "token", "{row}");
    assert_eq!(row["actor"]["name"], name, "{row}");
    assert_eq!(
        row["actor"]["teams"],
        json!([]),
        "a fleet role allowed it: {row}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn cluster_actions_are_audited_with_actor_target_before_after_and_reason() {
    let dir = DataDir::new();
    let admin = dir.token("ops-admin", "admin");
    let editor = dir.token("ops-editor", "editor");
    let viewer = dir.token("ops-viewer", "viewer");
    let cli_agent = dir.create_cluster("legacy");
    let kerf = dir.start();
    let api = Api::new(kerf.url(""), "");

    let row = api.last(&admin, "ClusterCreated").await;
    assert_eq!(
        row["actor"]["type"], "system",
        "the CLI registers as system: {row}"
    );
    assert_eq!(
        row["target"],
        json!({"type": "cluster", "id": "legacy", "name": "legacy"})
    );
    assert!(!cli_agent.is_empty());

    // Register: admin only; the token is in the answer, never in the audit row.
    let body = json!({"name": "prod", "displayName": "Production", "labels": {"env": "prod"}, "reason": "new region"});
    for t in [&viewer, &editor] {
        assert_eq!(
            api.as_token(t)
                .call("POST", "/v1/clusters", Some(body.clone()))
                .await
                .0,
            403
        );
    }
    let (s, created) = api
        .as_token(&admin)
        .call("POST", "/v1/clusters", Some(body.clone()))
        .await;
    assert_eq!(s, 201, "{created}");
    let agent = created["token"].as_str().expect("token").to_string();
    assert_eq!(
        api.as_token(&admin)
            .call("POST", "/v1/clusters", Some(body))
            .await
            .0,
        409
    );
    let row = api.last(&admin, "ClusterCreated").await;
    assert_actor(&row, "ops-admin");
    assert_eq!(
        row["target"],
        json!({"type": "cluster", "id": "prod", "name": "prod"})
    );
    assert_eq!(row["before"], Value::Null);
    assert_eq!(row["after"]["displayName"], "Production");
    assert_eq!(row["after"]["labels"], json!({"env": "prod"}));
    assert_eq!(row["reason"], "new region");
    assert!(
        !row.to_string().contains(&agent),
        "no token value in the audit"
    );

    // Update metadata.
    let patch = json!({"description": "EU shop", "reason": "describe it"});
    assert_eq!(
        api.as_token(&editor)
            .call("PATCH", "/v1/clusters/prod", Some(patch.clone()))
            .await
            .0,
        403
    );
    assert_eq!(
        api.as_token(&admin)
            .call("PATCH", "/v1/clusters/prod", Some(patch))
            .await
            .0,
        200
    );
    let row = api.last(&admin, "ClusterUpdated").await;
    assert_actor(&row, "ops-admin");
    assert_eq!(
        (
            row["before"]["description"].clone(),
            row["after"]["description"].clone()
        ),
        (json!(""), json!("EU shop"))
    );
    assert_eq!(row["reason"], "describe it");

    // Freeze: editor may.
    let freeze = json!({"enabled": true, "reason": "black friday"});
    assert_eq!(
        api.as_token(&viewer)
            .call("PUT", "/v1/clusters/prod/freeze", Some(freeze.clone()))
            .await
            .0,
        403
    );
    assert_eq!(
        api.as_token(&editor)
            .call("PUT", "/v1/clusters/prod/freeze", Some(freeze))
            .await
            .0,
        200
    );
    let row = api.last(&admin, "ClusterUpdated").await;
    assert_actor(&row, "ops-editor");
    assert_eq!(
        (
            row["before"]["freeze"]["enabled"].clone(),
            row["after"]["freeze"]["enabled"].clone()
        ),
        (json!(false), json!(true))
    );
    assert_eq!(row["reason"], "black friday");
    let (s, cfg) = api
        .as_token(&agent)
        .call("GET", "/v1/clusters/prod/config", None)
        .await;
    assert_eq!(s, 200, "{cfg}");
    assert_eq!(
        (
            cfg["flags"]["frozen"].clone(),
            cfg["freeze"]["reason"].clone()
        ),
        (json!(true), json!("black friday"))
    );
    assert!(cfg["agent"]["loopIntervalSeconds"].as_u64().is_some());
    assert!(cfg["workloads"].is_array());

    // Pause and resume one cluster.
    let pause = json!({"reason": "incident 7"});
    assert_eq!(
        api.as_token(&viewer)
            .call("POST", "/v1/clusters/prod/pause", Some(pause.clone()))
            .await
            .0,
        403
    );
    assert_eq!(
        api.as_token(&editor)
            .call("POST", "/v1/clusters/prod/pause", Some(json!({})))
            .await
            .0,
        400,
        "a reason is required"
    );
    assert_eq!(
        api.as_token(&editor)
            .call("POST", "/v1/clusters/prod/pause", Some(pause))
            .await
            .0,
        200
    );
    let row = api.last(&admin, "AutomationPaused").await;
    assert_actor(&row, "ops-editor");
    assert_eq!(
        row["target"],
        json!({"type": "automation", "id": "prod", "name": "prod"})
    );
    assert_eq!(
        (
            row["before"]["paused"].clone(),
            row["after"]["paused"].clone()
        ),
        (json!(false), json!(true))
    );
    assert_eq!(row["reason"], "incident 7");
    let (_, cfg) = api
        .as_token(&agent)
        .call("GET", "/v1/clusters/prod/config", None)
        .await;
    assert_eq!(
        (
            cfg["flags"]["paused"].clone(),
            cfg["flags"]["pauseScope"].clone()
        ),
        (json!(true), json!("cluster"))
    );
    assert_eq!(
        api.as_token(&editor)
            .call(
                "POST",
                "/v1/clusters/prod/resume",
                Some(json!({"reason": "fixed"}))
            )
            .await
            .0,
        200
    );
    let row = api.last(&admin, "AutomationResumed").await;
    assert_actor(&row, "ops-editor");
    assert_eq!(
        (
            row["before"]["paused"].clone(),
            row["after"]["paused"].clone()
        ),
        (json!(true), json!(false))
    );
    assert_eq!(row["reason"], "fixed");
    assert_eq!(
        api.as_token(&editor)
            .call("POST", "/v1/clusters/prod/resume", Some(json!({})))
            .await
            .0,
        409
    );

    // The fleet.
    assert_eq!(
        api.as_token(&editor)
            .call(
                "POST",
                "/v1/fleet/pause",
                Some(json!({"reason": "freeze all"}))
            )
            .await
            .0,
        200
    );
    let row = api.last(&admin, "AutomationPaused").await;
    assert_eq!(
        row["target"],
        json!({"type": "automation", "id": "*", "name": "*"})
    );
    let (_, cfg) = api
        .as_token(&agent)
        .call("GET", "/v1/clusters/prod/config", None)
        .await;
    assert_eq!(cfg["flags"]["pauseScope"], "fleet");
    assert_eq!(
        api.as_token(&editor)
            .call("POST", "/v1/fleet/resume", Some(json!({})))
            .await
            .0,
        200
    );
    assert_eq!(
        api.last(&admin, "AutomationResumed").await["target"]["id"],
        "*"
    );

    // Rotate the agent token: the old one is refused at once.
    let (s, rotated) = api
        .as_token(&admin)
        .call(
            "POST",
            "/v1/clusters/prod/token",
            Some(json!({"reason": "leaked"})),
        )
        .await;
    assert_eq!(s, 200, "{rotated}");
    let fresh = rotated["token"].as_str().expect("token").to_string();
    assert_eq!(
        api.as_token(&agent)
            .call("GET", "/v1/clusters/prod/config", None)
            .await
            .0,
        401
    );
    assert_eq!(
        api.as_token(&fresh)
            .call("GET", "/v1/clusters/prod/config", None)
            .await
            .0,
        200
    );
    let row = api.last(&admin, "ClusterUpdated").await;
    assert_actor(&row, "ops-admin");
    assert_eq!(row["before"]["tokenRotatedAt"], Value::Null);
    assert!(row["after"]["tokenRotatedAt"].is_string());
    assert_eq!(row["reason"], "leaked");
    assert!(!row.to_string().contains(&fresh));

    // Heartbeat and readiness.
    let hb = json!({"agentVersion": "0.1.0", "kubernetesVersion": "v1.33.0", "capabilities": {"inPlaceResize": true}});
    let (s, r) = api
        .as_token(&fresh)
        .call("POST", "/v1/clusters/prod/heartbeat", Some(hb))
        .await;
    assert_eq!(s, 200, "{r}");
    let (s, r) = api
        .as_token(&viewer)
        .call("GET", "/v1/clusters/prod/readiness", None)
        .await;
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["checks"]["heartbeat"]["status"], "pass");
    assert_eq!(
        r["checks"]["heartbeat"]["capabilities"]["inPlaceResize"],
        true
    );

    // Retire: soft; the agent is locked out, the record stays.
    assert_eq!(
        api.as_token(&editor)
            .call("DELETE", "/v1/clusters/prod?reason=decommissioned", None)
            .await
            .0,
        403
    );
    assert_eq!(
        api.as_token(&admin)
            .call("DELETE", "/v1/clusters/prod?reason=decommissioned", None)
            .await
            .0,
        204
    );
    let row = api.last(&admin, "ClusterDeleted").await;
    assert_actor(&row, "ops-admin");
    assert_eq!(row["before"]["state"], "active");
    assert_eq!(row["after"], Value::Null);
    assert_eq!(row["reason"], "decommissioned");
    assert_eq!(
        api.as_token(&fresh)
            .call("GET", "/v1/clusters/prod/config", None)
            .await
            .0,
        401
    );
    let (s, c) = api
        .as_token(&viewer)
        .call("GET", "/v1/clusters/prod", None)
        .await;
    assert_eq!((s, c["state"].clone()), (200, json!("retired")));
    assert_eq!(
        api.as_token(&admin)
            .call(
                "PATCH",
                "/v1/clusters/prod",
                Some(json!({"description": "x"}))
            )
            .await
            .0,
        409
    );
    assert_eq!(
        api.as_token(&admin)
            .call("DELETE", "/v1/clusters/prod", None)
            .await
            .0,
        409
    );
    assert_eq!(api.count(&admin, "ClusterDeleted").await, 1);
    kerf.stop();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_servers_ticker_lifts_a_pause_at_resume_at_as_the_system() {
    let dir = DataDir::new();
    let admin = dir.token("ops", "admin");
    let agent = dir.create_cluster("edge");
    let kerf = dir.start();
    let api = Api::new(kerf.url(""), "");
    let resume_at =
        kerf::timestamp::format_ms(kerf::clock::Clock::now_ms(&kerf::clock::SystemClock) + 1_500);
    let body = json!({"reason": "short", "resumeAt": resume_at});
    assert_eq!(
        api.as_token(&admin)
            .call("POST", "/v1/clusters/edge/pause", Some(body))
            .await
            .0,
        200
    );
    let row = support::eventually("resumed by the ticker", support::secs(30), async || {
        let row = api.last(&admin, "AutomationResumed").await;
        (!row.is_null()).then_some(row)
    })
    .await;
    assert_eq!(row["actor"]["type"], "system");
    assert_eq!(row["target"]["id"], "edge");
    let (_, cfg) = api
        .as_token(&agent)
        .call("GET", "/v1/clusters/edge/config", None)
        .await;
    assert_eq!(cfg["flags"]["paused"], false);
    kerf.stop();
}
