//! Authorization, generated: every documented route × every kind of caller gets 401
//! without credentials, 403 outside its scope and through the guard inside it; and a
//! route that bypasses the route table (no permission) is caught by the walk and refused
//! at runtime. Runs the real router in-process against a temp database.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Method, Request};
use axum::routing::get;
use axum::Router;
use kerf::api::access::Guarded;
use kerf::api::{route_table, with_middleware, AppState, Permission};
use kerf::auth::token;
use kerf::config::Config;
use kerf::metrics::Metrics;
use kerf::store::{self, NamespacePattern, Store, StoreOptions};
use tower::ServiceExt;
use utoipa_axum::routes;

use crate::support::openapi::documented;

/// Who calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Anonymous,
    ClusterOwn,
    ClusterOther,
    Viewer,
    Editor,
    Admin,
    SessionAdmin,
    /// Team role in the team that owns prod/shop (and whose id fills `{id}`).
    TeamIn(u8),
    /// The same team role in a team owning other namespaces.
    TeamOut(u8),
}

const ROLES: [Role; 13] = [
    Role::Anonymous,
    Role::ClusterOwn,
    Role::ClusterOther,
    Role::Viewer,
    Role::Editor,
    Role::Admin,
    Role::SessionAdmin,
    Role::TeamIn(0),
    Role::TeamIn(1),
    Role::TeamIn(2),
    Role::TeamOut(0),
    Role::TeamOut(1),
    Role::TeamOut(2),
];

const TEAM_ROLES: [&str; 3] = ["team-viewer", "team-editor", "team-admin"];

#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    Unauthorized,
    Forbidden,
    Through,
}

/// The role model of docs/contracts/teams.md, written independently of the guard.
fn expected(perm: &str, path: &str, role: Role) -> Outcome {
    use Outcome::*;
    let scoped = path.contains("{cluster}") && path.contains("{namespace}");
    let fleet = |min: u8| match role {
        Role::Viewer => min <= 1,
        Role::Editor => min <= 2,
        Role::Admin | Role::SessionAdmin => min <= 3,
        _ => false,
    };
    let ok = match (perm, role) {
        // Public by default (`http.metrics_require_token` is off in this world).
        ("public" | "metrics", _) => return Through,
        // Anyone: the handler sees valid credentials, and no credentials are an error.
        ("optional", _) => return Through,
        (_, Role::Anonymous) => return Unauthorized,
        ("cluster-agent", r) => r == Role::ClusterOwn,
        (_, Role::ClusterOwn | Role::ClusterOther) => false,
        ("authenticated", _) => true,
        ("viewer", _) => fleet(1),
        ("editor", _) => fleet(2),
        ("admin", _) => fleet(3),
        ("workload-read", Role::TeamIn(_)) => true,
        ("workload-read", Role::TeamOut(_)) => !scoped,
        ("workload-read", _) => fleet(1),
        ("workload-write", Role::TeamIn(r)) => r >= 1,
        ("workload-write", Role::TeamOut(r)) => r >= 1 && !scoped,
        ("workload-write", _) => fleet(2),
        ("team-admin", Role::TeamIn(r)) => r == 2,
        ("team-admin", Role::TeamOut(_)) => false,
        ("team-admin", _) => fleet(3),
        (other, _) => panic!("permission {other} has no expectation: add it to this table"),
    };
    if ok {
        Through
    } else {
        Forbidden
    }
}

struct World {
    state: AppState,
    _dir: tempfile::TempDir,
    tokens: Vec<(Role, String)>,
    alpha: i64,
    admin_user: i64,
}

fn world() -> World {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open_and_migrate(
        &dir.path().join("kerf.db"),
        &StoreOptions {
            readers: 2,
            busy_timeout_ms: 5000,
        },
        0,
    )
    .expect("store");
    let mut config = Config::default();
    config.auth.argon2_memory_kib = 8192;
    config.auth.argon2_iterations = 1;
    let state = AppState::new(
        store.clone(),
        Arc::new(Metrics::new()),
        Arc::new(config),
        kerf::runs::Runs::new(store.clone(), Arc::new(kerf::clock::SystemClock)),
    )
    .expect("state");
    let mut tokens = Vec::new();
    let (alpha, admin_user) = store
        .writing_blocking(|tx| {
            let pat = |c: &str, n: &str| NamespacePattern {
                cluster: c.into(),
                namespace: n.into(),
            };
            let alpha = tx.insert_team("alpha", "", &[pat("prod", "shop")], 0)?.id;
            let beta = tx
                .insert_team("beta", "", &[pat("other", "*"), pat("prod", "billing")], 0)?
                .id;
            for (name, role) in [("prod", Role::ClusterOwn), ("other", Role::ClusterOther)] {
                let v = token::generate(token::CLUSTER_TOKEN_PREFIX);
                tx.insert_cluster(
                    &store::NewCluster {
                        name,
                        token_sha256: &token::hash(&v),
                    },
                    &Default::default(),
                    0,
                )?;
                tokens.push((role, v));
            }
            let mut add =
                |role: Role, r: &str, team: Option<i64>| -> Result<(), store::StoreError> {
                    let v = token::generate(token::API_TOKEN_PREFIX);
                    tx.insert_token(
                        &store::NewApiToken {
                            name: "m",
                            role: r,
                            team_id: team,
                            created_by: None,
                            token_sha256: &token::hash(&v),
                            expires_at: None,
                        },
                        0,
                    )?;
                    tokens.push((role, v));
                    Ok(())
                };
            add(Role::Viewer, "viewer", None)?;
            add(Role::Editor, "editor", None)?;
            add(Role::Admin, "admin", None)?;
            for (i, r) in TEAM_ROLES.iter().enumerate() {
                add(Role::TeamIn(i as u8), r, Some(alpha))?;
                add(Role::TeamOut(i as u8), r, Some(beta))?;
            }
            let u = tx.insert_user(
                &store::NewUser {
                    username: "root",
                    display_name: "",
                    role: Some("admin"),
                    password_hash: "x",
                },
                0,
            )?;
            Ok((alpha, u.id))
        })
        .expect("seed");
    World {
        state,
        _dir: dir,
        tokens,
        alpha,
        admin_user,
    }
}

