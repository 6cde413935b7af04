//! An in-process hub on a manual clock, served by the real router on a bound port (real
//! SQLite file, real HTTP): the clock moves the whole hub (API, feeds, expiries, runs),
//! so time-dependent behaviour is tested without sleeps.

use std::sync::Arc;

use kerf::api::AppState;
use kerf::clock::ManualClock;
use kerf::config::Config;
use kerf::datasource::Datasource;
use kerf::metrics::Metrics;
use kerf::runs::Runs;
use kerf::store::usage::UsageOptions;
use kerf::store::{Store, StoreOptions, UsageStore};
use serde_json::{json, Value};

use crate::support::Api;

pub const T0: i64 = 1_800_000_000_000;

pub struct Hub {
    /// The data dir (database, secret key).
    pub dir: tempfile::TempDir,
    /// The state the router serves (for the hub's jobs, `kerf::server::hub_jobs`, and
    /// the in-process agent, `kerf::server::in_process`).
    pub state: AppState,
    pub store: Store,
    pub clock: Arc<ManualClock>,
    pub runs: Runs,
    pub base: String,
    pub admin: String,
    pub agent: String,
    /// The API as the admin token ([`Hub::as_token`] for another).
    pub api: Api,
}

/// A hub on a manual clock at [`T0`]; `demo` makes every cluster read the demo fleet.
pub async fn hub(cluster: &str, demo: bool) -> Hub {
    hub_at(cluster, demo, T0, |_| {}).await
}

/// A hub on a manual clock at `t0`, its config changed by `tweak` first.
pub async fn hub_at(cluster: &str, demo: bool, t0: i64, tweak: impl FnOnce(&mut Config)) -> Hub {
    hub_from(cluster, demo.then(|| Datasource::demo(7)), t0, tweak, false).await
}

/// A hub at [`T0`] whose every cluster reads the demo fleet with the changes `live`
/// records (the sim's in-process clusters tell it theirs).
pub async fn hub_live(cluster: &str, live: kerf::sim::live::Live) -> Hub {
    hub_from(
        cluster,
        Some(Datasource::demo_live(7, live)),
        T0,
        |_| {},
        false,
    )
    .await
}

/// A hub at `t0` that keeps an embedded usage store, as `kerf serve` does: a cluster
/// without a datasource reads its usage from there (its agent's collector).
pub async fn hub_collecting(cluster: &str, t0: i64) -> Hub {
    hub_from(cluster, None, t0, |_| {}, true).await
}

async fn hub_from(
    cluster: &str,
    source: Option<Datasource>,
    t0: i64,
    tweak: impl FnOnce(&mut Config),
    usage: bool,
) -> Hub {
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = StoreOptions {
        readers: 2,
        busy_timeout_ms: 5000,
    };
    let store = Store::open_and_migrate(&dir.path().join("kerf.db"), &opts, t0).expect("store");
    let clock = Arc::new(ManualClock::new(t0));
    let mut runs = Runs::new(store.clone(), clock.clone()).with_data_dir(dir.path().into());
    if let Some(source) = source {
        runs = runs.with_source(source);
    }
    let usage = usage.then(|| {
        let path = UsageStore::path_beside(&dir.path().join("kerf.db"));
        UsageStore::open_and_migrate(&path, &UsageOptions::default(), t0).expect("usage store")
    });
    if let Some(usage) = &usage {
        runs = runs.with_usage(usage.clone());
    }
    let mut config = Config {
        data_dir: dir.path().into(),
        ..Config::default()
    };
    config.auth.argon2_memory_kib = 8192;
    config.auth.argon2_iterations = 1;
    tweak(&mut config);
    let state = AppState::new(
        store.clone(),
        Arc::new(Metrics::new()),
        Arc::new(config),
        runs.clone(),
    )
    .expect("state");
    let state = match usage {
        Some(usage) => state.with_usage(usage),
        None => state,
    };
    let (admin, agent) = credentials(&store, t0, cluster).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let app = kerf::api::app(state.clone());
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let api = Api::new(&base, &admin);
    Hub {
        dir,
        state,
        store,
        clock,
        runs,
        base,
        api,
        admin,
        agent,
    }
}

impl Hub {
    /// The API as `token` (the same client).
    pub fn as_token(&self, token: &str) -> Api {
        self.api.as_token(token)
    }

    pub async fn config(&self, cluster: &str) -> Value {
        let path = format!("/v1/clusters/{cluster}/config");
        let (s, v) = self.as_token(&self.agent).get(&path).await;
        assert_eq!(s, 200, "{v}");
        v
    }

