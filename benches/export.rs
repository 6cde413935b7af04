//! The recommendations export at fleet scale: the demo fleet analysed by the real run
//! engine, filled to 10,000 workloads with copies of its recommendations (the browser
//! tests' seeder), then `GET /v1/recommendations?format=csv|json|yaml` through the real
//! router, as an admin token and as a team token scoped to one namespace, timed from the
//! request to the last byte of the answer (plain, and brotli as a browser asks). The
//! target is ≤ 2 s per export of 10,000 workloads. `cargo bench --bench export`.

#[allow(dead_code)] // its `main` is the example's
#[path = "../examples/seed_workloads.rs"]
mod seed;

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{to_bytes, Body};
use axum::http::Request;
use kerf::api::{app, AppState};
use kerf::auth::token;
use kerf::clock::SystemClock;
use kerf::config::Config;
use kerf::datasource::{Datasource, DemoFleet};
use kerf::metrics::Metrics;
use kerf::runs::{Runs, Trigger};
use kerf::store::{self, NewApiToken, Store, StoreOptions};
use tower::ServiceExt;

const WORKLOADS: usize = 10_000;
const ROUNDS: usize = 5;
const TARGET: Duration = Duration::from_secs(2);

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(run());
}

fn token_for(store: &Store, name: &str, role: &str, team: Option<i64>) -> String {
    let value = token::generate(token::API_TOKEN_PREFIX);
    let digest = token::hash(&value);
    store
        .writing_blocking(|tx| {
            tx.insert_token(
                &NewApiToken {
                    name,
                    role,
                    team_id: team,
                    created_by: None,
                    token_sha256: &digest,
                    expires_at: None,
                },
                0,
            )
        })
        .expect("token");
    value
}

async fn run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = StoreOptions {
        readers: 2,
        busy_timeout_ms: 5000,
    };
    let store = Store::open_and_migrate(&dir.path().join("kerf.db"), &opts, 0).expect("store");
    for (i, name) in DemoFleet::clusters().iter().enumerate() {
        let digest = format!("bench-{i}");
        store
            .writing_blocking(|tx| {
                tx.insert_cluster(
                    &store::NewCluster {
                        name,
                        token_sha256: &digest,
                    },
                    &Default::default(),
                    0,
                )
            })
            .expect("cluster");
    }
    let runs = Runs::new(store.clone(), Arc::new(SystemClock)).with_source(Datasource::demo(42));
    for cluster in DemoFleet::clusters() {
        runs.run_to_end(cluster, Trigger::Manual)
            .await
            .expect("run");
    }
    let started = Instant::now();
    let (written, _, templates) = seed::seed(dir.path(), WORKLOADS).await.expect("seed");
    println!(
        "seeded {written} workloads from {templates} analysed demo workloads in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    let admin = token_for(&store, "bench-admin", "admin", None);
    let team = store
        .writing_blocking(|tx| {
            let shop = store::NamespacePattern {
                cluster: "*".into(),
                namespace: "shop".into(),
            };
            tx.insert_team("bench-shop", "", &[shop], 0).map(|t| t.id)
        })
        .expect("team");
    let scoped = token_for(&store, "bench-team", "team-viewer", Some(team));
    let state = AppState::new(
        store.clone(),
        Arc::new(Metrics::new()),
        Arc::new(Config {
            data_dir: dir.path().to_path_buf(),
            ..Config::default()
        }),
        runs,
    )
    .expect("state");
    let router = app(state);

    println!("export                         rounds  median_ms  max_ms      bytes  workloads");
    let mut met = true;
    for (who, bearer) in [("admin", &admin), ("team (shop)", &scoped)] {
        for format in ["csv", "json", "yaml"] {
            for encoding in ["identity", "br"] {
                let mut times = Vec::new();
                let mut size = 0;
                let mut count = String::from("-");
                for _ in 0..ROUNDS {
                    let req = Request::get(format!("/v1/recommendations?format={format}"))
                        .header("authorization", format!("Bearer {bearer}"))
                        .header("accept-encoding", encoding)
                        .body(Body::empty())
                        .expect("request");
                    let t = Instant::now();
                    let resp = router.clone().oneshot(req).await.expect("answer");
                    assert_eq!(resp.status(), 200, "{who} {format}");
                    let body = to_bytes(resp.into_body(), usize::MAX).await.expect("body");
                    times.push(t.elapsed());
                    size = body.len();
                    if format == "json" && encoding == "identity" {
                        let v: serde_json::Value = serde_json::from_slice(&body).expect("json");
                        count = v["count"].to_string();
                    }
                }
                times.sort();
                let (median, max) = (times[ROUNDS / 2], times[ROUNDS - 1]);
                if who == "admin" {
                    met &= max <= TARGET;
                }
                println!(
                    "{:<30} {ROUNDS:>6}  {:>9}  {:>6}  {size:>9}  {count:>9}",
                    format!("{who} {format} ({encoding})"),
                    median.as_millis(),
                    max.as_millis(),
                );
            }
        }
    }
    println!(
        "target ≤ {} s for each export of {WORKLOADS} workloads: {}",
        TARGET.as_secs(),
        if met { "met" } else { "NOT met" }
    );
}
