//! The agent beside the hub and alone. `mode = "all-in-one"`: the hub registers its own
//! cluster when new and runs the agent as its job `agent`, reaching the hub in process
//! (`server::in_process`). `mode = "agent"`: the agent reports to a remote hub over HTTPS
//! with the cluster token, and this process serves only `/healthz`, `/readyz` and
//! `/metrics` (`kerf_agent_events_dropped_total`, the collector's). Either agent collects
//! usage for the hub as `[collector]` says. Both check the cluster before
//! serving (its version, kerf's CRD, the agent's rights) and refuse to start with one
//! line naming what is missing.

use std::sync::Arc;
use std::time::Duration;

use axum::routing::get;
use tokio::net::TcpListener;

use super::in_process::InProcessHub;
use super::ServeError;
use crate::agent::collector;
use crate::agent::http_hub::HttpHub;
use crate::agent::{Agent, Hub, Options, Outbox};

use crate::api::AppState;
use crate::clock::{Clock, SystemClock};
use crate::cluster::kube::{KubeCluster, KubeletTls};
use crate::cluster::Cluster;
use crate::config::{CollectorEnabled, Config};
use crate::jobs::{Board, Jobs};
use crate::metrics::Metrics;

/// How the agent collects usage, from `[collector]` (validated at load).
pub fn collector_settings(config: &Config) -> collector::Settings {
    let c = &config.collector;
    let defaults = collector::Settings::default();
    collector::Settings {
        enabled: match c.enabled {
            CollectorEnabled::Auto => collector::Enabled::Auto,
            CollectorEnabled::On => collector::Enabled::On,
            CollectorEnabled::Off => collector::Enabled::Off,
        },
        interval: c.interval().unwrap_or(defaults.interval),
        scrape_timeout: c.scrape_timeout().unwrap_or(defaults.scrape_timeout),
        max_concurrent_nodes: c.max_concurrent_nodes,
        buffer_max_samples: c.buffer_max_samples,
    }
}

/// The agent's options from the config.
pub fn options(config: &Config) -> Options {
    Options {
        cluster: config.agent.cluster.clone(),
        namespaces: config.agent.namespaces.clone(),
        agent_version: env!("CARGO_PKG_VERSION").to_string(),
    }
}

/// The cluster this process runs in (its service account) or `KUBECONFIG`'s, checked:
/// the API server answers, kerf's CRD is installed and readable.
pub async fn connect(config: &Config) -> Result<KubeCluster, ServeError> {
    let kube_config = kube::Config::infer().await.map_err(|e| {
        ServeError::Agent(format!(
            "no Kubernetes cluster to act on (not in a pod, and KUBECONFIG finds none): {e}"
        ))
    })?;
    let cluster = KubeCluster::connect(kube_config, kubelet_tls(config)?)
        .map_err(|e| ServeError::Agent(format!("cannot build the Kubernetes client: {e}")))?;
    cluster.server_version().await.map_err(|e| {
        ServeError::Agent(format!("the Kubernetes API server does not answer: {e}"))
    })?;
    match cluster.records(&config.agent.namespaces).await {
        Ok(_) => Ok(cluster),
        Err(e) if e.is_not_found() => Err(ServeError::Agent(
            "kerf's CRDs are not installed: kubectl apply -f packaging/k8s/crds.yaml".into(),
        )),
        Err(e) if e.code() == Some(403) => Err(ServeError::Agent(format!(
            "the agent may not read RightsizingRecommendations (packaging/k8s/agent-rbac.yaml): {e}"
        ))),
        Err(e) => Err(ServeError::Agent(format!(
            "cannot read kerf's records: {e}"
        ))),
    }
}

/// How the kubelets' serving certificates are trusted (`[agent] kubelet_*`).
fn kubelet_tls(config: &Config) -> Result<KubeletTls, ServeError> {
    use rustls::pki_types::pem::PemObject;
    let bad = |m: String| ServeError::Agent(m);
    let ca = match config.agent.kubelet_ca().map_err(|e| bad(e.to_string()))? {
        Some(pem) => {
            let certs: Vec<Vec<u8>> = rustls::pki_types::CertificateDer::pem_slice_iter(&pem)
                .map(|c| c.map(|c| c.to_vec()))
                .collect::<Result<_, _>>()
                .map_err(|_| bad("agent.kubelet_ca_file is not a PEM bundle".into()))?;
            if certs.is_empty() {
                return Err(bad("agent.kubelet_ca_file holds no certificate".into()));
            }
            Some(certs)
        }
        None => None,
    };
    if config.agent.kubelet_insecure_tls {
        tracing::warn!("agent.kubelet_insecure_tls: kubelet serving certificates are not verified");
    }
    Ok(KubeletTls {
        ca,
        insecure: config.agent.kubelet_insecure_tls,
    })
}

/// Registers `name` in the hub when it is new (all-in-one, `kerf demo`).
pub async fn register_cluster(state: &AppState, name: &str, by: &str) -> Result<(), ServeError> {
    let ctx = crate::events::config_change::AuditContext {
        actor: crate::wire::Actor::system(by),
        reason: None,
    };
    match crate::fleet::clusters::register(
        &state.store,
        state.now(),
        ctx,
        name.into(),
        Default::default(),
    )
    .await
    {
        Ok(_) => Ok(()),
        Err(crate::operation::OpError::Store(crate::store::StoreError::Conflict(_))) => Ok(()),
        Err(e) => Err(ServeError::Agent(format!(
            "cannot register cluster {name:?}: {e}"
        ))),
    }
}

