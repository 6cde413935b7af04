//! `kerf demo`: the whole appliance on the built-in demo fleet. It makes an ephemeral
//! data dir (unless `--data-dir` names one), registers the demo clusters, creates an
//! admin user for the UI and an admin API token, serves like `kerf serve` with every cluster reading the demo
//! datasource, starts the first recommendation run at once, prints the URL and the token,
//! and serves until Ctrl-C or SIGTERM. The ephemeral dir is removed on the way out.

use std::path::PathBuf;

use crate::auth::token;
use crate::cli::Exit;
use crate::clock::{Clock, SystemClock};
use crate::config::{Config, Mode};
use crate::datasource::{Datasource, DemoFleet};
use crate::runs::recommender::RECOMMENDER_KEY;
use crate::runs::{RecommenderSettings, Trigger};
use crate::server::{store_options, Started};
use crate::store::{self, Store, StoreError};

/// The demo fleet's seed: every demo shows the same fleet.
pub const DEMO_SEED: u64 = 42;

/// Runs the demo. `explicit_data_dir`: the user named the data dir (kept on exit).
pub fn run(mut config: Config, explicit_data_dir: bool) -> Result<(), Exit> {
    let ephemeral: Option<PathBuf> = if explicit_data_dir {
        None
    } else {
        let dir = std::env::temp_dir().join(format!("kerf-demo-{}", uuid::Uuid::new_v4()));
        config.data_dir = dir.clone();
        Some(dir)
    };
    config.mode = Mode::Hub;
    let credentials = prepare(&config).map_err(Exit::runtime)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(Exit::runtime)?;
    let data_dir = config.data_dir.clone();
    let source = Datasource::demo(DEMO_SEED);
    let result = runtime.block_on(crate::server::run_with(
        config,
        Some(source),
        |_, _| {},
        move |s| ready(s, credentials, data_dir, explicit_data_dir),
    ));
    drop(runtime);
    if let Some(dir) = ephemeral {
        let _ = std::fs::remove_dir_all(&dir);
    }
    result.map_err(Exit::runtime)
}

/// Migrates, registers the demo clusters, turns on leak detection (the demo has a
/// leak to show) and makes the admin login and API token.
fn prepare(config: &Config) -> Result<Credentials, StoreError> {
    let now = SystemClock.now_ms();
    let store = Store::open_and_migrate(&config.database_path(), &store_options(config), now)?;
    for name in DemoFleet::clusters() {
        let digest = token::hash(&token::generate(token::CLUSTER_TOKEN_PREFIX));
        let new = store::NewCluster {
            name,
            token_sha256: &digest,
        };
        match store.write_blocking(|c| store::insert_cluster(c, &new, now)) {
            Ok(_) | Err(StoreError::Conflict(_)) => {}
            Err(e) => return Err(e),
        }
    }
    store.write_blocking(|c| {
        if store::get_setting(c, RECOMMENDER_KEY)?.is_none() {
            let mut settings = RecommenderSettings::default();
            settings.policy.memory.leak_detection = Some(Default::default());
            let settings = settings
                .validated()
                .map_err(|e| StoreError::Task(e.to_string()))?;
            let doc =
                serde_json::to_string(&settings).map_err(|e| StoreError::Task(e.to_string()))?;
            store::put_setting(c, RECOMMENDER_KEY, &doc, now)?;
        }
        Ok(())
    })?;
    let token = crate::bootstrap::create_token(&store, "demo", "admin", None, "kerf demo", now)
        .map_err(|e| StoreError::Task(e.to_string()))?;
    let password = crate::auth::password::generate();
    match crate::bootstrap::create_user(
        &store,
        &config.auth,
        DEMO_USER,
        Some("admin"),
        &password,
        "kerf demo",
        now,
    ) {
        Ok(()) => Ok(Credentials {
            token,
            login: Some(password),
        }),
        // A kept data dir from an earlier demo already has the user; its password stands.
        Err(crate::bootstrap::BootstrapError::Store(StoreError::Conflict(_))) => {
            Ok(Credentials { token, login: None })
        }
        Err(e) => Err(StoreError::Task(e.to_string())),
    }
}

/// The demo's UI login name.
pub const DEMO_USER: &str = "admin";

/// What the demo prints for people and scripts.
struct Credentials {
    token: String,
    /// The admin user's one-time password, when this run created the user.
    login: Option<String>,
}

async fn ready(s: Started, credentials: Credentials, data_dir: PathBuf, kept: bool) {
    // Runs are recorded before the banner, so whoever reads it sees them in /v1/runs.
    for cluster in DemoFleet::clusters() {
        match s.state.runs.start(cluster, Trigger::Manual).await {
            Ok((run, _)) => tracing::info!(%cluster, run = %run.id, "first demo run started"),
            Err(e) => tracing::error!(%cluster, error = %e, "cannot start the first demo run"),
        }
    }
    let lifetime = if kept { "kept" } else { "removed on exit" };
    println!("kerf demo is running on the built-in demo fleet");
    println!("url: http://{}/", s.addr);
    match &credentials.login {
        Some(password) => println!("ui login: {DEMO_USER} / {password}"),
        None => println!("ui login: {DEMO_USER} (password from the earlier demo in this data dir)"),
    }
    println!("admin token: {}", credentials.token);
    println!("data dir: {} ({lifetime})", data_dir.display());
    println!("the first recommendation run has started; press Ctrl-C to stop");
}
