//! Where usage comes from: a Prometheus-compatible API (Prometheus, Thanos, Mimir,
//! VictoriaMetrics), the hub's embedded usage store (what agents and remote writers
//! send) or the built-in demo fleet, all behind one interface, mapped into the analysis
//! engine's `resource-analysis-input/v2`.
//!
//! INTERFACE: runs call [`Source::plan`] once per cluster per run (the inventory, cut
//! into groups of workloads) and then [`Source::stream_group`] for each group in turn:
//! the group's workloads arrive on a bounded channel as each is complete, so a run holds
//! a window of workloads, never a group or the cluster (`docs/contracts/datasource.md`,
//! "Grouped collection"). [`Source::collect_group`] returns one group whole and
//! [`Source::collect`] gathers every group (tests, small clusters). The API calls
//! [`Source::usage`] for charts and [`Source::test`].

use std::sync::Arc;

use crate::analysis::{Input, Series};
use crate::workload::WorkloadKey;

/// Which slice of a (possibly multi-cluster) backend belongs to one kerf cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterScope {
    /// The kerf cluster name.
    pub cluster: String,
    /// Label that tells clusters apart in a shared backend (e.g. `cluster`), if any.
    pub selector_label: Option<String>,
    /// Value of that label for this cluster.
    pub selector_value: Option<String>,
}

/// The time range and resolution of a collection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Analysis "now" (Unix ms); becomes `evaluationTime`.
    pub end_ms: i64,
    /// Start of the lookback (Unix ms); becomes `windowStart`.
    pub start_ms: i64,
    /// Query resolution in seconds.
    pub step_seconds: u32,
}

/// One workload found in the cluster, with what runs need beyond the analysis input.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadInfo {
    pub namespace: String,
    /// `Deployment`, `StatefulSet`, `DaemonSet`, ...
    pub kind: String,
    pub name: String,
    /// Workload UID when known (empty otherwise).
    pub uid: String,
    /// Current replicas (for cost estimates); `None` when unknown.
    pub replicas: Option<u32>,
    /// Container names, sorted.
    pub containers: Vec<String>,
    /// The containers of `spec.initContainers` (sidecars and init containers) by name;
    /// the others are app containers.
    pub roles: std::collections::BTreeMap<String, crate::workload::ContainerRole>,
    /// Workload labels when known (policy selectors use them).
    pub labels: std::collections::BTreeMap<String, String>,
    /// The HorizontalPodAutoscaler scaling it, when kube-state-metrics shows one.
    pub hpa: Option<Hpa>,
    /// Why its usage could not be read (the datasource's answer was faulty, named): the
    /// run records this as the workload's error; the other workloads are unaffected.
    pub unreadable: Option<String>,
}

/// A HorizontalPodAutoscaler as kube-state-metrics exports it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Hpa {
    pub name: String,
    pub min_replicas: Option<u32>,
    pub max_replicas: Option<u32>,
    /// The metrics it scales on, sorted.
    pub targets: Vec<HpaTarget>,
}

/// One metric an HPA scales on: `metric_name` (`cpu`, `memory` or a custom name),
/// `metric_target_type` (`utilization`, `average`, `value`) and the target.
#[derive(Debug, Clone, PartialEq)]
pub struct HpaTarget {
    pub metric: String,
    pub target_type: String,
    pub value: f64,
}

impl Hpa {
    /// The utilization target (percent of the request) it keeps for `resource`.
    pub fn utilization(&self, resource: &str) -> Option<f64> {
        self.targets
            .iter()
            .find(|t| t.metric == resource && t.target_type == "utilization")
            .map(|t| t.value)
    }

    /// The CPU utilization target, when it scales on one.
    pub fn cpu_utilization(&self) -> Option<f64> {
        self.utilization("cpu")
    }
}

/// Counters a collection reports for run records and benchmarks.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CollectStats {
    /// HTTP queries issued (0 for the demo).
    pub queries: u64,
    /// Series received.
    pub series: u64,
    /// Samples handed to the engine (raw, staleness markers dropped).
    pub samples: u64,
    /// Answer bytes received from the datasource.
    pub bytes: u64,
    /// Samples decoded from answers (JSON pairs, export values, or XOR-chunk samples).
    pub samples_decoded: u64,
    /// How usage was read: `remote-read`, `vm-export`, `range-selector` (empty for the
    /// demo).
    pub protocol: String,
    /// Milliseconds per named phase (e.g. `inventory`, `usage`, `settings`, `map`).
    pub phase_ms: Vec<(String, u64)>,
}

