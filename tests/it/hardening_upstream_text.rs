//! Issue 36, defect 6: a datasource's own words (its error text, masked and cut) still
//! reached viewers, against docs/security.md. Viewers (and team members) see the
//! status and a category, "datasource query failed (HTTP 400)"; editors and admins
//! the text. Checked on every answer a viewer reads that carries it: runs, clusters,
//! readiness, backtests and the usage chart.

use axum::http::StatusCode;
use axum::response::IntoResponse;
use serde_json::{json, Value};

use crate::support::hub::{hub, Hub, Seeded};
use crate::support::{eventually, secs};

const CLUSTER: &str = "prod";
/// What the datasource says, which only editors may read.
const UPSTREAM_WORDS: &str = "quokka-4471";

/// A Prometheus that refuses every query with its own words.
async fn chatty_prometheus() -> String {
    let app = axum::Router::new().fallback(async || {
        let body = json!({"status": "error", "errorType": "bad_data",
                          "error": format!("parse error near {UPSTREAM_WORDS}: ask bob")});
        (StatusCode::BAD_REQUEST, axum::Json(body)).into_response()
    });
    let url = crate::support::serve(app).await;
    url
}

async fn token(h: &Hub, role: &str) -> String {
    let made = h
        .api
        .post_ok("/v1/admin/tokens", json!({"name": role, "role": role}))
        .await;
    made["value"].as_str().expect("token value").to_string()
}

/// Every answer a viewer may read that carries the datasource's failure, as `token`.
async fn answers(h: &Hub, token: &str, run: &str, workload: &str) -> Vec<(String, Value)> {
    let api = h.as_token(token);
    let mut out = Vec::new();
    for path in [
        format!("/v1/runs/{run}"),
        "/v1/runs".into(),
        "/v1/clusters".into(),
        format!("/v1/clusters/{CLUSTER}"),
        format!("/v1/clusters/{CLUSTER}/readiness"),
        format!("/v1/workloads/{workload}/usage?resource=cpu"),
    ] {
        let (_, v) = api.get(&path).await;
        out.push((path, v));
    }
    let (s, v) = api.post("/v1/policies/backtest", json!({})).await;
    assert_eq!(s, 200, "{v}");
    out.push(("backtest".into(), v));
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn viewers_see_a_datasource_failures_category_and_editors_its_text() {
    let h = hub(CLUSTER, false).await;
    let url = chatty_prometheus().await;
    h.api.link_prometheus(CLUSTER, "chatty", &url).await;
    let workload = Seeded {
        cluster: CLUSTER,
        namespace: "shop",
        kind: "Deployment",
        name: "web",
        container: "app",
        notices: "",
    }
    .store(&h.store, crate::support::hub::T0)
    .await;
    let readiness = format!("/v1/clusters/{CLUSTER}/readiness");
    eventually("the datasource check", secs(20), async || {
        let (_, r) = h.api.get(&readiness).await;
        r["checks"]["datasource"]["status"] == "fail"
    })
    .await;
    let run = h
        .runs
        .run_to_end(CLUSTER, kerf::runs::Trigger::Manual)
        .await
        .expect("run");
    assert_eq!(run.status.as_str(), "failed");

    let (viewer, editor) = (token(&h, "viewer").await, token(&h, "editor").await);
    for (what, v) in answers(&h, &viewer, &run.id, &workload).await {
        let text = v.to_string();
        assert!(
            !text.contains(UPSTREAM_WORDS),
            "a viewer reads it in {what}: {text}"
        );
        assert!(
            !text.contains("ask bob"),
            "a viewer reads it in {what}: {text}"
        );
        assert!(
            text.contains("datasource query failed (HTTP 400)"),
            "a viewer reads the category and status in {what}: {text}"
        );
    }
    for (what, v) in answers(&h, &editor, &run.id, &workload).await {
        let text = v.to_string();
        assert!(
            text.contains(UPSTREAM_WORDS),
            "an editor reads it in {what}: {text}"
        );
    }
}
