//! One scrape of every node's kubelet: `Cluster::usage` of each node, a bounded number at
//! once (`[collector] max_concurrent_nodes`), each within `scrape_timeout`, counted by
//! outcome (`kerf_agent_scrapes_total{outcome="ok|error|timeout"}`) and timed
//! (`kerf_agent_scrape_duration_seconds`). A node that fails is logged (throttled) and
//! left out of this round; the others go on.

use std::time::{Duration, Instant};

use futures_util::stream::{self, StreamExt};

use super::series::point;
use crate::cluster::{Cluster, Node, UsageSample};
use crate::jobs::LogThrottle;
use crate::metrics::{CollectorMetrics, OutcomeLabels};
use crate::wire::remote_write::TimeSeries;

/// How the kubelets are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub timeout: Duration,
    pub concurrent: usize,
}

/// What one node's scrape came to.
enum Outcome {
    Ok(Vec<UsageSample>),
    Error(String),
    Timeout,
}

/// Reads every node of `nodes` and returns the samples of pods in `namespaces` (empty =
/// all: a kubelet serves every pod on its node, in scope or not).
pub async fn usage<C: Cluster>(
    cluster: &C,
    nodes: &[Node],
    namespaces: &[String],
    now_ms: i64,
    limits: Limits,
    metrics: &CollectorMetrics,
    failures: &mut LogThrottle,
) -> Vec<UsageSample> {
    // The scrapes as futures first: a stream mapping nodes by a closure is not `Send`
    // for every lifetime, which a spawned task needs.
    let scrapes: Vec<_> = nodes
        .iter()
        .map(|node| scrape(cluster, node, now_ms, limits.timeout, metrics))
        .collect();
    let outcomes: Vec<(&Node, Outcome)> = stream::iter(scrapes)
        .buffer_unordered(limits.concurrent.max(1))
        .collect()
        .await;
    let mut out = Vec::new();
    for (node, outcome) in outcomes {
        let label = match outcome {
            Outcome::Ok(samples) => {
                out.extend(
                    samples
                        .into_iter()
                        .filter(|s| namespaces.is_empty() || namespaces.contains(&s.pod.namespace)),
                );
                "ok"
            }
            Outcome::Error(error) => {
                if let Some(held) = failures.due() {
                    tracing::warn!(node = %node.name, %error, held_back = held, "cannot read the kubelet's usage; the node is left out of this collection");
                }
                "error"
            }
            Outcome::Timeout => {
                if let Some(held) = failures.due() {
                    tracing::warn!(node = %node.name, timeout = ?limits.timeout, held_back = held, "the kubelet did not answer in time; the node is left out of this collection");
                }
                "timeout"
            }
        };
        metrics
            .scrapes
            .get_or_create(&OutcomeLabels {
                outcome: label.into(),
            })
            .inc();
    }
    out
}

/// One node's scrape, timed.
async fn scrape<'a, C: Cluster>(
    cluster: &C,
    node: &'a Node,
    now_ms: i64,
    timeout: Duration,
    metrics: &CollectorMetrics,
) -> (&'a Node, Outcome) {
    let started = Instant::now();
    let outcome = match tokio::time::timeout(timeout, cluster.usage(node, now_ms)).await {
        Ok(Ok(samples)) => Outcome::Ok(samples),
        Ok(Err(e)) => Outcome::Error(e.to_string()),
        Err(_) => Outcome::Timeout,
    };
    metrics
        .scrape_duration
        .observe(started.elapsed().as_secs_f64());
    (node, outcome)
}

/// A usage sample as the series cAdvisor's exporter names it.
pub fn series(s: &UsageSample) -> TimeSeries {
    point(
        s.metric.name(),
        [
            ("namespace", s.pod.namespace.as_str()),
            ("pod", s.pod.name.as_str()),
            ("container", s.container.as_str()),
            ("id", s.id.as_str()),
        ],
        s.value,
        s.timestamp_ms,
    )
}
