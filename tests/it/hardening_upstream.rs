//! Issue 18, defects 4 and 6: what a hostile or careless datasource gets from kerf and
//! shows through it. A redirect to another origin is not followed (the request carries
//! the datasource's credentials, custom headers included) and the datasource test says
//! so; a redirect within the origin still works; and an upstream that echoes the
//! request's headers in its error text shows no credential to anyone.

use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

use crate::support::{client, eventually, secs, stdout_line, DataDir, Kerf};

const PASSWORD: &str = "upstream-pass-7781";
const API_KEY: &str = "api-key-4417-quokka";
/// base64("kerf:upstream-pass-7781"), as the Authorization header carries it.
const BASIC: &str = "a2VyZjp1cHN0cmVhbS1wYXNzLTc3ODE=";

/// How a fake datasource answers.
#[derive(Clone)]
enum Answer {
    /// 307 to this base URL (same path).
    RedirectTo(String),
    /// 307 to `/real` + the path on the same server, which answers like Prometheus.
    RedirectInside,
    /// 400 with the request's headers echoed in the error text.
    EchoHeaders,
}

#[derive(Clone)]
struct Upstream {
    answer: Answer,
    /// Headers of every request it received.
    seen: Arc<Mutex<Vec<HeaderMap>>>,
}

async fn answer(State(u): State<Upstream>, uri: Uri, headers: HeaderMap) -> Response {
    u.seen.lock().expect("seen").push(headers.clone());
    let path = uri.path().to_string();
    match &u.answer {
        Answer::RedirectTo(base) => redirect(&format!("{base}{path}")),
        Answer::RedirectInside if !path.starts_with("/real") => redirect(&format!("/real{path}")),
        Answer::RedirectInside if path.ends_with("/query") => axum::Json(json!({
            "status": "success", "data": {"resultType": "vector", "result": []}
        }))
        .into_response(),
        Answer::RedirectInside => StatusCode::NOT_FOUND.into_response(),
        Answer::EchoHeaders => {
            let echo: String = headers
                .iter()
                .map(|(k, v)| format!("{k}: {}\n", v.to_str().unwrap_or("")))
                .collect();
            let body = json!({"status": "error", "errorType": "bad_data",
                              "error": format!("cannot parse request; headers were:\n{echo}")});
            (StatusCode::BAD_REQUEST, axum::Json(body)).into_response()
        }
    }
}

fn redirect(to: &str) -> Response {
    (
        StatusCode::TEMPORARY_REDIRECT,
        [("location", to.to_string())],
    )
        .into_response()
}

async fn upstream(answer: Answer) -> (String, Upstream) {
    let u = Upstream {
        answer,
        seen: Arc::default(),
    };
    let app = axum::Router::new()
        .fallback(self::answer)
        .with_state(u.clone());
    let url = crate::support::serve(app).await;
    (url, u)
}

/// A datasource at `url` with basic auth and a secret header; returns its id.
async fn datasource(kerf: &Kerf, admin: &str, url: &str) -> i64 {
    let body = json!({"name": "upstream", "type": "prometheus", "url": url,
        "auth": {"type": "basic", "username": "kerf", "password": PASSWORD},
        "headers": [{"name": "X-Api-Key", "value": API_KEY, "secret": true}]});
    let r = client()
        .post(kerf.url("/v1/datasources"))
        .bearer_auth(admin)
        .json(&body)
        .send()
        .await
        .expect("create");
    assert_eq!(r.status(), 201);
    r.json::<Value>().await.expect("json")["id"]
        .as_i64()
        .expect("id")
}

async fn test_datasource(kerf: &Kerf, admin: &str, id: i64) -> (u16, String) {
    let r = client()
        .post(kerf.url(&format!("/v1/datasources/{id}/test")))
        .bearer_auth(admin)
        .send()
        .await
        .expect("test");
    (r.status().as_u16(), r.text().await.expect("text"))
}