/// Everything one cluster collection yields.
#[derive(Debug, Clone)]
pub struct Collection {
    /// The analysis input: one container observation per (namespace, kind, name, container).
    pub input: Input,
    /// The workloads those containers belong to.
    pub workloads: Vec<WorkloadInfo>,
    pub stats: CollectStats,
}

/// What `POST /v1/datasources/{id}/test` reports.
#[derive(Debug, Clone, PartialEq, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TestReport {
    pub reachable: bool,
    pub authenticated: bool,
    /// Metric names kerf needs that returned no series for this scope.
    pub missing_metrics: Vec<String>,
    /// Whether the server streams remote read (`None` when unreachable or refused).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remote_read: Option<bool>,
    /// The protocol runs will read usage with (`remote-read`, `vm-export` or
    /// `range-selector`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// A human-readable summary (never contains a secret).
    pub message: String,
}

/// A datasource failure. Messages never include credentials.
#[derive(Debug, thiserror::Error)]
pub enum DatasourceError {
    #[error("datasource unreachable: {0}")]
    Unreachable(String),
    #[error("datasource refused the credentials (HTTP {0})")]
    Unauthorized(u16),
    #[error("datasource query failed: {0}")]
    Query(String),
    /// The datasource answered with a redirect to another origin, which kerf does not
    /// follow: the request carries the datasource's credentials.
    #[error(
        "the datasource redirected to another origin ({0}); kerf does not follow a redirect that would carry the datasource's credentials there: set the URL to the final address"
    )]
    Redirected(String),
    #[error("datasource answer could not be read: {0}")]
    Decode(String),
    #[error("invalid datasource settings: {0}")]
    Invalid(String),
}

/// Which resource a chart asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UsageResource {
    Cpu,
    Memory,
}

/// The operations every datasource offers. Implemented by the Prometheus client, the
/// embedded usage store and the demo fleet; runs and the API hold a `Datasource` and
/// never know which one it is.
pub trait Source: Send + Sync {
    /// Reads the inventory of `scope` over `window` and cuts it into groups.
    fn plan(
        &self,
        scope: &ClusterScope,
        window: Window,
    ) -> impl std::future::Future<Output = Result<CollectPlan, DatasourceError>> + Send;

    /// Collects group `index` of `plan`: complete workloads, mapped, with the counters
    /// of this group only.
    fn collect_group(
        &self,
        plan: &CollectPlan,
        index: usize,
    ) -> impl std::future::Future<Output = Result<Collection, DatasourceError>> + Send;

    /// Streams group `index` of `plan` into `sink`, as collections of complete workloads
    /// sent as soon as each is complete (their own `stats` are left empty), and returns
    /// the group's counters. Sources that cannot stream send the group whole.
    fn stream_group(
        &self,
        plan: &CollectPlan,
        index: usize,
        sink: &Sink,
    ) -> impl std::future::Future<Output = Result<CollectStats, DatasourceError>> + Send {
        async move {
            let mut group = self.collect_group(plan, index).await?;
            let stats = std::mem::take(&mut group.stats);
            send(sink, group).await?;
            Ok(stats)
        }
    }

    /// Collects every workload container of `scope` over `window` at once: the plan and
    /// every group, gathered and sorted. Holds the whole cluster; runs use the groups.
    fn collect(
        &self,
        scope: &ClusterScope,
        window: Window,
    ) -> impl std::future::Future<Output = Result<Collection, DatasourceError>> + Send {
        async move {
            let plan = self.plan(scope, window).await?;
            let mut all = Collection::empty(window);
            all.stats = plan.stats.clone();
            for index in 0..plan.groups.len() {
                all.absorb(self.collect_group(&plan, index).await?);
            }
            all.sort();
            Ok(all)
        }
    }

