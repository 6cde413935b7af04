//! Prometheus metrics exposed at `/metrics` (docs/contracts/metrics.md lists them).

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

/// Labels of `kerf_actions_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ActionLabels {
    pub cluster: String,
    pub r#type: String,
    pub reason: String,
}

/// Labels of the HTTP metrics; `route` is the matched route template, never a raw path.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct HttpLabels {
    pub method: String,
    pub route: String,
    pub status: u16,
}

/// Labels of `kerf_notifications_sent_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct NotifyLabels {
    /// `slack`, `teams`, `webhook` or `email`.
    pub channel_type: String,
    /// `delivered`, `retry` (this attempt failed, another follows) or `failed` (given up).
    pub outcome: String,
}

/// Labels of the datasource collection metrics.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct CollectLabels {
    pub cluster: String,
    /// `remote-read`, `vm-export` or `range-selector` (`demo` for the built-in fleet).
    pub protocol: String,
}

/// Labels of `kerf_agent_events_dropped_total` and `kerf_agent_samples_dropped_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct DropLabels {
    /// `buffer_full` (the oldest dropped while the hub was away); events: `invalid`
    /// (refused by the hub's validation); samples: `refused` (a 400 from the hub).
    pub reason: String,
}

/// Labels of a metric counted by outcome.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct OutcomeLabels {
    pub outcome: String,
}

/// Labels of `kerf_agent_samples_collected_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct SourceLabels {
    /// `cadvisor` (the kubelets) or `kube-state` (the agent's watches).
    pub source: String,
}

/// The agent's collector (docs/contracts/metrics.md). Clones count into the same
/// families; [`CollectorMetrics::default`] is unregistered (tests).
#[derive(Clone)]
pub struct CollectorMetrics {
    /// Kubelet scrapes by outcome: `ok`, `error`, `timeout`.
    pub scrapes: Family<OutcomeLabels, Counter>,
    /// How long one kubelet took to answer (timeouts included, at the timeout).
    pub scrape_duration: Histogram,
    /// Samples collected, by source.
    pub samples: Family<SourceLabels, Counter>,
    /// Samples dropped before the hub stored them: `buffer_full` (the oldest, while the
    /// hub was away) or `refused` (a 400: the hub will never take them).
    pub dropped: Family<DropLabels, Counter>,
    /// Write requests to the hub by outcome: `ok`, `refused` (dropped), `retry`.
    pub writes: Family<OutcomeLabels, Counter>,
}

impl Default for CollectorMetrics {
    fn default() -> Self {
        CollectorMetrics {
            scrapes: Family::default(),
            scrape_duration: Histogram::new(exponential_buckets(0.005, 2.0, 12)),
            samples: Family::default(),
            dropped: Family::default(),
            writes: Family::default(),
        }
    }
}

impl CollectorMetrics {
    fn register(registry: &mut Registry) -> CollectorMetrics {
        let m = CollectorMetrics::default();
        registry.register(
            "kerf_agent_scrapes",
            "Kubelet scrapes of the agent's collector, by outcome",
            m.scrapes.clone(),
        );
        registry.register(
            "kerf_agent_scrape_duration_seconds",
            "Time a kubelet took to answer the collector's scrape",
            m.scrape_duration.clone(),
        );
        registry.register(
            "kerf_agent_samples_collected",
            "Samples the agent's collector gathered, by source",
            m.samples.clone(),
        );
        registry.register(
            "kerf_agent_samples_dropped",
            "Collected samples dropped before the hub stored them, by reason",
            m.dropped.clone(),
        );
        registry.register(
            "kerf_agent_write_requests",
            "Remote-write requests the agent sent the hub, by outcome",
            m.writes.clone(),
        );
        m
    }
}

/// Labels of the usage store's per-cluster counters.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ClusterLabels {
    pub cluster: String,
}

/// Labels of `kerf_usage_samples_refused_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RefusedLabels {
    pub cluster: String,
    /// `bad_labels`, `series_limit`, `conflict`, `out_of_order`, `too_old`, `too_new`,
    /// `chunk_full`.
    pub reason: String,
}

/// Labels of `kerf_usage_write_requests_total`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct WriteLabels {
    pub cluster: String,
    /// `stored` (all of it), `partial` (some samples refused), `invalid` (not a
    /// readable write), `too_large`, `failed` (the store failed; the writer retries).
    pub outcome: String,
}

/// What the hub's usage store took from remote writes (docs/contracts/metrics.md).
#[derive(Clone, Default)]
pub struct UsageMetrics {
    pub stored: Family<ClusterLabels, Counter>,
    pub duplicates: Family<ClusterLabels, Counter>,
    pub refused: Family<RefusedLabels, Counter>,
    pub writes: Family<WriteLabels, Counter>,
}

impl UsageMetrics {
    fn register(registry: &mut Registry) -> UsageMetrics {
        let m = UsageMetrics::default();
        registry.register(
            "kerf_usage_samples_stored",
            "Samples the usage store took from remote writes, by cluster",
            m.stored.clone(),
        );
        registry.register(
            "kerf_usage_samples_duplicates",
            "Samples received again with the stored value (retries) and ignored, by cluster",
            m.duplicates.clone(),
        );
        registry.register(
            "kerf_usage_samples_refused",
            "Samples the usage store refused, by cluster and reason",
            m.refused.clone(),
        );
        registry.register(
            "kerf_usage_write_requests",
            "Remote-write requests received, by cluster and outcome",
            m.writes.clone(),
        );
        m
    }