fn assert_no_credential(what: &str, text: &str) {
    for secret in [PASSWORD, API_KEY, BASIC] {
        assert!(!text.contains(secret), "{what} shows {secret}: {text}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn credentials_never_follow_a_redirect_to_another_origin() {
    let (elsewhere, catcher) = upstream(Answer::EchoHeaders).await;
    let (url, _) = upstream(Answer::RedirectTo(elsewhere.clone())).await;
    let data = DataDir::new();
    let admin = data.admin_token();
    let kerf = data.start();
    let id = datasource(&kerf, &admin, &url).await;
    let (status, report) = test_datasource(&kerf, &admin, id).await;
    assert_eq!(status, 200, "{report}");
    let report: Value = serde_json::from_str(&report).expect("report");
    let message = report["message"].as_str().expect("message");
    assert!(
        message.contains("redirected to another origin") && message.contains(&elsewhere),
        "{report}"
    );
    assert_eq!(report["authenticated"], false);
    assert!(
        catcher.seen.lock().expect("seen").is_empty(),
        "the other origin was reached"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_redirect_within_the_datasources_origin_is_still_followed() {
    let (url, u) = upstream(Answer::RedirectInside).await;
    let data = DataDir::new();
    let admin = data.admin_token();
    let kerf = data.start();
    let id = datasource(&kerf, &admin, &url).await;
    let (status, report) = test_datasource(&kerf, &admin, id).await;
    assert_eq!(status, 200, "{report}");
    let report: Value = serde_json::from_str(&report).expect("report");
    assert_eq!(report["reachable"], true, "{report}");
    assert_eq!(report["authenticated"], true, "{report}");
    let seen = u.seen.lock().expect("seen");
    assert!(
        seen.iter().all(|h| h.get("referer").is_none()),
        "no Referer is sent"
    );
    assert!(
        seen.iter()
            .any(|h| h.get("x-api-key").is_some_and(|v| v == API_KEY)),
        "the redirected request keeps its credentials inside the origin"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_upstream_that_echoes_headers_shows_no_credential_to_anyone() {
    let (url, _) = upstream(Answer::EchoHeaders).await;
    let data = DataDir::new();
    let admin = data.admin_token();
    let viewer = stdout_line(&data.run(&["token", "create", "--name", "v", "--role", "viewer"]));
    data.create_cluster("prod");
    let kerf = data.start();
    let id = datasource(&kerf, &admin, &url).await;
    let (_, report) = test_datasource(&kerf, &admin, id).await;
    assert_no_credential("the datasource test", &report);
    let http = client();
    let link = http
        .put(kerf.url("/v1/clusters/prod/datasource"))
        .bearer_auth(&admin)
        .json(&json!({"datasourceId": id}))
        .send()
        .await
        .expect("link");
    assert_eq!(link.status(), 200);
    let run: Value = http
        .post(kerf.url("/v1/clusters/prod/runs"))
        .bearer_auth(&admin)
        .send()
        .await
        .expect("run")
        .json()
        .await
        .expect("json");
    let run_url = kerf.url(&format!("/v1/runs/{}", run["id"].as_str().expect("id")));
    let finished = eventually("the run to finish", secs(60), async || {
        let r: Value = http
            .get(&run_url)
            .bearer_auth(&viewer)
            .send()
            .await
            .expect("get")
            .json()
            .await
            .expect("json");
        if r["status"] != "running" && r["status"] != "queued" {
            Ok(r)
        } else {
            Err(r)
        }
    })
    .await;
    assert_eq!(finished["status"], "failed", "{finished}");
    assert_no_credential("the run a viewer reads", &finished.to_string());
    for path in ["/v1/clusters", "/v1/clusters/prod/readiness", "/v1/runs"] {
        let text = http
            .get(kerf.url(path))
            .bearer_auth(&viewer)
            .send()
            .await
            .expect("get")
            .text()
            .await
            .expect("text");
        assert_no_credential(path, &text);
    }
    assert_no_credential("the log", &kerf.log_text());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_usage_chart_of_an_upstream_that_echoes_headers_is_a_502_without_credentials() {
    let (url, u) = upstream(Answer::EchoHeaders).await;
    let data = DataDir::new();
    let admin = data.admin_token();
    let viewer = stdout_line(&data.run(&["token", "create", "--name", "v", "--role", "viewer"]));
    data.create_cluster("prod");
    // A workload as a run stores it (before the hub starts: the database is its own).
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("time")
        .as_millis() as i64;
    let opts = kerf::store::StoreOptions {
        readers: 1,
        busy_timeout_ms: 5000,
    };
    let store = kerf::store::Store::open_and_migrate(&data.path().join("kerf.db"), &opts, now)
        .expect("store");
    let wid = crate::support::hub::Seeded {
        cluster: "prod",
        namespace: "shop",
        kind: "Deployment",
        name: "web",
        container: "app",
        notices: "",
    }
    .store(&store, now)
    .await;
    drop(store);
    let kerf = data.start();
    let id = datasource(&kerf, &admin, &url).await;
    let http = client();
    let link = http
        .put(kerf.url("/v1/clusters/prod/datasource"))
        .bearer_auth(&admin)
        .json(&json!({"datasourceId": id}))
        .send()
        .await
        .expect("link");
    assert_eq!(link.status(), 200);
    let asked = u.seen.lock().expect("seen").len();
    for token in [&admin, &viewer] {
        let r = http
            .get(kerf.url(&format!("/v1/workloads/{wid}/usage?resource=cpu")))
            .bearer_auth(token)
            .send()
            .await
            .expect("usage");
        assert_eq!(r.status(), 502);
        let body: Value = r.json().await.expect("the error body");
        assert!(
            body["error"]["code"]
                .as_str()
                .is_some_and(|c| !c.is_empty()),
            "{body}"
        );
        assert_no_credential("the usage chart's 502", &body.to_string());
    }
    let seen = u.seen.lock().expect("seen");
    assert!(seen.len() > asked, "the chart asked the upstream");
    assert!(
        seen[asked..]
            .iter()
            .any(|h| h.get("x-api-key").is_some_and(|v| v == API_KEY)),
        "with the credentials the echo would show"
    );
    drop(seen);
    assert_no_credential("the log", &kerf.log_text());
}
