//! Recommendation runs through the real binary: `kerf demo` end to end, manual and
//! scheduled runs, no overlap, an isolated failing cluster, retention, settings
//! validation, and a cluster without a datasource.

use serde_json::{json, Value};

use crate::support::{error_code, eventually, secs, Api, DataDir, Demo};

async fn wait_idle(api: &Api) {
    eventually("runs to finish", secs(90), || async {
        let page = api.get_ok("/v1/runs?status=running").await;
        page["items"].as_array().unwrap().is_empty().then_some(())
    })
    .await
}

async fn wait_run(api: &Api, id: &str) -> Value {
    eventually("the run to finish", secs(90), || async {
        let run = api.get_ok(&format!("/v1/runs/{id}")).await;
        (run["status"] != "running").then_some(run)
    })
    .await
}

async fn workload(api: &Api, cluster: &str, name: &str) -> Value {
    let page = api
        .get_ok(&format!("/v1/workloads?cluster={cluster}&q={name}"))
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
    api.get_ok(&format!("/v1/workloads/{id}")).await
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
    let api = demo.api();
    assert!(demo.stdout.iter().any(|l| l.starts_with("ui login:")));
    wait_idle(&api).await;
    let runs = api.get_ok("/v1/runs").await;
    let runs = runs["items"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert!(runs.iter().all(|r| r["status"] == "succeeded"), "{runs:?}");
    let all = api.get_ok("/v1/workloads?limit=500").await;
    assert!(all["items"].as_array().unwrap().len() >= 55);
    // Over-provisioned → a reduction; OOM-killed → an increase; the leak is flagged.
    let catalog = workload(&api, "demo-east", "catalog").await;
    let (current, suggested) = requests(&catalog, "cpu");
    assert!(suggested < current / 2.0, "{catalog}");
    assert!(catalog["estimatedMonthlyCostDelta"].as_f64().unwrap() < 0.0);
    assert!(catalog["recommendation"]["analysis"]["results"][0]["evidence"].is_object());
    let ledger = workload(&api, "demo-east", "ledger").await;
    let (current, suggested) = requests(&ledger, "memory");
    assert!(suggested > current, "{ledger}");
    let leaks = api
        .get_ok("/v1/workloads?notice=potential-memory-leak")
        .await;
    let names: Vec<&str> = leaks["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"ingest-worker"), "{names:?}");
    let savings = api.get_ok("/v1/savings").await;
    assert!(
        savings["fleet"]["monthlySavings"].as_f64().unwrap() > 0.0,
        "{savings}"
    );
    assert_eq!(savings["clusters"].as_array().unwrap().len(), 2);
    let usage = api
        .get_ok(&format!(
            "/v1/workloads/{}/usage?resource=memory",
            ledger["id"].as_str().unwrap()
        ))
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
    let api = demo.api();
    wait_idle(&api).await;
    let url = "/v1/clusters/demo-east/runs".to_string();
    let (status, first) = api.call("POST", &url, None).await;
    assert_eq!(status, 202, "{first}");
    assert_eq!(first["status"], "running");
    let (status, refused) = api.call("POST", &url, None).await;
    assert_eq!(status, 409, "{refused}");
    assert_eq!(error_code(&refused), "run_in_progress");
    assert_eq!(refused["error"]["details"]["runId"], first["id"]);
    let done = wait_run(&api, first["id"].as_str().unwrap()).await;
    assert_eq!(done["status"], "succeeded", "{done}");
    assert_eq!(done["workloads"]["done"], done["workloads"]["total"]);
    for phase in ["collect", "analyze", "store"] {
        assert!(done["phaseMs"][phase].is_u64(), "{done}");
    }
    let catalog = workload(&api, "demo-east", "catalog").await;
    let history = format!(
        "/v1/workloads/{}/recommendations",
        catalog["id"].as_str().unwrap()
    );
    let items = api.get_ok(&history).await["items"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(items, 2);
    let mut settings = api.get_ok("/v1/admin/settings/recommender").await;
    settings["retentionDays"] = json!(0);
    let (status, body) = api
        .call("PUT", "/v1/admin/settings/recommender", Some(settings))
        .await;
    assert_eq!(status, 200, "{body}");
    let (status, third) = api.call("POST", &url, None).await;
    assert_eq!(status, 202, "{third}");
    wait_run(&api, third["id"].as_str().unwrap()).await;
    let latest = eventually("history pruned to the latest", secs(90), || async {
        let page = api.get_ok(&history).await;
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
    let api = demo.api();
    wait_idle(&api).await;
    let mut settings = api.get_ok("/v1/admin/settings/recommender").await;
    settings["schedule"] = json!("* * * * * *");
    let put = "/v1/admin/settings/recommender".to_string();
    let (status, _) = api.call("PUT", &put, Some(settings.clone())).await;
    assert_eq!(status, 200);
    let finished = |cluster: &'static str, status: &'static str| {
        let api = api.clone();
        async move {
            let page = api
                .get_ok(&format!(
                    "/v1/runs?trigger=scheduled&cluster={cluster}&status={status}"
                ))
                .await;
            page["items"].as_array().unwrap().first().cloned()
        }
    };
    let broken = eventually("a scheduled run of broken", secs(90), || {
        finished("broken", "failed")
    })
    .await;
    assert!(
        broken["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("broken"),
        "{broken}"
    );
    eventually("a scheduled run of demo-west", secs(90), || {
        finished("demo-west", "succeeded")
    })
    .await;
    eventually("a scheduled run of demo-east", secs(90), || {
        finished("demo-east", "succeeded")
    })
    .await;
    settings["schedule"] = json!("0 0 1 1 *");
    let (status, _) = api.call("PUT", &put, Some(settings)).await;
    assert_eq!(status, 200);
    wait_idle(&api).await;
    // The agent feed: the cluster's token, latest recommendation per workload.
    let feed = api
        .as_token(&agent_token)
        .get_ok("/v1/clusters/demo-west/recommendations")
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
    let (status, _) = api
        .as_token(&agent_token)
        .call("GET", "/v1/clusters/demo-east/recommendations", None)
        .await;
    assert_eq!(status, 403, "another cluster's feed is refused");
}

#[tokio::test(flavor = "multi_thread")]
async fn settings_are_validated_and_a_cluster_without_datasource_fails_with_the_fix_named() {
    let data = DataDir::new();
    data.create_cluster("prod");
    let token = data.admin_token();
    let kerf = data.start();
    let api = kerf.api(&token);
    let put = |path: &'static str, body: Value| {
        let api = api.clone();
        async move { api.call("PUT", path, Some(body)).await }
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
    assert_eq!(api.get_ok("/v1/admin/settings/pricing").await, pricing);
    let (status, run) = api.call("POST", "/v1/clusters/prod/runs", None).await;
    assert_eq!(status, 202, "{run}");
    let run = wait_run(&api, run["id"].as_str().unwrap()).await;
    assert_eq!(run["status"], "failed");
    assert!(
        run["errors"][0]["message"]
            .as_str()
            .unwrap()
            .contains("no datasource"),
        "{run}"
    );
    let (status, _) = api.call("POST", "/v1/clusters/nope/runs", None).await;
    assert_eq!(status, 404);
    let (status, _) = api.call("GET", "/v1/workloads?sort=size", None).await;
    assert_eq!(status, 400);
}
