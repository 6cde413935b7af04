//! Collection from a Prometheus-compatible API (Prometheus, Thanos, Mimir,
//! VictoriaMetrics): one inventory phase for the whole cluster, then usage, settings
//! and OOM queries per batch of namespaces (never per container), each range split
//! under the points-per-series limit, all through one bounded client. Batches are mapped
//! as they arrive and their raw answers dropped.

pub mod client;
pub mod queries;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use crate::analysis::{Input, Series, INPUT_SCHEMA_VERSION};
use crate::datasource::mapping::{map_batch, PodIndex};
use crate::datasource::raw::{metric, Labels, RawInventory, RawSeries, RawSettings, RawUsage};
use crate::datasource::{
    ClusterScope, CollectStats, Collection, DatasourceError, Source, TestReport, UsageResource,
    Window,
};

pub use client::{Client, ClientAuth, ClientConfig};
use queries::Selector;

/// Pods per namespace batch: bounds the series in one answer (and kerf's peak memory).
const BATCH_PODS: usize = 400;

/// A Prometheus-compatible datasource.
#[derive(Debug, Clone)]
pub struct PrometheusSource {
    client: Client,
}

impl PrometheusSource {
    pub fn new(config: ClientConfig) -> Result<PrometheusSource, DatasourceError> {
        Ok(PrometheusSource {
            client: Client::new(config)?,
        })
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Collects `scope`, restricted to `only_namespaces` when not empty.
    pub async fn collect_namespaces(
        &self,
        scope: &ClusterScope,
        window: Window,
        only_namespaces: &[String],
    ) -> Result<Collection, DatasourceError> {
        if window.end_ms <= window.start_ms || window.step_seconds == 0 {
            return Err(DatasourceError::Invalid(
                "window must have end > start and a positive step".into(),
            ));
        }
        let queries_before = self.client.queries();
        let started = Instant::now();
        let window_s = ((window.end_ms - window.start_ms) / 1000).max(1);
        let sel = Selector::new(scope, only_namespaces);
        let inventory = self.inventory(&sel, window_s, window.end_ms).await?;
        let pods = Arc::new(PodIndex::build(&inventory));
        drop(inventory);
        let inventory_ms = started.elapsed().as_millis() as u64;

        let batches = namespace_batches(&pods, only_namespaces);
        let mut tasks = tokio::task::JoinSet::new();
        for namespaces in batches {
            let this = self.clone();
            let (scope, pods) = (scope.clone(), pods.clone());
            tasks.spawn(async move {
                this.batch(&scope, window, window_s, &namespaces, &pods)
                    .await
            });
        }
        let mut containers = Vec::new();
        let mut workloads = Vec::new();
        let (mut series, mut samples, mut map_ms) = (0u64, 0u64, 0u64);
        while let Some(joined) = tasks.join_next().await {
            let b = joined.map_err(|e| DatasourceError::Query(format!("batch task: {e}")))??;
            containers.extend(b.containers);
            workloads.extend(b.workloads);
            series += b.series;
            samples += b.samples;
            map_ms += b.map_ms;
        }
        let total_ms = started.elapsed().as_millis() as u64;
        containers.sort_by(|a, b| target_key(&a.target).cmp(&target_key(&b.target)));
        workloads.sort_by(|a, b| {
            (&a.namespace, &a.kind, &a.name).cmp(&(&b.namespace, &b.kind, &b.name))
        });
        Ok(Collection {
            input: Input {
                schema_version: INPUT_SCHEMA_VERSION.to_string(),
                evaluation_time: window.end_ms,
                window_start: window.start_ms,
                containers,
            },
            workloads,
            stats: CollectStats {
                queries: self.client.queries() - queries_before,
                series,
                samples,
                phase_ms: vec![
                    ("inventory".into(), inventory_ms),
                    ("usage".into(), total_ms.saturating_sub(inventory_ms)),
                    ("map".into(), map_ms),
                ],
            },
        })
    }

    async fn inventory(
        &self,
        sel: &Selector,
        window_s: i64,
        end_ms: i64,
    ) -> Result<RawInventory, DatasourceError> {
        let q = queries::inventory(sel, window_s);
        let c = &self.client;
        let (a, b, cr, d, e, f, g) = tokio::try_join!(
            c.query(&q[0], end_ms),
            c.query(&q[1], end_ms),
            c.query(&q[2], end_ms),
            c.query(&q[3], end_ms),
            c.query(&q[4], end_ms),
            c.query(&q[5], end_ms),
            c.query(&q[6], end_ms),
        )?;
        Ok(RawInventory {
            pod_owner: a,
            pod_alive: b,
            pod_created: cr,
            pod_revision: d,
            replicaset_owner: e,
            workload_created: f,
            replicas: g,
        })
    }

    async fn range(&self, promql: &str, window: Window) -> Result<Vec<RawSeries>, DatasourceError> {
        let mut merged: BTreeMap<Labels, Vec<crate::analysis::Sample>> = BTreeMap::new();
        for (from, to) in queries::split_range(window.start_ms, window.end_ms, window.step_seconds)
        {
            for s in self
                .client
                .query_range(promql, from, to, window.step_seconds)
                .await?
            {
                merged.entry(s.labels).or_default().extend(s.samples);
            }
        }
        Ok(merged
            .into_iter()
            .map(|(labels, samples)| RawSeries { labels, samples })
            .collect())
    }

    async fn batch(
        &self,
        scope: &ClusterScope,
        window: Window,
        window_s: i64,
        namespaces: &[String],
        pods: &PodIndex,
    ) -> Result<BatchResult, DatasourceError> {
        let sel = Selector::new(scope, namespaces);
        let c = &self.client;
        let q = [
            queries::settings_now(&sel),
            queries::memory_limits(&sel, window_s),
            queries::oom_terminations(&sel),
            queries::usage(&sel, metric::CPU),
            queries::usage(&sel, metric::MEMORY),
        ];
        let (settings_now, memory_limits, oom, cpu, memory) = tokio::try_join!(
            c.query(&q[0], window.end_ms),
            c.query(&q[1], window.end_ms),
            self.range(&q[2], window),
            self.range(&q[3], window),
            self.range(&q[4], window),
        )?;
        let series = (cpu.len() + memory.len()) as u64;
        let samples = cpu
            .iter()
            .chain(&memory)
            .map(|s| s.samples.len() as u64)
            .sum();
        let settings = RawSettings {
            settings_now,
            memory_limits,
            oom_terminations: oom,
        };
        let started = Instant::now();
        let (containers, workloads) = map_batch(window, pods, &settings, RawUsage { cpu, memory });
        Ok(BatchResult {
            containers,
            workloads,
            series,
            samples,
            map_ms: started.elapsed().as_millis() as u64,
        })
    }
}

struct BatchResult {
    containers: Vec<crate::analysis::ContainerObservation>,
    workloads: Vec<crate::datasource::WorkloadInfo>,
    series: u64,
    samples: u64,
    map_ms: u64,
}

fn target_key(t: &crate::analysis::Target) -> (&str, &str, &str, &str) {
    (&t.namespace, &t.kind, &t.name, &t.container)
}

/// Namespaces grouped so each batch holds about [`BATCH_PODS`] pods. Without
/// kube-state-metrics nothing is known of namespaces: one batch for everything.
fn namespace_batches(pods: &PodIndex, only: &[String]) -> Vec<Vec<String>> {
    if !pods.ksm_present {
        return vec![only.to_vec()];
    }
    let mut batches: Vec<Vec<String>> = Vec::new();
    let mut current: Vec<String> = Vec::new();
    let mut size = 0;
    for (ns, count) in pods.namespaces() {
        if !current.is_empty() && size + count > BATCH_PODS {
            batches.push(std::mem::take(&mut current));
            size = 0;
        }
        current.push(ns);
        size += count;
    }
    if !current.is_empty() {
        batches.push(current);
    }
    batches
}

impl Source for PrometheusSource {
    async fn collect(
        &self,
        scope: &ClusterScope,
        window: Window,
    ) -> Result<Collection, DatasourceError> {
        self.collect_namespaces(scope, window, &[]).await
    }