    pub async fn changes(&self, action: &str) -> Vec<Value> {
        let (s, v) = self
            .api
            .get(&format!("/v1/audit/config?action={action}"))
            .await;
        assert_eq!(s, 200, "{v}");
        v["items"].as_array().expect("items").clone()
    }

    pub async fn heartbeat(&self, cluster: &str) -> Value {
        let body = json!({"agentVersion": "0.1.0", "kubernetesVersion": "v1.33.1",
                          "capabilities": {"inPlaceResize": true}});
        let path = format!("/v1/clusters/{cluster}/heartbeat");
        let (s, v) = self.as_token(&self.agent).post(&path, body).await;
        assert_eq!(s, 200, "{v}");
        v
    }
}

/// A hub on the demo fleet (manual clock at `T0`) whose `cluster` has had one
/// successful run: its workloads have recommendations.
pub async fn hub_after_run(cluster: &str) -> Hub {
    let h = hub(cluster, true).await;
    let run = h
        .runs
        .run_to_end(cluster, kerf::runs::Trigger::Manual)
        .await
        .expect("run");
    assert_eq!(run.status.as_str(), "succeeded", "{:?}", run.errors);
    h
}

/// An admin API token and the agent token of newly registered `cluster`, made through
/// the same operations as `kerf token create` and `kerf clusters create`.
pub async fn credentials(store: &Store, now: i64, cluster: &str) -> (String, String) {
    let ctx = || kerf::commands::operator("test");
    let input = kerf::auth::accounts::NewTokenInput {
        name: "ops".into(),
        role: "admin".into(),
        ..Default::default()
    };
    let admin = kerf::auth::accounts::create_token(store, now, ctx(), input)
        .await
        .expect("token")
        .value;
    let registered =
        kerf::fleet::clusters::register(store, now, ctx(), cluster.into(), Default::default())
            .await
            .expect("cluster");
    (admin, registered.token)
}

/// Unix milliseconds as the API writes them.
pub fn at(ms: i64) -> String {
    kerf::timestamp::format_ms(ms)
}

/// A workload and its latest recommendation, stored as a run stores them: one container
/// whose CPU request drops from 500m to 250m, the given notices (`,a,b,`).
pub struct Seeded<'a> {
    pub cluster: &'a str,
    pub namespace: &'a str,
    pub kind: &'a str,
    pub name: &'a str,
    pub container: &'a str,
    pub notices: &'a str,
}

impl Seeded<'_> {
    /// Stores it at `now`; returns the workload's id.
    pub async fn store(&self, store: &Store, now: i64) -> String {
        let wid =
            kerf::runs::workload::workload_id(self.cluster, self.namespace, self.kind, self.name);
        let rec = uuid::Uuid::new_v4().to_string();
        let setting = |current: f64, suggested: f64| json!({ "current": current, "suggested": suggested, "confidence": 80 });
        let summary = json!({
            "containers": [{
                "name": self.container,
                "cpu": { "requests": setting(500.0, 250.0), "limits": null,
                         "dataQuality": "available", "coverage": 1.0 },
                "memory": { "requests": null, "limits": null,
                            "dataQuality": "available", "coverage": 1.0 },
            }],
            "confidence": 80, "coverage": 1.0, "dataQuality": "available",
            "notices": self.notices.trim_matches(',').split(',').filter(|n| !n.is_empty()).collect::<Vec<_>>(),
            "coveredSeconds": 8 * 86_400,
        });
        let current = json!([{ "name": self.container,
                               "resources": { "requests": { "cpu": "500m" } } }]);
        let chunk = kerf::store::ChunkWrite {
            run_id: format!("run-{rec}"),
            now_ms: now,
            analyzed: vec![(
                kerf::store::WorkloadSeen {
                    id: wid.clone(),
                    cluster: self.cluster.into(),
                    namespace: self.namespace.into(),
                    kind: self.kind.into(),
                    name: self.name.into(),
                    uid: String::new(),
                    replicas: Some(1),
                    labels: "{}".into(),
                    current: current.to_string(),
                },
                kerf::store::NewRecommendation {
                    id: rec.clone(),
                    workload_id: wid.clone(),
                    run_id: format!("run-{rec}"),
                    created_at: now,
                    policy_version: "test".into(),
                    settings_identity: "test".into(),
                    cost_delta: Some(-3.5),
                    summary: summary.to_string(),
                    analysis: "{}".into(),
                    has_changes: true,
                    data_quality: "available".into(),
                    notices: self.notices.into(),
                    confidence: 80,
                    risk: 0,
                    change_tolerance: 0.05,
                },
            )],
            failed: Vec::new(),
        };
        store
            .writing(move |tx| tx.write_chunk(&chunk))
            .await
            .expect("store the workload");
        wid
    }
}
