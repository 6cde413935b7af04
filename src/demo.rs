//! `kerf demo`: the whole appliance on the built-in demo fleet. It makes an ephemeral
//! data dir (unless `--data-dir` names one), registers the demo clusters, creates an
//! admin user for the UI and an admin API token, serves like `kerf serve` with every cluster reading the demo
//! datasource, starts the first recommendation run at once, prints the URL and the token,
//! and serves until Ctrl-C or SIGTERM. The ephemeral dir is removed on the way out.

use std::path::PathBuf;

use std::sync::Arc;

use crate::auth::accounts::{self, NewTokenInput, NewUserInput};
use crate::auth::Authenticator;
use crate::clock::{Clock, SystemClock};
use crate::commands::{self, Exit};
use crate::config::{Config, Mode};
use crate::datasource::{Datasource, DemoFleet};
use crate::fleet::clusters;
use crate::operation::OpError;
use crate::runs::recommender::RECOMMENDER_KEY;
use crate::runs::saved_settings::save_recommender;
use crate::runs::{RecommenderSettings, Trigger};
use crate::server::Started;
use crate::store::StoreError;

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
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(Exit::runtime)?;
    let credentials = runtime.block_on(prepare(&config))?;
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
/// leak to show) and makes the admin login and API token, through the same operations
/// as the API and the command line (audited as `kerf demo`). A kept data dir from an
/// earlier demo keeps its clusters, settings and user.
async fn prepare(config: &Config) -> Result<Credentials, Exit> {
    let store = commands::open_store(config)?;
    let now = SystemClock.now_ms();
    let ctx = || commands::operator("kerf demo");
    let taken = |e: &OpError| matches!(e, OpError::Store(StoreError::Conflict(_)));
    for name in DemoFleet::clusters() {
        match clusters::register(&store, now, ctx(), name.to_string(), Default::default()).await {
            Err(e) if !taken(&e) => return Err(Exit::runtime(e)),
            _ => {}
        }
    }
    if store
        .setting(RECOMMENDER_KEY)
        .await
        .map_err(Exit::runtime)?
        .is_none()
    {
        let mut settings = RecommenderSettings::default();
        settings.policy.memory.leak_detection = Some(Default::default());
        save_recommender(&store, now, ctx(), settings)
            .await
            .map_err(Exit::runtime)?;
    }
    let input = NewTokenInput {
        name: "demo".into(),
        role: "admin".into(),
        ..Default::default()
    };
    let token = accounts::create_token(&store, now, ctx(), input)
        .await
        .map_err(Exit::runtime)?
        .value;
    let auth = Authenticator::new(&config.auth, Arc::new(SystemClock)).map_err(Exit::runtime)?;
    let input = NewUserInput {
        username: DEMO_USER.into(),
        role: Some("admin".into()),
        ..Default::default()
    };
    match accounts::create_user(&store, &auth, now, ctx(), input).await {
        Ok(made) => Ok(Credentials {
            token,
            login: made.one_time_password,
        }),
        // A kept data dir from an earlier demo already has the user; its password stands.
        Err(e) if taken(&e) => Ok(Credentials { token, login: None }),
        Err(e) => Err(Exit::runtime(e)),
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