    async fn usage(
        &self,
        scope: &ClusterScope,
        workload: (&str, &str, &str),
        container: &str,
        resource: UsageResource,
        window: Window,
    ) -> Result<Vec<Series>, DatasourceError> {
        let (ns, kind, name) = workload;
        let collection = self
            .collect_namespaces(scope, window, &[ns.to_string()])
            .await?;
        let found = collection.input.containers.into_iter().find(|c| {
            c.target.kind == kind && c.target.name == name && c.target.container == container
        });
        Ok(found
            .map(|c| match resource {
                UsageResource::Cpu => c.cpu.series,
                UsageResource::Memory => c.memory.series,
            })
            .unwrap_or_default())
    }

    async fn test(&self, scope: &ClusterScope) -> Result<TestReport, DatasourceError> {
        let now = crate::store::now_ms();
        match self.client.ping(now).await {
            Ok(()) => {}
            Err(DatasourceError::Unauthorized(code)) => {
                return Ok(TestReport {
                    reachable: true,
                    authenticated: false,
                    missing_metrics: metric::REQUIRED.iter().map(|m| m.to_string()).collect(),
                    message: format!("the datasource refused the credentials (HTTP {code})"),
                })
            }
            Err(e @ DatasourceError::Unreachable(_)) => {
                return Ok(TestReport {
                    reachable: false,
                    authenticated: false,
                    missing_metrics: metric::REQUIRED.iter().map(|m| m.to_string()).collect(),
                    message: e.to_string(),
                })
            }
            Err(e) => return Err(e),
        }
        let present = self
            .client
            .query(&queries::presence(&Selector::new(scope, &[])), now)
            .await?;
        let missing: Vec<String> = metric::REQUIRED
            .iter()
            .filter(|m| !present.iter().any(|s| s.label("__name__") == **m))
            .map(|m| m.to_string())
            .collect();
        let message = if missing.is_empty() {
            "reachable, authenticated, and every metric kerf needs is present".to_string()
        } else {
            format!(
                "reachable and authenticated; missing: {}",
                missing.join(", ")
            )
        };
        Ok(TestReport {
            reachable: true,
            authenticated: true,
            missing_metrics: missing,
            message,
        })
    }
}
