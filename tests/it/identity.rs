//! Identity and access through the real binary: logins, lockout, sessions, CSRF, token
//! revocation and expiry, cluster tokens, the config-change audit of every identity
//! action, its atomicity, and that secrets never leak into responses, logs or audit.

use std::time::Duration;

use serde_json::json;

use crate::support::{error_code, event, uuid, within, Api, Cred, DataDir, Session, PASSWORD};

#[tokio::test(flavor = "multi_thread")]
async fn login_succeeds_with_the_right_password_and_fails_alike_for_wrong_ones_and_unknown_users() {
    let data = DataDir::new();
    let password = data.bootstrap_admin("alice");
    let kerf = data.start_for_logins(&[]);
    let api = kerf.api("").recording();
    let (r, session) = api.login("alice", &password).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let cookie = r.headers["set-cookie"].to_str().unwrap();
    for attr in ["HttpOnly", "SameSite=Strict", "Path=/", "Max-Age="] {
        assert!(cookie.contains(attr), "{cookie}");
    }
    assert!(!cookie.contains("Secure"), "plain HTTP: no Secure flag");
    let session = session.expect("cookie");
    let me = api
        .call_as("GET", "/v1/me", Cred::Session(&session), None)
        .await;
    assert_eq!(
        (
            me.status,
            me.body["name"].as_str(),
            me.body["role"].as_str()
        ),
        (200, Some("alice"), Some("admin"))
    );
    let (wrong, s) = api.login("alice", "not-the-password-at-all").await;
    let (unknown, _) = api.login("nobody", "not-the-password-at-all").await;
    assert_eq!((wrong.status, unknown.status), (401, 401));
    assert!(s.is_none());
    assert_eq!(error_code(&wrong.body), "invalid_credentials");
    assert_eq!(
        wrong.body["error"]["message"],
        unknown.body["error"]["message"]
    );
    let bad = api
        .call_as(
            "POST",
            "/v1/auth/login",
            Cred::None,
            Some(json!({"username": "alice"})),
        )
        .await;
    assert_eq!(
        (bad.status, bad.body["error"]["details"]["field"].as_str()),
        (400, Some("password"))
    );
    assert_eq!(
        api.call_as("GET", "/v1/me", Cred::None, None).await.status,
        401
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn failed_logins_lock_the_account_with_429_and_the_lock_lifts_after_the_window() {
    let data = DataDir::new();
    let password = data.bootstrap_admin("alice");
    let kerf = data.start_for_logins(&[
        ("KERF_AUTH__LOGIN_MAX_FAILURES", "3"),
        ("KERF_AUTH__LOGIN_WINDOW_SECONDS", "6"),
    ]);
    let api = kerf.api("").recording();
    for _ in 0..3 {
        assert_eq!(
            api.login("alice", "wrong-password-guess").await.0.status,
            401
        );
    }
    let (locked, _) = api.login("alice", &password).await;
    assert_eq!(
        locked.status, 429,
        "even the right password waits: {}",
        locked.body
    );
    assert_eq!(error_code(&locked.body), "too_many_attempts");
    assert!(locked.body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("try again in"));
    let retry: u64 = locked.headers["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=6).contains(&retry), "Retry-After {retry}");
    let recovered = within(
        "the lock lifted after the window",
        Duration::from_secs(30),
        async || {
            let held = { api.login("alice", &password).await.0.status == 200 };
            if held {
                Ok(())
            } else {
                Err(held)
            }
        },
    )
    .await
    .is_ok();
    assert!(recovered, "the lock lifted after the window");
}

#[tokio::test(flavor = "multi_thread")]
async fn sessions_expire_on_their_own_and_logout_ends_them_on_the_server() {
    let data = DataDir::new();
    let password = data.bootstrap_admin("alice");
    let kerf = data.start_for_logins(&[
        ("KERF_AUTH__SESSION_IDLE_SECONDS", "3"),
        ("KERF_AUTH__SESSION_ABSOLUTE_SECONDS", "5"),
    ]);
    let api = kerf.api("").recording();
    let (_, s) = api.login("alice", &password).await;
    let s = s.expect("session");
    assert_eq!(
        api.call_as("GET", "/v1/me", Cred::Session(&s), None)
            .await
            .status,
        200
    );
    let expired = within("the session expired", Duration::from_secs(30), async || {
        let held = {
            api.call_as("GET", "/v1/me", Cred::Session(&s), None)
                .await
                .status
                == 401
        };
        if held {
            Ok(())
        } else {
            Err(held)
        }
    })
    .await
    .is_ok();
    assert!(expired, "the session expired");
    drop(kerf);
    let kerf = data.start_for_logins(&[]);
    let api = kerf.api("").recording();
    let (_, s) = api.login("alice", &password).await;
    let s = s.expect("session");
    let (_, rotated) = api.login("alice", &password).await;
    assert_ne!(
        rotated.as_ref().expect("session").cookie,
        s.cookie,
        "each login gets a new id"
    );
    let out = api
        .call_as("POST", "/v1/auth/logout", Cred::Session(&s), None)
        .await;
    assert_eq!(out.status, 204);
    assert!(out.headers["set-cookie"]
        .to_str()
        .unwrap()
        .contains("Max-Age=0"));
    let after = api.call_as("GET", "/v1/me", Cred::Session(&s), None).await;
    assert_eq!(
        after.status, 401,
        "the old cookie is dead on the server: {}",
        after.body
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_session_probe_answers_200_signed_in_or_not_and_never_admits_a_dead_credential() {
    let data = DataDir::new();
    let password = data.bootstrap_admin("alice");
    let token = data.admin_token();
    let kerf = data.start_for_logins(&[]);
    let api = kerf.api("").recording();
    let probe = async |cred: Cred<'_>| {
        let r = api.call_as("GET", "/v1/session", cred, None).await;
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(r.headers["cache-control"], "no-store");
        r.body
    };
    let anonymous = json!({"signedIn": false, "me": null});
    assert_eq!(probe(Cred::None).await, anonymous);
    assert_eq!(
        probe(Cred::Bearer("kerf_at_not-a-real-token")).await,
        anonymous
    );
    let by_token = probe(Cred::Bearer(&token)).await;
    assert_eq!(
        (
            by_token["signedIn"].as_bool(),
            by_token["me"]["type"].as_str()
        ),
        (Some(true), Some("token"))
    );
    assert!(by_token["me"].get("csrfToken").is_none(), "{by_token}");
    let s = api.login("alice", &password).await.1.expect("session");
    let by_cookie = probe(Cred::CookieOnly(&s)).await;
    assert_eq!(
        (
            by_cookie["me"]["name"].as_str(),
            by_cookie["me"]["csrfToken"].as_str()
        ),
        (Some("alice"), Some(s.csrf.as_str())),
        "the same answer as GET /v1/me: {by_cookie}"
    );
    let out = api
        .call_as("POST", "/v1/auth/logout", Cred::Session(&s), None)
        .await;
    assert_eq!(out.status, 204);
    assert_eq!(probe(Cred::CookieOnly(&s)).await, anonymous);
}

#[tokio::test(flavor = "multi_thread")]
async fn cookie_authenticated_changes_need_the_csrf_token_and_bearer_ones_do_not() {
    let data = DataDir::new();
    let password = data.bootstrap_admin("alice");
    let token = data.admin_token();
    let kerf = data.start_for_logins(&[]);
    let api = kerf.api("").recording();
    let s = api.login("alice", &password).await.1.expect("session");
    let team = |n: &str| Some(json!({"name": n}));
    let r = api
        .call_as("POST", "/v1/admin/teams", Cred::CookieOnly(&s), team("a"))
        .await;
    assert_eq!(
        (r.status, error_code(&r.body)),
        (403, "csrf_failed".to_string())
    );
    let forged = Session {
        csrf: "kerf_csrf_forged".into(),
        ..s.clone()
    };
    assert_eq!(
        api.call_as("POST", "/v1/admin/teams", Cred::Session(&forged), team("a"))
            .await
            .status,
        403
    );
    assert_eq!(
        api.call_as("POST", "/v1/admin/teams", Cred::Session(&s), team("a"))
            .await
            .status,
        201
    );
    assert_eq!(
        api.call_as("POST", "/v1/admin/teams", Cred::Bearer(&token), team("b"))
            .await
            .status,
        201
    );
    assert_eq!(
        api.call_as("GET", "/v1/admin/teams", Cred::CookieOnly(&s), None)
            .await
            .status,
        200,
        "reads need no token"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn revoked_and_expired_tokens_are_refused() {
    let data = DataDir::new();
    let admin = data.admin_token();
    let kerf = data.start_for_logins(&[]);
    let api = kerf.api("").recording();
    let made = api
        .call_as(
            "POST",
            "/v1/admin/tokens",
            Cred::Bearer(&admin),
            Some(json!({"name": "ci", "role": "viewer"})),
        )
        .await;
    assert_eq!(made.status, 201, "{}", made.body);
    let (value, id) = (
        made.body["value"].as_str().unwrap().to_string(),
        made.body["token"]["id"].as_str().unwrap().to_string(),
    );
    assert_eq!(
        api.call_as("GET", "/v1/me", Cred::Bearer(&value), None)
            .await
            .status,
        200
    );
    // The last use is recorded off the request path: it shows up shortly after.
    let recorded = within("last use recorded", Duration::from_secs(10), async || {
        let held = {
            let listed = api
                .call_as("GET", "/v1/admin/tokens", Cred::Bearer(&admin), None)
                .await;
            listed.body["items"].as_array().is_some_and(|items| {
                items
                    .iter()
                    .any(|t| t["id"] == id.as_str() && t["lastUsedAt"].is_string())
            })
        };
        if held {
            Ok(())
        } else {
            Err(held)
        }
    })
    .await
    .is_ok();
    assert!(recorded, "last use recorded");
    let revoked = api
        .call_as(
            "DELETE",
            &format!("/v1/admin/tokens/{id}"),
            Cred::Bearer(&admin),
            None,
        )
        .await;
    assert_eq!(revoked.status, 200, "{}", revoked.body);
    assert_eq!(
        api.call_as("GET", "/v1/me", Cred::Bearer(&value), None)
            .await
            .status,
        401
    );
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("the clock is after 1970");
    let soon = kerf::timestamp::format_ms(now.as_millis() as i64 + 2_000);
    let short = api
        .call_as(
            "POST",
            "/v1/admin/tokens",
            Cred::Bearer(&admin),
            Some(json!({"name": "brief", "role": "viewer", "expiresAt": soon})),
        )
        .await;
    let short = short.body["value"].as_str().unwrap().to_string();
    assert_eq!(
        api.call_as("GET", "/v1/me", Cred::Bearer(&short), None)
            .await
            .status,
        200
    );
    let expired = within("the token expired", Duration::from_secs(30), async || {
        let held = {
            api.call_as("GET", "/v1/me", Cred::Bearer(&short), None)
                .await
                .status
                == 401
        };
        if held {
            Ok(())
        } else {
            Err(held)
        }
    })
    .await
    .is_ok();
    assert!(expired, "the token expired");
    let past = api
        .call_as(
            "POST",
            "/v1/admin/tokens",
            Cred::Bearer(&admin),
            Some(json!({"name": "x", "role": "viewer", "expiresAt": "2020-01-01T00:00:00Z"})),
        )
        .await;
    assert_eq!(
        (past.status, past.body["error"]["details"]["field"].as_str()),
        (400, Some("expiresAt"))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cluster_token_reaches_only_its_own_clusters_agent_endpoints() {
    let data = DataDir::new();
    let prod = data.create_cluster("prod");
    data.create_cluster("staging");
    let kerf = data.start_for_logins(&[]);
    let api = kerf.api("").recording();
    for path in [
        "/v1/admin/users",
        "/v1/admin/tokens",
        "/v1/audit/config",
        "/v1/me",
        "/v1/audit",
    ] {
        let r = api.call_as("GET", path, Cred::Bearer(&prod), None).await;
        assert_eq!(r.status, 403, "{path}: {}", r.body);
    }
    let batch = json!([event(&uuid())]);
    assert_eq!(
        Api::new(&api.base, &prod)
            .post_events("staging", &batch)
            .await
            .0,
        403
    );
    assert_eq!(
        Api::new(&api.base, &prod)
            .post_events("prod", &batch)
            .await
            .0,
        200
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_audit_insert_rolls_the_user_creation_back() {
    let data = DataDir::new();
    let admin = data.admin_token();
    let kerf = data.start_for_logins(&[]);
    let api = kerf.api("").recording();
    let db = rusqlite::Connection::open(data.path().join("kerf.db")).expect("open db");
    db.busy_timeout(Duration::from_secs(5)).unwrap();
    db.execute_batch(
        "CREATE TRIGGER audit_down BEFORE INSERT ON audit_events WHEN NEW.type = 'config_changed'
         BEGIN SELECT RAISE(ABORT, 'audit is down'); END;",
    )
    .unwrap();
    let body = json!({"username": "bob", "password": PASSWORD});
    let r = api
        .call_as(
            "POST",
            "/v1/admin/users",
            Cred::Bearer(&admin),
            Some(body.clone()),
        )
        .await;
    assert_eq!(r.status, 500, "{}", r.body);
    let users = api
        .call_as("GET", "/v1/admin/users", Cred::Bearer(&admin), None)
        .await;
    assert!(
        users.body["items"].as_array().unwrap().is_empty(),
        "rolled back: {}",
        users.body
    );
    db.execute_batch("DROP TRIGGER audit_down").unwrap();
    assert_eq!(
        api.call_as("POST", "/v1/admin/users", Cred::Bearer(&admin), Some(body))
            .await
            .status,
        201
    );
}

#[test]
fn users_create_takes_a_password_file_and_refuses_weak_ones_and_duplicates() {
    let data = DataDir::new();
    let file = data.path().join("pw");
    std::fs::write(&file, format!("{PASSWORD}\n")).unwrap();
    let out = data.run(&[
        "users",
        "create",
        "--role",
        "viewer",
        "carol",
        "--password-file",
        file.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stdout.is_empty(),
        "nothing printed when the password came from a file"
    );
    assert_eq!(
        data.run(&["users", "create", "carol"]).status.code(),
        Some(2),
        "duplicate"
    );
    std::fs::write(&file, "password1234\n").unwrap();
    let weak = data.run(&[
        "users",
        "create",
        "dave",
        "--password-file",
        file.to_str().unwrap(),
    ]);
    assert_eq!(weak.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&weak.stderr).contains("too common"));
}