    /// Raw usage series of one container (for charts; the API normalizes them with
    /// `analysis::normalize_samples` and downsamples for display only).
    fn usage(
        &self,
        scope: &ClusterScope,
        workload: &WorkloadKey,
        container: &str,
        resource: UsageResource,
        window: Window,
    ) -> impl std::future::Future<Output = Result<Vec<Series>, DatasourceError>> + Send;

    /// Reachability, credentials and the presence of the metrics kerf needs.
    fn test(
        &self,
        scope: &ClusterScope,
    ) -> impl std::future::Future<Output = Result<TestReport, DatasourceError>> + Send;
}

/// Where a streamed group's workloads go (bounded: a full channel pauses collection).
pub type Sink = tokio::sync::mpsc::Sender<Collection>;

/// Group `index` of `plan` gathered into one collection from what `source` streams: the
/// `collect_group` of a source whose own way is to stream (tests, `collect`).
pub async fn gather_streamed<S: Source>(
    source: &S,
    plan: &CollectPlan,
    index: usize,
) -> Result<Collection, DatasourceError> {
    if plan.groups.get(index).is_none() {
        return Err(DatasourceError::Invalid(format!(
            "the plan has no group {index}"
        )));
    }
    let (sink, mut pieces) = tokio::sync::mpsc::channel(4);
    let mut out = Collection::empty(plan.window);
    let gather = async {
        while let Some(piece) = pieces.recv().await {
            out.absorb(piece);
        }
    };
    let (stats, ()) = tokio::join!(
        async move { source.stream_group(plan, index, &sink).await },
        gather
    );
    out.stats = stats?;
    out.sort();
    Ok(out)
}

/// Sends `piece` into `sink`; a closed sink means the run stopped listening.
pub async fn send(sink: &Sink, piece: Collection) -> Result<(), DatasourceError> {
    sink.send(piece)
        .await
        .map_err(|_| DatasourceError::Query("the run stopped reading the collection".into()))
}

pub mod category;
pub mod connection;
pub mod credentials;
pub mod demo;
pub mod embedded;
pub mod input;
pub mod mapping;
pub mod plan;
pub mod prometheus;
pub mod raw;
pub mod view;

pub use connection::DatasourceSettings;
pub use credentials::{datasource_binding, Secrets};
pub use demo::DemoFleet;
pub use embedded::EmbeddedSource;
pub use plan::{Budget, CollectPlan, Group};
pub use prometheus::PrometheusSource;

/// The datasource a cluster points at. The trait is not object-safe (async methods), so
/// runs and the API hold this enum and never know which source answers.
#[derive(Debug, Clone)]
pub enum Datasource {
    Prometheus(PrometheusSource),
    /// The hub's usage store (issue 30): what the cluster's agent or remote writers sent.
    Embedded(EmbeddedSource),
    Demo(DemoFleet),
}

impl Datasource {
    /// The built-in demo fleet (clusters `demo-east` and `demo-west`).
    pub fn demo(seed: u64) -> Datasource {
        Datasource::Demo(DemoFleet::new(seed))
    }

    /// The hub's embedded usage store, read for kerf cluster `cluster`.
    pub fn embedded(store: crate::store::usage::UsageStore, cluster: &str) -> Datasource {
        Datasource::Embedded(EmbeddedSource::new(store, cluster))
    }

    /// The demo fleet with the changes the demo's in-process agents make (`sim::live`).
    pub fn demo_live(seed: u64, live: crate::sim::live::Live) -> Datasource {
        Datasource::Demo(DemoFleet::with_live(seed, live))
    }

