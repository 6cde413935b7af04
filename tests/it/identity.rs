//! Identity and access through the real binary: logins, lockout, sessions, CSRF, token
//! revocation and expiry, cluster tokens, the config-change audit of every identity
//! action, its atomicity, and that secrets never leak into responses, logs or audit.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::{client, error_code, event, post_events, stdout_line, uuid, DataDir, Kerf};

/// A distinctive password nobody would type by accident.
pub const PASSWORD: &str = "Zebra-Quokka-7781-Lantern";

/// An HTTP client that keeps every response body it saw (for the hygiene check).
#[derive(Clone)]
pub struct Api {
    pub http: reqwest::Client,
    pub base: String,
    pub seen: Arc<Mutex<Vec<String>>>,
}

/// How a request authenticates.
#[derive(Clone, Copy)]
pub enum Cred<'a> {
    None,
    Bearer(&'a str),
    Session(&'a Session),
    /// The cookie without the CSRF header.
    CookieOnly(&'a Session),
}

#[derive(Clone, Debug)]
pub struct Session {
    pub cookie: String,
    pub csrf: String,
}

pub struct Reply {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
}

impl Api {
    pub fn new(kerf: &Kerf) -> Api {
        Api {
            http: client(),
            base: kerf.url(""),
            seen: Default::default(),
        }
    }

    pub async fn call(
        &self,
        method: &str,
        path: &str,
        cred: Cred<'_>,
        body: Option<Value>,
    ) -> Reply {
        let m = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
        let mut rb = self.http.request(m, format!("{}{path}", self.base));
        rb = match cred {
            Cred::None => rb,
            Cred::Bearer(t) => rb.bearer_auth(t),
            Cred::Session(s) => rb
                .header("cookie", format!("kerf_session={}", s.cookie))
                .header("x-csrf-token", &s.csrf),
            Cred::CookieOnly(s) => rb.header("cookie", format!("kerf_session={}", s.cookie)),
        };
        if let Some(b) = body {
            rb = rb.json(&b);
        }
        let resp = rb.send().await.expect("send");
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let text = resp.text().await.expect("body");
        self.seen.lock().expect("lock").push(text.clone());
        let body = serde_json::from_str(&text).unwrap_or(Value::Null);
        Reply {
            status,
            headers,
            body,
        }
    }

    pub async fn login(&self, user: &str, password: &str) -> (Reply, Option<Session>) {
        let r = self
            .call(
                "POST",
                "/v1/auth/login",
                Cred::None,
                Some(json!({"username": user, "password": password})),
            )
            .await;
        let session = r.headers.get("set-cookie").map(|c| {
            let c = c.to_str().expect("ascii");
            Session {
                cookie: c
                    .split(';')
                    .next()
                    .expect("pair")
                    .trim_start_matches("kerf_session=")
                    .to_string(),
                csrf: r.body["csrfToken"].as_str().unwrap_or_default().to_string(),
            }
        });
        (r, session)
    }
}

pub fn start(data: &DataDir, env: &[(&str, &str)]) -> Kerf {
    let mut all = vec![("KERF_LOG", "debug"), ("KERF_AUTH__ARGON2_ITERATIONS", "1")];
    all.extend_from_slice(env);
    Kerf::start(data.path(), &all)
}

/// `kerf users create --admin NAME`: the one-time password.
pub fn bootstrap_admin(data: &DataDir, name: &str) -> String {
    stdout_line(&data.run(&["users", "create", "--admin", name]))
}

/// Polls `check` until it holds or `limit` passes.
async fn eventually<F, Fut>(limit: Duration, mut check: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if check().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

#[tokio::test(flavor = "multi_thread")]
async fn login_succeeds_with_the_right_password_and_fails_alike_for_wrong_ones_and_unknown_users() {
    let data = DataDir::new();
    let password = bootstrap_admin(&data, "alice");
    let kerf = start(&data, &[]);
    let api = Api::new(&kerf);
    let (r, session) = api.login("alice", &password).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let cookie = r.headers["set-cookie"].to_str().unwrap();
    for attr in ["HttpOnly", "SameSite=Strict", "Path=/", "Max-Age="] {
        assert!(cookie.contains(attr), "{cookie}");
    }
    assert!(!cookie.contains("Secure"), "plain HTTP: no Secure flag");
    let session = session.expect("cookie");
    let me = api
        .call("GET", "/v1/me", Cred::Session(&session), None)
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
        .call(
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
        api.call("GET", "/v1/me", Cred::None, None).await.status,
        401
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn failed_logins_lock_the_account_with_429_and_the_lock_lifts_after_the_window() {
    let data = DataDir::new();
    let password = bootstrap_admin(&data, "alice");
    let kerf = start(
        &data,
        &[
            ("KERF_AUTH__LOGIN_MAX_FAILURES", "3"),
            ("KERF_AUTH__LOGIN_WINDOW_SECONDS", "6"),
        ],
    );
    let api = Api::new(&kerf);
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
    let recovered = eventually(Duration::from_secs(30), || async {
        api.login("alice", &password).await.0.status == 200
    })
    .await;
    assert!(recovered, "the lock lifted after the window");
}

#[tokio::test(flavor = "multi_thread")]
async fn sessions_expire_on_their_own_and_logout_ends_them_on_the_server() {
    let data = DataDir::new();
    let password = bootstrap_admin(&data, "alice");
    let kerf = start(
        &data,
        &[
            ("KERF_AUTH__SESSION_IDLE_SECONDS", "3"),
            ("KERF_AUTH__SESSION_ABSOLUTE_SECONDS", "5"),
        ],
    );
    let api = Api::new(&kerf);
    let (_, s) = api.login("alice", &password).await;
    let s = s.expect("session");
    assert_eq!(
        api.call("GET", "/v1/me", Cred::Session(&s), None)
            .await
            .status,
        200
    );
    let expired = eventually(Duration::from_secs(30), || async {
        api.call("GET", "/v1/me", Cred::Session(&s), None)
            .await
            .status
            == 401
    })
    .await;
    assert!(expired, "the session expired");
    drop(kerf);
    let kerf = start(&data, &[]);
    let api = Api::new(&kerf);
    let (_, s) = api.login("alice", &password).await;
    let s = s.expect("session");
    let (_, rotated) = api.login("alice", &password).await;
    assert_ne!(
        rotated.as_ref().expect("session").cookie,
        s.cookie,
        "each login gets a new id"
    );
    let out = api
        .call("POST", "/v1/auth/logout", Cred::Session(&s), None)
        .await;
    assert_eq!(out.status, 204);
    assert!(out.headers["set-cookie"]
        .to_str()
        .unwrap()
        .contains("Max-Age=0"));
    let after = api.call("GET", "/v1/me", Cred::Session(&s), None).await;
    assert_eq!(
        after.status, 401,
        "the old cookie is dead on the server: {}",
        after.body
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn cookie_authenticated_changes_need_the_csrf_token_and_bearer_ones_do_not() {
    let data = DataDir::new();
    let password = bootstrap_admin(&data, "alice");
    let token = data.admin_token();
    let kerf = start(&data, &[]);
    let api = Api::new(&kerf);
    let s = api.login("alice", &password).await.1.expect("session");
    let team = |n: &str| Some(json!({"name": n}));
    let r = api
        .call("POST", "/v1/admin/teams", Cred::CookieOnly(&s), team("a"))
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
        api.call("POST", "/v1/admin/teams", Cred::Session(&forged), team("a"))
            .await
            .status,
        403
    );
    assert_eq!(
        api.call("POST", "/v1/admin/teams", Cred::Session(&s), team("a"))
            .await
            .status,
        201
    );
    assert_eq!(
        api.call("POST", "/v1/admin/teams", Cred::Bearer(&token), team("b"))
            .await
            .status,
        201
    );
    assert_eq!(
        api.call("GET", "/v1/admin/teams", Cred::CookieOnly(&s), None)
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
    let kerf = start(&data, &[]);
    let api = Api::new(&kerf);
    let made = api
        .call(
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
        api.call("GET", "/v1/me", Cred::Bearer(&value), None)
            .await
            .status,
        200
    );
    // The last use is recorded off the request path: it shows up shortly after.
    let recorded = eventually(Duration::from_secs(10), || async {
        let listed = api
            .call("GET", "/v1/admin/tokens", Cred::Bearer(&admin), None)
            .await;
        listed.body["items"].as_array().is_some_and(|items| {
            items
                .iter()
                .any(|t| t["id"] == id.as_str() && t["lastUsedAt"].is_string())
        })
    })
    .await;
    assert!(recorded, "last use recorded");
    let revoked = api
        .call(
            "DELETE",
            &format!("/v1/admin/tokens/{id}"),
            Cred::Bearer(&admin),
            None,
        )
        .await;
    assert_eq!(revoked.status, 200, "{}", revoked.body);
    assert_eq!(
        api.call("GET", "/v1/me", Cred::Bearer(&value), None)
            .await
            .status,
        401
    );
    let soon = time::OffsetDateTime::now_utc() + time::Duration::seconds(2);
    let soon = soon
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    let short = api
        .call(
            "POST",
            "/v1/admin/tokens",
            Cred::Bearer(&admin),
            Some(json!({"name": "brief", "role": "viewer", "expiresAt": soon})),
        )
        .await;
    let short = short.body["value"].as_str().unwrap().to_string();
    assert_eq!(
        api.call("GET", "/v1/me", Cred::Bearer(&short), None)
            .await
            .status,
        200
    );
    let expired = eventually(Duration::from_secs(30), || async {
        api.call("GET", "/v1/me", Cred::Bearer(&short), None)
            .await
            .status
            == 401
    })
    .await;
    assert!(expired, "the token expired");
    let past = api
        .call(
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
    let kerf = start(&data, &[]);
    let api = Api::new(&kerf);
    for path in [
        "/v1/admin/users",
        "/v1/admin/tokens",
        "/v1/audit/config",
        "/v1/me",
        "/v1/audit",
    ] {
        let r = api.call("GET", path, Cred::Bearer(&prod), None).await;
        assert_eq!(r.status, 403, "{path}: {}", r.body);
    }
    let batch = json!([event(&uuid())]);
    assert_eq!(
        post_events(&api.http, &api.base, "staging", &prod, &batch)
            .await
            .0,
        403
    );
    assert_eq!(
        post_events(&api.http, &api.base, "prod", &prod, &batch)
            .await
            .0,
        200
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_audit_insert_rolls_the_user_creation_back() {
    let data = DataDir::new();
    let admin = data.admin_token();
    let kerf = start(&data, &[]);
    let api = Api::new(&kerf);
    let db = rusqlite::Connection::open(data.path().join("kerf.db")).expect("open db");
    db.busy_timeout(Duration::from_secs(5)).unwrap();
    db.execute_batch(
        "CREATE TRIGGER audit_down BEFORE INSERT ON audit_events WHEN NEW.type = 'config_changed'
         BEGIN SELECT RAISE(ABORT, 'audit is down'); END;",
    )
    .unwrap();
    let body = json!({"username": "bob", "password": PASSWORD});
    let r = api
        .call(
            "POST",
            "/v1/admin/users",
            Cred::Bearer(&admin),
            Some(body.clone()),
        )
        .await;
    assert_eq!(r.status, 500, "{}", r.body);
    let users = api
        .call("GET", "/v1/admin/users", Cred::Bearer(&admin), None)
        .await;
    assert!(
        users.body["items"].as_array().unwrap().is_empty(),
        "rolled back: {}",
        users.body
    );
    db.execute_batch("DROP TRIGGER audit_down").unwrap();
    assert_eq!(
        api.call("POST", "/v1/admin/users", Cred::Bearer(&admin), Some(body))
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