impl World {
    /// A fresh session for the admin user: (cookie value, csrf token).
    fn session(&self) -> (String, String) {
        let (value, csrf) = kerf::auth::session::new_ids();
        let now = kerf::clock::Clock::now_ms(&kerf::clock::SystemClock);
        let rec = store::SessionRecord {
            user_id: self.admin_user,
            csrf_token: csrf.clone(),
            created_at: now,
            last_seen_at: now,
            expires_at: now + 3_600_000,
            sso_checked_at: None,
        };
        let digest = token::hash(&value);
        self.state
            .store
            .writing_blocking(|tx| tx.insert_session(&digest, &rec))
            .expect("session");
        (value, csrf)
    }

    fn request(&self, method: &str, path: &str, perm: &str, role: Role) -> Request<Body> {
        let id = if perm == "team-admin" {
            self.alpha.to_string()
        } else {
            "999999".into()
        };
        // Retiring a cluster or rotating its token would lock the `prod` agent out for
        // the rest of the walk: those routes aim at a cluster no token belongs to.
        let destructive = (method == "DELETE" && path == "/v1/clusters/{cluster}")
            || path == "/v1/clusters/{cluster}/token";
        let cluster = if destructive { "spare" } else { "prod" };
        let uri = path
            .replace("{cluster}", cluster)
            .replace("{namespace}", "shop")
            .replace("{id}", &id);
        let mut b = Request::builder()
            .method(Method::from_bytes(method.as_bytes()).expect("method"))
            .uri(uri)
            .header("content-type", "application/json");
        match role {
            Role::Anonymous => {}
            Role::SessionAdmin => {
                let (cookie, csrf) = self.session();
                b = b
                    .header("cookie", format!("kerf_session={cookie}"))
                    .header("x-csrf-token", csrf);
            }
            r => {
                let t = &self.tokens.iter().find(|(x, _)| *x == r).expect("token").1;
                b = b.header("authorization", format!("Bearer {t}"));
            }
        }
        b.body(Body::from("{}")).expect("request")
    }
}

/// Runs every (route, role) pair; returns the mismatches.
async fn matrix_failures(
    w: &World,
    app: &Router,
    routes: &[(String, String, String)],
) -> Vec<String> {
    let mut failures = Vec::new();
    for (method, path, perm) in routes {
        for role in ROLES {
            let resp = app
                .clone()
                .oneshot(w.request(method, path, perm, role))
                .await
                .expect("infallible");
            let status = resp.status().as_u16();
            let got = match status {
                401 => Outcome::Unauthorized,
                403 => Outcome::Forbidden,
                _ => Outcome::Through,
            };
            let want = expected(perm, path, role);
            let guarded = resp.extensions().get::<Guarded>().is_some();
            if got != want || !guarded || status >= 500 {
                failures.push(format!(
                    "{method} {path} ({perm}) as {role:?}: got {status} (guarded: {guarded}), want {want:?}"
                ));
            }
        }
    }
    failures
}

/// A namespace-scoped read, to walk `{cluster}` + `{namespace}` team scoping.
#[utoipa::path(
    get,
    path = "/v1/test/clusters/{cluster}/namespaces/{namespace}/workloads"
)]
async fn scoped_read() -> &'static str {
    "workloads"
}

/// A namespace-scoped change.
#[utoipa::path(
    post,
    path = "/v1/test/clusters/{cluster}/namespaces/{namespace}/workloads"
)]
async fn scoped_write() -> &'static str {
    "changed"
}

fn test_routes() -> kerf::api::RouteTable {
    route_table()
        .add(Permission::WorkloadRead, routes!(scoped_read))
        .add(Permission::WorkloadWrite, routes!(scoped_write))
}