    /// Counts one write request of `cluster` with its outcome.
    pub fn count_write(&self, cluster: &str, outcome: &str) {
        self.writes
            .get_or_create(&WriteLabels {
                cluster: cluster.to_string(),
                outcome: outcome.to_string(),
            })
            .inc();
    }
}

/// Every metric kerf exposes, plus the registry that renders them.
pub struct Metrics {
    registry: Registry,
    /// Stored workload events by cluster, type and reason. Duplicates never count.
    pub actions: Family<ActionLabels, Counter>,
    /// Event ids received again and ignored.
    pub duplicate_events: Counter,
    pub http_requests: Family<HttpLabels, Counter>,
    pub http_duration: Family<HttpLabels, Histogram, fn() -> Histogram>,
    /// Notification delivery attempts by channel type and outcome.
    pub notifications_sent: Family<NotifyLabels, Counter>,
    /// Datasource requests of recommendation runs (retries included).
    pub collect_requests: Family<CollectLabels, Counter>,
    /// Answer bytes received from datasources by runs.
    pub collect_bytes: Family<CollectLabels, Counter>,
    /// Samples decoded from datasource answers by runs.
    pub collect_samples: Family<CollectLabels, Counter>,
    /// Events the agent dropped before the hub stored them.
    pub agent_events_dropped: Family<DropLabels, Counter>,
    /// The agent's collector.
    pub collector: CollectorMetrics,
    /// The hub's usage store.
    pub usage: UsageMetrics,
}

impl Metrics {
    pub fn new() -> Self {
        let mut registry = Registry::default();
        let actions = Family::<ActionLabels, Counter>::default();
        registry.register(
            "kerf_actions",
            "Workload audit events stored, by cluster, type and reason",
            actions.clone(),
        );
        let duplicate_events = Counter::default();
        registry.register(
            "kerf_events_duplicates",
            "Event ids received again and ignored (at-least-once delivery)",
            duplicate_events.clone(),
        );
        let http_requests = Family::<HttpLabels, Counter>::default();
        registry.register(
            "kerf_http_requests",
            "HTTP requests served, by method, route and status",
            http_requests.clone(),
        );
        let http_duration = Family::<HttpLabels, Histogram>::new_with_constructor(
            new_latency_histogram as fn() -> Histogram,
        );
        registry.register(
            "kerf_http_request_duration_seconds",
            "HTTP request latency, by method, route and status",
            http_duration.clone(),
        );
        let notifications_sent = Family::<NotifyLabels, Counter>::default();
        registry.register(
            "kerf_notifications_sent",
            "Notification delivery attempts, by channel type and outcome",
            notifications_sent.clone(),
        );
        let collect_requests = Family::<CollectLabels, Counter>::default();
        registry.register(
            "kerf_datasource_requests",
            "Datasource requests made by recommendation runs, by cluster and protocol",
            collect_requests.clone(),
        );
        let collect_bytes = Family::<CollectLabels, Counter>::default();
        registry.register(
            "kerf_datasource_received_bytes",
            "Answer bytes received from datasources by runs, by cluster and protocol",
            collect_bytes.clone(),
        );
        let collect_samples = Family::<CollectLabels, Counter>::default();
        registry.register(
            "kerf_datasource_samples_decoded",
            "Samples decoded from datasource answers by runs, by cluster and protocol",
            collect_samples.clone(),
        );
        let agent_events_dropped = Family::<DropLabels, Counter>::default();
        registry.register(
            "kerf_agent_events_dropped",
            "Events the agent dropped before the hub stored them, by reason",
            agent_events_dropped.clone(),
        );
        let collector = CollectorMetrics::register(&mut registry);
        let usage = UsageMetrics::register(&mut registry);
        Metrics {
            registry,
            usage,
            agent_events_dropped,
            collector,
            notifications_sent,
            collect_requests,
            collect_bytes,
            collect_samples,
            actions,
            duplicate_events,
            http_requests,
            http_duration,
        }
    }

    /// Sets the action counters from stored counts (at start-up, before serving).
    pub fn seed_actions(&self, counts: &[(String, String, String, u64)]) {
        for (cluster, event_type, reason, n) in counts {
            self.actions
                .get_or_create(&ActionLabels {
                    cluster: cluster.clone(),
                    r#type: event_type.clone(),
                    reason: reason.clone(),
                })
                .inc_by(*n);
        }
    }

    /// Adds one run's collection figures (its record's `collect` JSON: `queries`,
    /// `bytes`, `samplesDecoded`, `protocol`).
    pub fn record_collection(&self, cluster: &str, collect: &serde_json::Value) {
        let protocol = match collect["protocol"].as_str() {
            Some(p) if !p.is_empty() => p.to_string(),
            _ => "demo".to_string(),
        };
        let labels = CollectLabels {
            cluster: cluster.to_string(),
            protocol,
        };
        let count = |key: &str| collect[key].as_u64().unwrap_or(0);
        self.collect_requests
            .get_or_create(&labels)
            .inc_by(count("queries"));
        self.collect_bytes
            .get_or_create(&labels)
            .inc_by(count("bytes"));
        self.collect_samples
            .get_or_create(&labels)
            .inc_by(count("samplesDecoded"));
    }

    /// The text exposition format.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if let Err(e) = prometheus_client::encoding::text::encode(&mut out, &self.registry) {
            tracing::error!(error = %e, "cannot encode metrics");
        }
        out
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

fn new_latency_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.0005, 4.0, 9))
}
