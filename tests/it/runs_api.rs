//! Recommendation runs through the real binary: `kerf demo` end to end, manual and
//! scheduled runs, no overlap, an isolated failing cluster, retention, settings
//! validation, and a cluster without a datasource.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::support::{client, error_code, DataDir, Demo};

async fn call(
    http: &reqwest::Client,
    method: reqwest::Method,
    url: String,
    token: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut req = http.request(method, url).bearer_auth(token);
    if let Some(b) = body {
        req = req.json(&b);
    }
    let resp = req.send().await.expect("send");
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

async fn get(http: &reqwest::Client, base: &str, token: &str, path: &str) -> Value {
    let (status, body) = call(
        http,
        reqwest::Method::GET,
        format!("{base}{path}"),
        token,
        None,
    )
    .await;
    assert_eq!(status, 200, "GET {path}: {body}");
    body
}

/// Polls until `check` returns Some, or panics after a deadline.
async fn until<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn wait_idle(http: &reqwest::Client, base: &str, token: &str) {
    until("runs to finish", || async {
        let page = get(http, base, token, "/v1/runs?status=running").await;
        page["items"].as_array().unwrap().is_empty().then_some(())
    })
    .await
}

async fn wait_run(http: &reqwest::Client, base: &str, token: &str, id: &str) -> Value {
    until("the run to finish", || async {
        let run = get(http, base, token, &format!("/v1/runs/{id}")).await;
        (run["status"] != "running").then_some(run)
    })
    .await
}

async fn workload(
    http: &reqwest::Client,
    base: &str,
    token: &str,
    cluster: &str,
    name: &str,
) -> Value {
    let page = get(
        http,
        base,
        token,
        &format!("/v1/workloads?cluster={cluster}&q={name}"),
    )
    .await;
    let id = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {page}"))["id"]
        .as_str()
        .unwrap()
        .to_string();
    get(http, base, token, &format!("/v1/workloads/{id}")).await
}

fn requests(w: &Value, resource: &str) -> (f64, f64) {
    let r = &w["recommendation"]["summary"]["containers"][0][resource]["requests"];
    (
        r["current"].as_f64().expect("current"),
        r["suggested"].as_f64().expect("suggested"),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn kerf_demo_serves_the_first_runs_recommendations_through_the_api() {
    let demo = Demo::start(None);
    let (http, base, token) = (client(), demo.kerf.url(""), demo.token.clone());
    assert!(demo.stdout.iter().any(|l| l.starts_with("ui login:")));
    wait_idle(&http, &base, &token).await;
    let runs = get(&http, &base, &token, "/v1/runs").await;
    let runs = runs["items"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert!(runs.iter().all(|r| r["status"] == "succeeded"), "{runs:?}");
    let all = get(&http, &base, &token, "/v1/workloads?limit=500").await;
    assert!(all["items"].as_array().unwrap().len() >= 55);
    // Over-provisioned → a reduction; OOM-killed → an increase; the leak is flagged.
    let catalog = workload(&http, &base, &token, "demo-east", "catalog").await;
    let (current, suggested) = requests(&catalog, "cpu");
    assert!(suggested < current / 2.0, "{catalog}");
    assert!(catalog["estimatedMonthlyCostDelta"].as_f64().unwrap() < 0.0);
    assert!(catalog["recommendation"]["analysis"]["results"][0]["evidence"].is_object());
    let ledger = workload(&http, &base, &token, "demo-east", "ledger").await;
    let (current, suggested) = requests(&ledger, "memory");
    assert!(suggested > current, "{ledger}");
    let leaks = get(
        &http,
        &base,
        &token,
        "/v1/workloads?notice=potential-memory-leak",
    )
    .await;
    let names: Vec<&str> = leaks["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"ingest-worker"), "{names:?}");
    let savings = get(&http, &base, &token, "/v1/savings").await;
    assert!(
        savings["fleet"]["monthlySavings"].as_f64().unwrap() > 0.0,
        "{savings}"
    );
    assert_eq!(savings["clusters"].as_array().unwrap().len(), 2);
    let usage = get(
        &http,
        &base,
        &token,
        &format!(
            "/v1/workloads/{}/usage?resource=memory",
            ledger["id"].as_str().unwrap()
        ),
    )
    .await;
    let points = usage["containers"][0]["points"].as_array().unwrap().len();
    assert!(points > 100 && points <= 500, "{points}");
    let data_dir = demo
        .stdout
        .iter()
        .find_map(|l| l.strip_prefix("data dir: "))
        .and_then(|l| l.strip_suffix(" (removed on exit)"))
        .map(std::path::PathBuf::from)
        .expect("ephemeral data dir printed");
    assert!(data_dir.exists());
    assert_eq!(demo.kerf.stop(), Some(0));
    assert!(!data_dir.exists(), "the ephemeral data dir is removed");
}

#[tokio::test(flavor = "multi_thread")]
async fn manual_runs_never_overlap_and_retention_zero_keeps_only_the_latest() {
    let data = DataDir::new();
    let demo = Demo::start(Some(data.path()));
    let (http, base, token) = (client(), demo.kerf.url(""), demo.token.clone());
    wait_idle(&http, &base, &token).await;
    let url = format!("{base}/v1/clusters/demo-east/runs");
    let (status, first) = call(&http, reqwest::Method::POST, url.clone(), &token, None).await;
    assert_eq!(status, 202, "{first}");
    assert_eq!(first["status"], "running");
    let (status, refused) = call(&http, reqwest::Method::POST, url.clone(), &token, None).await;
    assert_eq!(status, 409, "{refused}");
    assert_eq!(error_code(&refused), "run_in_progress");
    assert_eq!(refused["error"]["details"]["runId"], first["id"]);
    let done = wait_run(&http, &base, &token, first["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "succeeded", "{done}");
    assert_eq!(done["workloads"]["done"], done["workloads"]["total"]);
    for phase in ["collect", "analyze", "store"] {
        assert!(done["phaseMs"][phase].is_u64(), "{done}");
    }
    let catalog = workload(&http, &base, &token, "demo-east", "catalog").await;
    let history = format!(
        "/v1/workloads/{}/recommendations",
        catalog["id"].as_str().unwrap()
    );
    let items = get(&http, &base, &token, &history).await["items"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(items, 2);
    let mut settings = get(&http, &base, &token, "/v1/admin/settings/recommender").await;
    settings["retentionDays"] = json!(0);
    let (status, body) = call(
        &http,
        reqwest::Method::PUT,
        format!("{base}/v1/admin/settings/recommender"),
        &token,
        Some(settings),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (status, third) = call(&http, reqwest::Method::POST, url, &token, None).await;
    assert_eq!(status, 202, "{third}");
    wait_run(&http, &base, &token, third["id"].as_str().unwrap()).await;
    let latest = until("history pruned to the latest", || async {
        let page = get(&http, &base, &token, &history).await;
        (page["items"].as_array().unwrap().len() == 1).then_some(page)
    })
    .await;
    assert_eq!(latest["items"][0]["runId"], third["id"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn scheduled_runs_follow_the_cron_and_a_failing_cluster_fails_alone() {
    let data = DataDir::new();
    data.create_cluster("broken");
    let agent_token = data.create_cluster("demo-west");
    let demo = Demo::start(Some(data.path()));
    let (http, base, token) = (client(), demo.kerf.url(""), demo.token.clone());
    wait_idle(&http, &base, &token).await;
    let mut settings = get(&http, &base, &token, "/v1/admin/settings/recommender").await;
    settings["schedule"] = json!("* * * * * *");
    let put = format!("{base}/v1/admin/settings/recommender");
    let (status, _) = call(
        &http,
        reqwest::Method::PUT,
        put.clone(),
        &token,
        Some(settings.clone()),
    )
    .await;
    assert_eq!(status, 200);
    let finished = |cluster: &'static str, status: &'static str| {
        let (http, base, token) = (http.clone(), base.clone(), token.clone());
        async move {
            let page = get(
                &http,
                &base,
                &token,
                &format!("/v1/runs?trigger=scheduled&cluster={cluster}&status={status}"),
            )
            .await;
            page["items"].as_array().unwrap().first().cloned()
        }
    };
    let broken = until("a scheduled run of broken", || finished("broken", "failed")).await;
    assert!(
        broken["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("broken"),
        "{broken}"
    );
    until("a scheduled run of demo-west", || {
        finished("demo-west", "succeeded")
    })
    .await;
    until("a scheduled run of demo-east", || {
        finished("demo-east", "succeeded")
    })
    .await;
    settings["schedule"] = json!("0 0 1 1 *");
    let (status, _) = call(&http, reqwest::Method::PUT, put, &token, Some(settings)).await;
    assert_eq!(status, 200);
    wait_idle(&http, &base, &token).await;
    // The agent feed: the cluster's token, latest recommendation per workload.
    let feed = get(
        &http,
        &base,
        &agent_token,
        "/v1/clusters/demo-west/recommendations",
    )
    .await;
    let items = feed["items"].as_array().unwrap();
    assert!(items.len() >= 25, "{feed}");
    for item in items {
        assert!(
            item["recommendationId"].is_string() && item["containers"].is_array(),
            "{item}"
        );
        assert_eq!(item["settingsIdentity"], item["policyIdentity"]);
    }
    let (status, _) = call(
        &http,
        reqwest::Method::GET,
        format!("{base}/v1/clusters/demo-east/recommendations"),
        &agent_token,
        None,
    )
    .await;
    assert_eq!(status, 403, "another cluster's feed is refused");
}

#[tokio::test(flavor = "multi_thread")]
async fn settings_are_validated_and_a_cluster_without_datasource_fails_with_the_fix_named() {
    let data = DataDir::new();
    data.create_cluster("prod");
    let token = data.admin_token();
    let kerf = data.start();
    let (http, base) = (client(), kerf.url(""));
    let put = |path: &'static str, body: Value| {
        let (http, base, token) = (http.clone(), base.clone(), token.clone());
        async move {
            call(
                &http,
                reqwest::Method::PUT,
                format!("{base}{path}"),
                &token,
                Some(body),
            )
            .await
        }
    };
    for (body, field) in [
        (json!({"schedule": "sometimes"}), "schedule"),
        (json!({"stepSeconds": 1}), "stepSeconds"),
        (json!({"policy": {"cpu": {"percentile": 150}}}), "policy"),
    ] {
        let (status, err) = put("/v1/admin/settings/recommender", body).await;
        assert_eq!(
            (status, error_code(&err).as_str()),
            (400, "invalid_settings"),
            "{err}"
        );
        assert_eq!(err["error"]["details"]["field"], field, "{err}");
    }
    let (status, err) = put("/v1/admin/settings/pricing", json!({"currency": "dollars"})).await;
    assert_eq!(
        (status, err["error"]["details"]["field"].as_str()),
        (400, Some("currency"))
    );
    let pricing = json!({"currency": "EUR", "cpuPerVcpuHour": 0.04, "memoryPerGibHour": 0.005,
        "clusters": {"prod": {"cpuPerVcpuHour": 0.03}}});
    let (status, _) = put("/v1/admin/settings/pricing", pricing.clone()).await;
    assert_eq!(status, 200);
    assert_eq!(
        get(&http, &base, &token, "/v1/admin/settings/pricing").await,
        pricing
    );
    let (status, run) = call(
        &http,
        reqwest::Method::POST,
        format!("{base}/v1/clusters/prod/runs"),
        &token,
        None,
    )
    .await;
    assert_eq!(status, 202, "{run}");
    let run = wait_run(&http, &base, &token, run["id"].as_str().unwrap()).await;
    assert_eq!(run["status"], "failed");
    assert!(
        run["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("no datasource"),
        "{run}"
    );
    let (status, _) = call(
        &http,
        reqwest::Method::POST,
        format!("{base}/v1/clusters/nope/runs"),
        &token,
        None,
    )
    .await;
    assert_eq!(status, 404);
    let (status, _) = call(
        &http,
        reqwest::Method::GET,
        format!("{base}/v1/workloads?sort=size"),
        &token,
        None,
    )
    .await;
    assert_eq!(status, 400);
}