#[tokio::test(flavor = "multi_thread")]
async fn every_documented_route_answers_each_role_as_the_role_model_says() {
    let w = world();
    let (router, specs) = test_routes().finish(w.state.clone());
    let app = with_middleware(router, w.state.clone());
    let mut routes: Vec<_> = documented().into_iter().collect();
    for s in specs.iter().filter(|s| s.path.starts_with("/v1/test/")) {
        routes.push((
            s.method.to_string(),
            s.path.to_string(),
            s.permission.as_str().to_string(),
        ));
    }
    assert!(routes.len() >= 20, "walked {} routes", routes.len());
    let failures = matrix_failures(&w, &app, &routes).await;
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn every_permission_has_a_row_in_the_expectation_table() {
    for p in Permission::ALL {
        for role in ROLES {
            let _ = expected(p.as_str(), "/x", role);
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_route_added_without_a_permission_is_caught_by_the_walk_and_refused() {
    let w = world();
    let (router, _) = test_routes().finish(w.state.clone());
    // The mistake under test: a route registered straight on the router, bypassing the
    // route table and so the guard.
    let router = router.route(
        "/v1/test/unprotected",
        get(|| async { "secret fleet data" }),
    );
    let app = with_middleware(router, w.state.clone());
    let routes = vec![(
        "GET".to_string(),
        "/v1/test/unprotected".to_string(),
        "viewer".to_string(),
    )];
    let failures = matrix_failures(&w, &app, &routes).await;
    assert_eq!(
        failures.len(),
        ROLES.len(),
        "every role flags it: {failures:#?}"
    );
    assert!(
        failures.iter().all(|f| f.contains("guarded: false")),
        "{failures:#?}"
    );
    let resp = app
        .oneshot(
            Request::get("/v1/test/unprotected")
                .body(Body::empty())
                .expect("req"),
        )
        .await
        .expect("infallible");
    assert_eq!(resp.status(), 500, "served without a permission");
    let body = axum::body::to_bytes(resp.into_body(), 1 << 16)
        .await
        .expect("body");
    assert!(!String::from_utf8_lossy(&body).contains("secret fleet data"));
}

#[tokio::test(flavor = "multi_thread")]
async fn team_members_see_only_their_namespaces_in_the_workload_audit() {
    let w = world();
    let ev = |id: &str, ns: &str| {
        serde_json::json!({"id": id, "type": "skipped", "time": "2026-11-04T10:15:00Z",
            "workload": {"namespace": ns, "kind": "Deployment", "name": "api"}, "reason": "ModeAudit"})
    };
    let batch = serde_json::to_vec(&serde_json::json!([
        ev("8d1f3e0c-1a2b-4c3d-8e4f-000000000001", "shop"),
        ev("8d1f3e0c-1a2b-4c3d-8e4f-000000000002", "billing"),
    ]))
    .expect("json");
    let events = kerf::events::validate_batch(&batch).expect("valid");
    w.state
        .store
        .writing(move |tx| tx.insert_events("prod", &events, 0))
        .await
        .expect("insert");
    let app = kerf::api::app(w.state.clone());
    let namespaces = |role: Role| {
        let req = w.request("GET", "/v1/audit", "workload-read", role);
        let app = app.clone();
        async move {
            let resp = app.oneshot(req).await.expect("infallible");
            assert_eq!(resp.status(), 200);
            let body = axum::body::to_bytes(resp.into_body(), 1 << 20)
                .await
                .expect("body");
            let v: serde_json::Value = serde_json::from_slice(&body).expect("json");
            let mut ns: Vec<String> = v["items"]
                .as_array()
                .expect("items")
                .iter()
                .map(|i| i["workload"]["namespace"].as_str().expect("ns").to_string())
                .collect();
            ns.sort();
            ns
        }
    };
    assert_eq!(namespaces(Role::Viewer).await, ["billing", "shop"]);
    assert_eq!(namespaces(Role::TeamIn(0)).await, ["shop"]);
    assert_eq!(namespaces(Role::TeamOut(0)).await, ["billing"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn hsts_is_sent_only_when_tls_is_on() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open_and_migrate(
        &dir.path().join("kerf.db"),
        &StoreOptions {
            readers: 1,
            busy_timeout_ms: 5000,
        },
        0,
    )
    .expect("store");
    for tls in [false, true] {
        let mut config = Config::default();
        if tls {
            config.tls.cert_file = Some("/unused.crt".into());
            config.tls.key_file = Some("/unused.key".into());
        }
        let state = AppState::new(
            store.clone(),
            Arc::new(Metrics::new()),
            Arc::new(config),
            kerf::runs::Runs::new(store.clone(), Arc::new(kerf::clock::SystemClock)),
        )
        .expect("state");
        let resp = kerf::api::app(state)
            .oneshot(Request::get("/healthz").body(Body::empty()).expect("req"))
            .await
            .expect("infallible");
        let h = resp.headers();
        assert_eq!(h.contains_key("strict-transport-security"), tls);
        assert_eq!(h["x-content-type-options"], "nosniff");
        assert_eq!(h["referrer-policy"], "no-referrer");
        assert!(h.contains_key("content-security-policy"));
    }
}