/// Runs `cluster`'s agent as job `name`, reporting to the hub in process; the hub
/// registers the cluster first when it is new (audited as done by `by`).
pub fn spawn_in_process<C>(
    jobs: &mut Jobs,
    name: &'static str,
    state: &AppState,
    cluster: C,
    options: Options,
    by: &'static str,
) where
    C: Cluster + 'static,
{
    let state = state.clone();
    jobs.spawn(name, move |stop| async move {
        if let Err(e) = register_cluster(&state, &options.cluster, by).await {
            panic!("{e}");
        }
        let hub = Arc::new(InProcessHub::new(state.clone(), &options.cluster));
        let collecting = (
            collector_settings(&state.config),
            state.metrics.collector.clone(),
        );
        let dropped = state.metrics.agent_events_dropped.clone();
        run(
            cluster,
            hub,
            state.clock.clone(),
            options,
            dropped,
            collecting,
            stop,
        )
        .await
    });
}

async fn run<C: Cluster + 'static, H: Hub>(
    cluster: C,
    hub: Arc<H>,
    clock: Arc<dyn Clock>,
    options: Options,
    dropped: prometheus_client::metrics::family::Family<
        crate::metrics::DropLabels,
        prometheus_client::metrics::counter::Counter,
    >,
    (collecting, counted): (collector::Settings, crate::metrics::CollectorMetrics),
    stop: crate::jobs::Stop,
) {
    let outbox = Outbox::new(
        crate::wire::AgentSettings::default().event_buffer_size as usize,
        dropped,
    );
    match Agent::start(cluster, hub, clock, options, outbox).await {
        Ok(agent) => agent.with_collector(collecting, counted).run(stop).await,
        // The supervisor stops kerf naming the job and this reason.
        Err(e) => panic!("the agent cannot start: {e}"),
    }
}

/// `mode = "agent"`: the agent and its health and metrics endpoints, until SIGTERM.
pub async fn run_agent(
    config: Config,
    ready: Option<std::path::PathBuf>,
) -> Result<(), ServeError> {
    let env: Vec<(String, String)> = std::env::vars().collect();
    let token = config
        .agent
        .token(&env)
        .map_err(|e| ServeError::Agent(e.to_string()))?;
    let ca = config
        .agent
        .hub_ca()
        .map_err(|e| ServeError::Agent(e.to_string()))?;
    if config.agent.hub_in_clear() {
        tracing::warn!(
            "agent.allow_insecure_hub: the cluster token goes to the hub without TLS; use https"
        );
    }
    let timeout = Duration::from_secs(config.agent.hub_timeout_seconds);
    let hub = HttpHub::new(
        &config.agent.hub_url,
        &config.agent.cluster,
        token,
        ca.as_deref(),
        timeout,
    )
    .map_err(ServeError::Agent)?;
    let cluster = connect(&config).await?;
    let listener = TcpListener::bind(config.listen)
        .await
        .map_err(|source| ServeError::Bind {
            addr: config.listen,
            source,
        })?;
    let metrics = Arc::new(Metrics::new());
    let board = Board::default();
    let mut jobs = Jobs::new(board.clone());
    let (opts, dropped) = (options(&config), metrics.agent_events_dropped.clone());
    let collecting = (collector_settings(&config), metrics.collector.clone());
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let hub = Arc::new(hub);
    jobs.spawn("agent", move |stop| {
        run(cluster, hub, clock, opts, dropped, collecting, stop)
    });
    let app = axum::Router::new()
        .route(
            "/healthz",
            get(|| async { axum::Json(serde_json::json!({"status": "ok"})) }),
        )
        .route(
            "/readyz",
            get(move || {
                let board = board.clone();
                async move { axum::Json(serde_json::json!({ "jobs": board.statuses() })) }
            }),
        )
        .route(
            "/metrics",
            get(move || {
                let m = metrics.clone();
                async move { m.render() }
            }),
        );
    let local = listener.local_addr().map_err(|source| ServeError::Bind {
        addr: config.listen,
        source,
    })?;
    tracing::info!(addr = %local, role = "agent", hub = %config.agent.hub_url, cluster = %config.agent.cluster, "listening");
    super::ready_file::announce(ready.as_deref(), local, None);
    let grace = Duration::from_secs(config.http.shutdown_grace_seconds);
    let registry = super::Registry::new(super::connections::effective_cap(
        config.http.max_connections,
    ));
    let timeouts = super::accept::Timeouts::from_config(&config.http);
    let failed =
        super::accept::serve(listener, None, app, registry, timeouts, grace, &mut jobs).await;
    let mut failures: Vec<_> = failed.into_iter().collect();
    failures.extend(jobs.stop(grace).await);
    match failures.into_iter().next() {
        Some(f) => Err(ServeError::Job(f)),
        None => Ok(()),
    }
}
