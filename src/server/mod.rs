//! `kerf serve`: opens the store, builds the app, starts the hub's supervised jobs (run
//! scheduler, retention, fleet ticker, notification dispatcher, weekly digest) and serves
//! over HTTP or HTTPS until SIGTERM; then stops accepting, lets in-flight requests finish
//! (bounded by `http.shutdown_grace_seconds`), stops the jobs and checkpoints the
//! database. Connections are bounded in number and time (`accept`, `connections`). A job that fails ends serving the same way, and `run` returns its failure
//! (exit 1), so a half-alive hub is restarted. `kerf demo` uses the same path with a hook
//! that runs once listening.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;

use crate::api::{self, AppState};
use crate::clock::{Clock, SystemClock};
use crate::config::Config;
use crate::jobs::{JobFailure, Jobs};
use crate::metrics::Metrics;
use crate::store::{Store, StoreOptions};

mod accept;
#[cfg(feature = "agent")]
pub mod agent;
pub mod connections;
#[cfg(feature = "agent")]
pub mod in_process;
pub mod ready_file;
pub mod reseal;

use connections::Registry;

/// Failures that stop the server from starting.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    #[error(transparent)]
    Tls(#[from] crate::tls::TlsError),
    #[error(transparent)]
    Auth(#[from] crate::auth::password::PasswordError),
    /// A background job panicked or ended on its own: the process exits non-zero.
    #[error(transparent)]
    Job(#[from] JobFailure),
    /// The agent cannot run (one line naming what is missing).
    #[error("{0}")]
    Agent(String),
    /// `[auth.oidc]` cannot be used (one line naming the key at fault).
    #[error("{0}")]
    Sso(String),
    /// The config file's `[fleet]` cannot be applied.
    #[error(transparent)]
    Declared(#[from] crate::fleet::declared::DeclaredError),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
}

/// Store options from the config.
pub fn store_options(config: &Config) -> StoreOptions {
    StoreOptions {
        readers: config.store.readers,
        busy_timeout_ms: config.store.busy_timeout_ms,
    }
}

/// How the usage store is opened, from `[store]` and `[usage]` (validated already).
pub fn usage_options(config: &Config) -> crate::store::UsageOptions {
    let retention = config
        .usage
        .retention()
        .unwrap_or_else(|_| std::time::Duration::from_secs(14 * 86_400));
    crate::store::UsageOptions {
        readers: config.store.readers.clamp(1, 4),
        busy_timeout_ms: config.store.busy_timeout_ms,
        retention,
        max_series_per_cluster: config.usage.max_series_per_cluster,
        ..crate::store::UsageOptions::default()
    }
}

/// What a hook gets once the server listens.
pub struct Started {
    /// The bound address (the real port when `listen` asked for port 0).
    pub addr: SocketAddr,
    pub state: AppState,
}

/// Runs what `config.mode` says until a shutdown signal: the hub, the hub with the
/// agent of its own cluster (`all-in-one`), or the agent alone (`agent`). `ready`: the
/// `--ready-file` to write once serving.
pub async fn run(config: Config, ready: Option<PathBuf>) -> Result<(), ServeError> {
    match config.mode {
        crate::config::Mode::Hub => run_with(config, None, |_, _| {}, announce(ready)).await,
        #[cfg(feature = "agent")]
        crate::config::Mode::AllInOne => {
            let cluster = agent::connect(&config).await?;
            let options = agent::options(&config);
            let spawn = move |state: &AppState, jobs: &mut Jobs| {
                agent::spawn_in_process(jobs, "agent", state, cluster, options, "kerf all-in-one")
            };
            run_with(config, None, spawn, announce(ready)).await
        }
        #[cfg(feature = "agent")]
        crate::config::Mode::Agent => agent::run_agent(config, ready).await,
        #[cfg(not(feature = "agent"))]
        _ => Err(ServeError::Agent(
            "this kerf was built without the agent (feature `agent`); use mode = \"hub\"".into(),
        )),
    }
}

/// The hook that writes the ready file (when asked for) as soon as the hub listens.
fn announce(ready: Option<PathBuf>) -> impl FnOnce(Started) -> std::future::Ready<()> {
    move |s| {
        ready_file::announce(ready.as_deref(), s.addr, None);
        std::future::ready(())
    }
}

/// Runs the hub until a shutdown signal or a job failure. `source`, when given, answers
/// for every cluster (the demo fleet); `more_jobs` adds jobs beside the hub's own (the
/// demo's, later the in-process agent's); `on_ready` runs as its own task once the
/// listener is bound and the jobs started.
pub async fn run_with<J, F, Fut>(
    config: Config,
    source: Option<crate::datasource::Datasource>,
    more_jobs: J,
    on_ready: F,
) -> Result<(), ServeError>
where
    J: FnOnce(&AppState, &mut Jobs),
    F: FnOnce(Started) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let tls = match (&config.tls.cert_file, &config.tls.key_file) {
        (Some(c), Some(k)) => Some(tokio_rustls::TlsAcceptor::from(crate::tls::server_config(
            c, k,
        )?)),
        _ => None,
    };
    let db_path = config.database_path();
    let opts = store_options(&config);
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let now = clock.now_ms();
    let usage_path = crate::store::UsageStore::path_beside(&db_path);
    let store = tokio::task::spawn_blocking(move || Store::open_and_migrate(&db_path, &opts, now))
        .await
        .map_err(|e| crate::store::StoreError::Task(e.to_string()))??;
    let usage_opts = usage_options(&config);
    let usage = tokio::task::spawn_blocking(move || {
        crate::store::UsageStore::open_and_migrate(&usage_path, &usage_opts, now)
    })
    .await
    .map_err(|e| crate::store::StoreError::Task(e.to_string()))??;
    for exposed in crate::store::files::secure_data_dir(&config.data_dir) {
        use crate::store::files::Exposure;
        match exposed {
            Exposure::Tightened(f) => {
                tracing::warn!(file = %f.display(), "was readable by others; now 0600")
            }
            Exposure::OpenDir(d) => {
                tracing::warn!(dir = %d.display(), "the data dir is open to others; its files are private, but consider chmod 700")
            }
            Exposure::Failed(f, e) => {
                tracing::error!(file = %f.display(), error = %e, "readable by others and cannot be made private")
            }
        }
    }
    match reseal::reseal_unbound(&store, &config.data_dir).await {
        Ok(0) => {}
        Ok(n) => tracing::info!(secrets = n, "bound stored secrets to their records"),
        Err(e) => tracing::error!(error = %e, "cannot re-seal stored secrets"),
    }
    let metrics = Arc::new(Metrics::new());
    metrics.seed_actions(&store.reading(|r| r.event_counts()).await?);
    let listener = TcpListener::bind(config.listen)
        .await
        .map_err(|source| ServeError::Bind {
            addr: config.listen,
            source,
        })?;
    let local = listener.local_addr().map_err(|source| ServeError::Bind {
        addr: config.listen,
        source,
    })?;
    let grace = Duration::from_secs(config.http.shutdown_grace_seconds);
    let mut runs = crate::runs::Runs::new(store.clone(), clock)
        .with_data_dir(config.data_dir.clone())
        .with_outbound(config.outbound.datasources(local))
        .with_metrics(metrics.clone());
    if let Some(source) = source {
        runs = runs.with_source(source);
    }
    // Links in notifications name the address actually bound (port 0 picks one).
    let mut config = config;
    config.listen = local;
    let sends = &mut config.notifications.max_concurrent_sends;
    *sends = connections::sends_cap(*sends);
    let http = config.http.clone();
    let runs = runs.with_usage(usage.clone());
    let env: Vec<(String, String)> = std::env::vars().collect();
    let sso = crate::auth::sso::Sso::from_config(&config, &env, runs.clock().clone())
        .map_err(ServeError::Sso)?;
    let state =
        AppState::new(store.clone(), metrics, Arc::new(config), runs)?.with_usage(usage.clone());
    if let Some(sso) = sso {
        tracing::info!(provider = %sso.name(), "single sign-on configured");
        let _ = state.auth.sso.set(Arc::new(sso));
    }
    apply_declared(&state).await?;
    let kept = state.auth.restore_locks(&store).await?;
    if kept > 0 {
        tracing::info!(locks = kept, "login locks kept from before the restart");
    }
    let app = api::app(state.clone());
    let mut jobs = hub_jobs(&state);
    more_jobs(&state, &mut jobs);
    tracing::info!(addr = %local, tls = tls.is_some(), "listening");
    tokio::spawn(on_ready(Started { addr: local, state }));
    let registry = Registry::new(connections::effective_cap(http.max_connections));
    let timeouts = accept::Timeouts::from_config(&http);
    let failed = accept::serve(listener, tls, app, registry, timeouts, grace, &mut jobs).await;
    let mut failures: Vec<_> = failed.into_iter().collect();
    failures.extend(jobs.stop(grace).await);
    let s = store.clone();
    let u = usage.clone();
    match tokio::task::spawn_blocking(move || s.checkpoint().and_then(|()| u.checkpoint())).await {
        Ok(Ok(())) => tracing::info!("databases checkpointed; bye"),
        Ok(Err(e)) => tracing::error!(error = %e, "checkpoint failed"),
        Err(e) => tracing::error!(error = %e, "checkpoint task failed"),
    }
    match failures.into_iter().next() {
        Some(f) => Err(ServeError::Job(f)),
        None => Ok(()),
    }
}

/// Makes the store match the config file's `[fleet]` before serving (nothing to do
/// when it declares nothing); a bad declaration stops the start.
async fn apply_declared(state: &AppState) -> Result<(), ServeError> {
    use crate::fleet::declared::{self, DeclaredError};
    let fleet = &state.config.fleet;
    if fleet.is_empty() {
        return Ok(());
    }
    let env: Vec<(String, String)> = std::env::vars().collect();
    let resolved = declared::resolve(fleet, &env)?;
    let key = crate::secret::SecretKey::load_or_create(&state.config.data_dir)
        .map_err(|e| DeclaredError::Failed(e.to_string()))?;
    let (store, runs) = (&state.store, &state.runs);
    let a = declared::apply(store, runs, &key, state.now(), resolved).await?;
    if a.is_unchanged() {
        tracing::info!(
            unchanged = a.unchanged,
            "declared fleet: already as the config file says"
        );
    } else {
        tracing::info!(
            datasources_created = a.datasources_created,
            datasources_updated = a.datasources_updated,
            clusters_created = a.clusters_created,
            clusters_updated = a.clusters_updated,
            tokens_set = a.tokens_set,
            links_set = a.links_set,
            unchanged = a.unchanged,
            "declared fleet applied"
        );
    }
    Ok(())
}

/// The hub's background jobs, one line each; the server supervises and stops them.
pub fn hub_jobs(state: &AppState) -> Jobs {
    let mut jobs = Jobs::new(state.jobs.clone());
    let (runs, fleet, store) = (&state.runs, &state.fleet, &state.store);
    jobs.spawn("run-scheduler", |stop| {
        crate::runs::scheduler::run(runs.clone(), store.clone(), stop)
    });
    let audit = &state.config.audit;
    let keep = crate::runs::retention::AuditRetention::from_days(
        audit.event_retention_days,
        audit.config_change_retention_days,
    );
    jobs.spawn("retention", |stop| {
        crate::runs::retention::run(runs.clone(), store.clone(), keep, stop)
    });
    jobs.spawn("fleet-ticker", |stop| {
        crate::fleet::ticker::run(store.clone(), runs.clone(), fleet.clone(), stop)
    });
    let (notify, metrics) = (&state.notify, &state.metrics);
    jobs.spawn("notify-dispatcher", |stop| {
        crate::notify::dispatcher::run(notify.clone(), metrics.clone(), stop)
    });
    jobs.spawn("notify-digest", |stop| {
        crate::notify::digest::run(notify.clone(), stop)
    });
    if let Some(usage) = &state.usage {
        jobs.spawn("usage-retention", |stop| {
            crate::fleet::usage_retention::run(usage.clone(), runs.clone(), stop)
        });
    }
    jobs
}
