//! Login cost: times `POST /v1/auth/login` through the real router (argon2id verify under
//! the default `[auth]` cost, session insert) and prints the median and p90. The target
//! is 50-250 ms per login on the 2-core appliance. `cargo bench --bench login`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::Request;
use kerf::api::{app, AppState};
use kerf::config::Config;
use kerf::metrics::Metrics;
use kerf::store::{Store, StoreOptions};
use tower::ServiceExt;

const PASSWORD: &str = "bench-Lantern-Quokka-42";
const RUNS: usize = 30;

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(run());
}

async fn run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = StoreOptions {
        readers: 2,
        busy_timeout_ms: 5000,
    };
    let store = Store::open_and_migrate(&dir.path().join("kerf.db"), &opts, 0).expect("store");
    let config = Arc::new(Config::default());
    let state = AppState::new(
        store.clone(),
        Arc::new(Metrics::new()),
        config.clone(),
        kerf::runs::Runs::new(store.clone(), Arc::new(kerf::clock::SystemClock)),
    )
    .expect("state");
    let phc = state.auth.hasher.hash(PASSWORD).expect("hash");
    store
        .writing_blocking(|tx| {
            tx.insert_user(
                &kerf::store::NewUser {
                    username: "bench",
                    display_name: "",
                    role: Some("admin"),
                    password_hash: &phc,
                },
                0,
            )
        })
        .expect("user");
    let router = app(state);
    let body = serde_json::json!({ "username": "bench", "password": PASSWORD }).to_string();
    let mut times = Vec::with_capacity(RUNS);
    for i in 0..RUNS + 2 {
        let mut req = Request::post("/v1/auth/login")
            .header("content-type", "application/json")
            .body(Body::from(body.clone()))
            .expect("request");
        req.extensions_mut()
            .insert(ConnectInfo(SocketAddr::from(([127, 0, 0, 1], 9))));
        let started = Instant::now();
        let resp = router.clone().oneshot(req).await.expect("infallible");
        let took = started.elapsed();
        assert_eq!(resp.status(), 200, "login failed");
        if i >= 2 {
            times.push(took.as_secs_f64() * 1000.0);
        }
    }
    times.sort_by(|a, b| a.total_cmp(b));
    let median = times[times.len() / 2];
    let p90 = times[times.len() * 9 / 10];
    println!(
        "login (argon2id m={} KiB, t={}, p=1): median {median:.1} ms, p90 {p90:.1} ms over {RUNS} logins",
        config.auth.argon2_memory_kib, config.auth.argon2_iterations
    );
    let verdict = if (50.0..=250.0).contains(&median) {
        "within"
    } else {
        "OUTSIDE"
    };
    println!("target 50-250 ms: {verdict}");
}