    /// A Prometheus-compatible source from validated settings and their opened secrets,
    /// reaching only what `outbound` allows.
    pub fn from_settings(
        settings: &DatasourceSettings,
        secrets: &Secrets,
        outbound: &Arc<crate::outbound::Policy>,
    ) -> Result<Datasource, DatasourceError> {
        use prometheus::{ClientAuth, ClientConfig};
        let auth = match settings.auth_type.as_str() {
            "basic" => ClientAuth::Basic {
                username: settings.username.clone().unwrap_or_default(),
                password: secrets.password.clone().unwrap_or_default(),
            },
            "bearer" => ClientAuth::Bearer(secrets.token.clone().unwrap_or_default()),
            _ => ClientAuth::None,
        };
        let headers = settings
            .headers
            .iter()
            .map(|h| {
                let value = if h.secret {
                    secrets
                        .headers
                        .get(&h.name)
                        .map(|s| s.expose().to_string())
                        .unwrap_or_default()
                } else {
                    h.value.clone().unwrap_or_default()
                };
                (h.name.clone(), value)
            })
            .collect();
        Ok(Datasource::Prometheus(
            PrometheusSource::new(ClientConfig {
                url: settings.url.clone(),
                auth,
                headers,
                ca_pem: settings.ca_pem.clone(),
                insecure_skip_verify: settings.insecure_skip_verify,
                timeout: std::time::Duration::from_secs(settings.timeout_seconds),
                max_concurrent_queries: settings.max_concurrent_queries as usize,
                outbound: outbound.clone(),
            })?
            .with_budget(Budget {
                samples_per_request: settings.max_samples_per_query,
                series_per_request: settings.max_series_per_query,
            })
            .with_protocol(
                prometheus::ProtocolChoice::parse(&settings.protocol).unwrap_or_default(),
            ),
        ))
    }

    /// Opens `sealed` secrets with `key` (bound to the stored `settings_json`), then as
    /// [`Datasource::from_settings`].
    pub fn from_sealed(
        settings: &DatasourceSettings,
        settings_json: &str,
        sealed: &[u8],
        key: &crate::secret::SecretKey,
        outbound: &Arc<crate::outbound::Policy>,
    ) -> Result<Datasource, DatasourceError> {
        let secrets: Secrets = key
            .open_for(sealed, &credentials::datasource_binding(settings_json))
            .map_err(|e| DatasourceError::Invalid(e.to_string()))?;
        Datasource::from_settings(settings, &secrets, outbound)
    }
}

/// The scope of kerf cluster `cluster` in a datasource: its cluster label, with the
/// configured value or else the cluster's own name.
pub fn scope_for(settings: &DatasourceSettings, cluster: &str) -> ClusterScope {
    ClusterScope {
        cluster: cluster.to_string(),
        selector_label: settings.cluster_label.clone(),
        selector_value: settings.cluster_label.as_ref().map(|_| {
            settings
                .cluster_value
                .clone()
                .unwrap_or_else(|| cluster.to_string())
        }),
    }
}

impl Source for Datasource {
    async fn plan(
        &self,
        scope: &ClusterScope,
        window: Window,
    ) -> Result<CollectPlan, DatasourceError> {
        match self {
            Datasource::Prometheus(p) => p.plan(scope, window).await,
            Datasource::Embedded(e) => e.plan(scope, window).await,
            Datasource::Demo(d) => d.plan(scope, window).await,
        }
    }

    async fn collect_group(
        &self,
        plan: &CollectPlan,
        index: usize,
    ) -> Result<Collection, DatasourceError> {
        match self {
            Datasource::Prometheus(p) => p.collect_group(plan, index).await,
            Datasource::Embedded(e) => e.collect_group(plan, index).await,
            Datasource::Demo(d) => d.collect_group(plan, index).await,
        }
    }

    async fn stream_group(
        &self,
        plan: &CollectPlan,
        index: usize,
        sink: &Sink,
    ) -> Result<CollectStats, DatasourceError> {
        match self {
            Datasource::Prometheus(p) => p.stream_group(plan, index, sink).await,
            Datasource::Embedded(e) => e.stream_group(plan, index, sink).await,
            Datasource::Demo(d) => d.stream_group(plan, index, sink).await,
        }
    }

    async fn usage(
        &self,
        scope: &ClusterScope,
        workload: &WorkloadKey,
        container: &str,
        resource: UsageResource,
        window: Window,
    ) -> Result<Vec<Series>, DatasourceError> {
        match self {
            Datasource::Prometheus(p) => {
                p.usage(scope, workload, container, resource, window).await
            }
            Datasource::Embedded(e) => e.usage(scope, workload, container, resource, window).await,
            Datasource::Demo(d) => d.usage(scope, workload, container, resource, window).await,
        }
    }

    async fn test(&self, scope: &ClusterScope) -> Result<TestReport, DatasourceError> {
        match self {
            Datasource::Prometheus(p) => p.test(scope).await,
            Datasource::Embedded(e) => e.test(scope).await,
            Datasource::Demo(d) => d.test(scope).await,
        }
    }
}
