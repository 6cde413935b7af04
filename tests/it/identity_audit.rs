//! Every identity action writes one `config_changed` record with actor, target,
//! before/after and reason; a team-admin's change names the team; and no password, token
//! value or hash reaches a response body (bar the one-time reveal), a debug log line or
//! the audit table.

use serde_json::{json, Value};

use crate::support::{Cred, DataDir, PASSWORD};

fn assert_change(
    items: &[Value],
    actor: (&str, &str),
    target: (&str, &str),
    sides: (bool, bool),
    reason: &str,
) {
    let c = items
        .iter()
        .find(|c| c["reason"] == reason)
        .unwrap_or_else(|| panic!("no change with reason {reason}: {items:#?}"));
    assert_eq!(
        (c["actor"]["type"].as_str(), c["actor"]["name"].as_str()),
        (Some(actor.0), Some(actor.1)),
        "{c}"
    );
    assert_eq!(
        (c["target"]["type"].as_str(), c["target"]["id"].as_str()),
        (Some(target.0), Some(target.1)),
        "{c}"
    );
    assert_eq!(
        (c["before"].is_object(), c["after"].is_object()),
        sides,
        "{c}"
    );
    assert!(c["id"].is_string() && c["time"].is_string(), "{c}");
}

#[tokio::test(flavor = "multi_thread")]
async fn identity_changes_are_audited_completely_and_secrets_leak_nowhere() {
    let data = DataDir::new();
    let first = data.bootstrap_admin("alice");
    let kerf = data.start_for_logins(&[]);
    let api = kerf.api("").recording();
    let alice = api.login("alice", &first).await.1.expect("alice session");
    let a = Cred::Session(&alice);

    let bob = api
        .call_as(
            "POST",
            "/v1/admin/users",
            a,
            Some(json!({"username": "bob", "password": PASSWORD, "reason": "r-create"})),
        )
        .await;
    assert_eq!(bob.status, 201, "{}", bob.body);
    assert!(
        bob.body.get("oneTimePassword").is_none(),
        "a given password is not echoed"
    );
    let bob_id = bob.body["user"]["id"].as_str().unwrap().to_string();
    let weak = api
        .call_as(
            "POST",
            "/v1/admin/users",
            a,
            Some(json!({"username": "eve", "password": "password1234"})),
        )
        .await;
    assert_eq!(
        (weak.status, weak.body["error"]["details"]["field"].as_str()),
        (400, Some("password"))
    );
    let r = api
        .call_as(
            "PATCH",
            &format!("/v1/admin/users/{bob_id}"),
            a,
            Some(json!({"role": "viewer", "reason": "r-update"})),
        )
        .await;
    assert_eq!((r.status, r.body["role"].as_str()), (200, Some("viewer")));
    let reset = api
        .call_as(
            "POST",
            &format!("/v1/admin/users/{bob_id}/password-reset"),
            a,
            Some(json!({"reason": "r-reset"})),
        )
        .await;
    assert_eq!(reset.status, 200, "{}", reset.body);
    let otp = reset.body["oneTimePassword"]
        .as_str()
        .expect("one-time password")
        .to_string();
    assert_eq!(
        api.login("bob", PASSWORD).await.0.status,
        401,
        "the old password is gone"
    );
    let carol = api
        .call_as(
            "POST",
            "/v1/admin/users",
            a,
            Some(json!({"username": "carol", "reason": "r-create-carol"})),
        )
        .await;
    let carol_id = carol.body["user"]["id"].as_str().unwrap().to_string();
    let carol_otp = carol.body["oneTimePassword"]
        .as_str()
        .expect("generated")
        .to_string();

    let tok = api
        .call_as(
            "POST",
            "/v1/admin/tokens",
            a,
            Some(json!({"name": "deploy", "role": "editor", "reason": "r-token"})),
        )
        .await;
    assert_eq!(tok.status, 201, "{}", tok.body);
    let (value, tok_id) = (
        tok.body["value"].as_str().unwrap().to_string(),
        tok.body["token"]["id"].as_str().unwrap().to_string(),
    );
    assert_eq!(
        api.call_as(
            "DELETE",
            &format!("/v1/admin/tokens/{tok_id}?reason=r-revoke"),
            a,
            None
        )
        .await
        .status,
        200
    );

    let team = api
        .call_as(
            "POST",
            "/v1/admin/teams",
            a,
            Some(json!({
            "name": "payments", "namespaces": [{"cluster": "prod", "namespace": "pay-*"}],
            "members": [{"userId": bob_id, "role": "team-admin"}], "reason": "r-team"})),
        )
        .await;
    assert_eq!(team.status, 201, "{}", team.body);
    let team_id = team.body["id"].as_str().unwrap().to_string();
    let bob_s = api.login("bob", &otp).await.1.expect("bob session");
    let me = api
        .call_as("GET", "/v1/me", Cred::Session(&bob_s), None)
        .await;
    assert_eq!(me.body["teams"][0]["role"], "team-admin", "{}", me.body);
    // A team-admin keeps current members by id and adds new ones by username.
    let members = json!({"members": [{"userId": bob_id, "role": "team-admin"}, {"username": "carol", "role": "team-viewer"}], "reason": "r-members"});
    let r = api
        .call_as(
            "PUT",
            &format!("/v1/admin/teams/{team_id}/members"),
            Cred::Session(&bob_s),
            Some(members),
        )
        .await;
    assert_eq!(r.status, 200, "a team-admin manages members: {}", r.body);
    let r = api
        .call_as(
            "PATCH",
            &format!("/v1/admin/teams/{team_id}"),
            Cred::Session(&bob_s),
            Some(json!({"namespaces": [{"cluster": "*", "namespace": "*"}]})),
        )
        .await;
    assert_eq!(r.status, 403, "but cannot widen the team's namespaces");
    let r = api
        .call_as(
            "PATCH",
            &format!("/v1/admin/teams/{team_id}"),
            a,
            Some(json!({"description": "card payments", "reason": "r-team-update"})),
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(
        api.call_as(
            "DELETE",
            &format!("/v1/admin/teams/{team_id}?reason=r-team-delete"),
            a,
            None
        )
        .await
        .status,
        204
    );
    assert_eq!(
        api.call_as(
            "DELETE",
            &format!("/v1/admin/users/{carol_id}?reason=r-delete"),
            a,
            None
        )
        .await
        .status,
        204
    );
    let me = api
        .call_as("GET", "/v1/me", Cred::Session(&alice), None)
        .await;
    let last = api
        .call_as(
            "PATCH",
            &format!("/v1/admin/users/{}", me.body["id"].as_str().unwrap()),
            a,
            Some(json!({"role": null})),
        )
        .await;
    assert_eq!(
        (last.status, last.body["error"]["code"].as_str()),
        (409, Some("refused")),
        "the last admin stays"
    );

    let admin = ("user", "alice");
    let ch = |action: &'static str| {
        let api = api.clone();
        let alice = alice.clone();
        async move {
            let r = api
                .call_as(
                    "GET",
                    &format!("/v1/audit/config?action={action}"),
                    Cred::Session(&alice),
                    None,
                )
                .await;
            r.body["items"].as_array().expect("items").clone()
        }
    };
    assert_change(
        &ch("UserCreated").await,
        admin,
        ("user", &bob_id),
        (false, true),
        "r-create",
    );
    assert_change(
        &ch("UserUpdated").await,
        admin,
        ("user", &bob_id),
        (true, true),
        "r-update",
    );
    assert_change(
        &ch("PasswordReset").await,
        admin,
        ("user", &bob_id),
        (true, true),
        "r-reset",
    );
    assert_change(
        &ch("UserDeleted").await,
        admin,
        ("user", &carol_id),
        (true, false),
        "r-delete",
    );
    assert_change(
        &ch("TokenCreated").await,
        admin,
        ("token", &tok_id),
        (false, true),
        "r-token",
    );
    assert_change(
        &ch("TokenRevoked").await,
        admin,
        ("token", &tok_id),
        (true, true),
        "r-revoke",
    );
    assert_change(
        &ch("TeamCreated").await,
        admin,
        ("team", &team_id),
        (false, true),
        "r-team",
    );
    assert_change(
        &ch("TeamUpdated").await,
        admin,
        ("team", &team_id),
        (true, true),
        "r-team-update",
    );
    assert_change(
        &ch("TeamUpdated").await,
        ("user", "bob"),
        ("team", &team_id),
        (true, true),
        "r-members",
    );
    assert_change(
        &ch("TeamDeleted").await,
        admin,
        ("team", &team_id),
        (true, false),
        "r-team-delete",
    );
    let updates = ch("TeamUpdated").await;
    let by_bob = updates.iter().find(|c| c["reason"] == "r-members").unwrap();
    assert_eq!(
        by_bob["actor"]["teams"],
        json!([{"id": team_id, "name": "payments"}]),
        "the team role is named"
    );
    let by_alice = updates
        .iter()
        .find(|c| c["reason"] == "r-team-update")
        .unwrap();
    assert_eq!(
        by_alice["actor"]["teams"],
        json!([]),
        "a fleet role names no team"
    );
    let revoked = ch("TokenRevoked").await;
    assert!(
        revoked[0]["before"]["revokedAt"].is_null() && revoked[0]["after"]["revokedAt"].is_string()
    );
    let cli = ch("UserCreated").await;
    assert!(
        cli.iter().any(|c| c["actor"]["type"] == "system"),
        "the CLI bootstrap is audited too"
    );
    let workload = api
        .call_as("GET", "/v1/audit", Cred::Session(&alice), None)
        .await;
    assert_eq!(
        workload.body["items"],
        json!([]),
        "config changes stay out of /v1/audit"
    );
    let page = api
        .call_as(
            "GET",
            "/v1/audit/config?limit=2",
            Cred::Session(&alice),
            None,
        )
        .await;
    let next = page.body["next"].as_str().expect("more pages").to_string();
    let rest = api
        .call_as(
            "GET",
            &format!("/v1/audit/config?limit=500&next={next}"),
            Cred::Session(&alice),
            None,
        )
        .await;
    assert!(rest.body["items"].as_array().unwrap().len() >= 10);

    // Secret hygiene.
    let token_hash = kerf::auth::token::hash(&value);
    let bodies = api.seen();
    for (secret, reveals) in [
        (PASSWORD, 0),
        (first.as_str(), 0),
        (otp.as_str(), 1),
        (carol_otp.as_str(), 1),
        (value.as_str(), 1),
        (token_hash.as_str(), 0),
    ] {
        let n = bodies.iter().filter(|b| b.contains(secret)).count();
        assert_eq!(n, reveals, "secret {secret:?} in {n} response bodies");
    }
    assert!(
        bodies.iter().all(|b| !b.contains("$argon2")),
        "no hash in any body"
    );
    let logs = kerf.log_text();
    assert!(logs.contains("DEBUG"), "the server logged at debug level");
    for secret in [
        PASSWORD,
        &first,
        &otp,
        &carol_otp,
        &value,
        &token_hash,
        &alice.cookie,
        &bob_s.cookie,
        "$argon2",
    ] {
        assert!(!logs.contains(secret), "secret {secret:?} in the log");
    }
    let db = rusqlite::Connection::open(data.path().join("kerf.db")).unwrap();
    let mut stmt = db.prepare("SELECT * FROM audit_events").unwrap();
    let cols = stmt.column_count();
    let rows: Vec<String> = stmt
        .query_map([], |r| {
            Ok((0..cols)
                .map(|i| {
                    r.get::<_, rusqlite::types::Value>(i)
                        .map(|v| format!("{v:?}"))
                        .unwrap_or_default()
                })
                .collect::<Vec<_>>()
                .join("|"))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert!(rows.len() >= 11);
    for secret in [
        PASSWORD,
        &first,
        &otp,
        &carol_otp,
        &value,
        &token_hash,
        "$argon2",
        &alice.csrf,
    ] {
        assert!(
            rows.iter().all(|r| !r.contains(secret)),
            "secret {secret:?} in the audit table"
        );
    }
}
