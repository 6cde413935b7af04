//! Collection from a Prometheus-compatible API (Prometheus, Thanos, Mimir,
//! VictoriaMetrics): one inventory phase for the whole cluster (the plan), then settings
//! and OOM queries per group of workloads (never per container), and usage either
//! streamed workload by workload (`stream`: remote read, or VictoriaMetrics's export
//! API) or by `query_range` per group (each range split under the points-per-series
//! limit), whichever the server supports (`protocol`), all through one bounded client. Answers are decoded straight
//! into samples, mapped, and dropped.

pub mod client;
pub mod decode;
pub mod merged;
mod on_demand;
pub mod protocol;
pub mod queries;
pub mod remote_read;
pub mod resample;
mod stream;
pub mod vm_export;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Instant;

use crate::analysis::Series;
use crate::datasource::mapping::{map_batch, PodIndex};
use crate::datasource::plan::{group_pods, plan_groups, MAX_GROUP_PODS};
use crate::datasource::raw::{metric, RawInventory, RawSeries, RawSettings, RawUsage};
use crate::datasource::{
    Budget, ClusterScope, CollectPlan, CollectStats, Collection, DatasourceError, Group, Sink,
    Source, TestReport, UsageResource, Window,
};

pub use client::{Client, ClientAuth, ClientConfig};
use merged::Merged;
pub use protocol::{Protocol, ProtocolChoice};
use queries::Selector;

/// A Prometheus-compatible datasource.
#[derive(Debug, Clone)]
pub struct PrometheusSource {
    client: Client,
    budget: Budget,
    choice: ProtocolChoice,
    /// Chosen on first use and kept for this source's life (one run, or one API call).
    protocol: Arc<tokio::sync::OnceCell<Protocol>>,
}

fn check(window: Window) -> Result<i64, DatasourceError> {
    if window.end_ms <= window.start_ms || window.step_seconds == 0 {
        return Err(DatasourceError::Invalid(
            "window must have end > start and a positive step".into(),
        ));
    }
    Ok(((window.end_ms - window.start_ms) / 1000).max(1))
}

fn ms(since: Instant) -> u64 {
    since.elapsed().as_millis() as u64
}

/// The client's counters at one moment (a group's figures are differences).
#[derive(Debug, Clone, Copy)]
struct Counters {
    requests: u64,
    bytes: u64,
    samples: u64,
}

impl PrometheusSource {
    pub fn new(config: ClientConfig) -> Result<PrometheusSource, DatasourceError> {
        Ok(PrometheusSource {
            client: Client::new(config)?,
            budget: Budget::default(),
            choice: ProtocolChoice::Auto,
            protocol: Arc::new(tokio::sync::OnceCell::new()),
        })
    }

    /// With a load budget other than the default.
    pub fn with_budget(mut self, budget: Budget) -> PrometheusSource {
        self.budget = budget;
        self
    }

    /// With the protocol forced (or left to detection with `Auto`).
    pub fn with_protocol(mut self, choice: ProtocolChoice) -> PrometheusSource {
        self.choice = choice;
        self.protocol = Arc::new(tokio::sync::OnceCell::new());
        self
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The protocol usage is read with (probed once per source).
    pub async fn protocol(&self) -> Result<Protocol, DatasourceError> {
        self.protocol
            .get_or_try_init(|| {
                // The probe reads the last minute; any recent time will do.
                let now = crate::clock::Clock::now_ms(&crate::clock::SystemClock);
                protocol::choose(&self.client, self.choice, now)
            })
            .await
            .copied()
    }

    fn counters(&self) -> Counters {
        Counters {
            requests: self.client.queries(),
            bytes: self.client.bytes(),
            samples: self.client.samples(),
        }
    }

    /// Requests, bytes and decoded samples since `before`, and the protocol.
    fn stats_since(&self, before: Counters) -> CollectStats {
        let now = self.counters();
        CollectStats {
            queries: now.requests - before.requests,
            bytes: now.bytes - before.bytes,
            samples_decoded: now.samples - before.samples,
            protocol: self
                .protocol
                .get()
                .map(|p| p.name().to_string())
                .unwrap_or_default(),
            ..CollectStats::default()
        }
    }

    async fn inventory(
        &self,
        sel: &Selector,
        window_s: i64,
        end_ms: i64,
    ) -> Result<RawInventory, DatasourceError> {
        let q = queries::inventory(sel, window_s);
        let c = &self.client;
        let (a, b, cr, d, e, f, g, h, rs, hpa) = tokio::try_join!(
            c.query(&q[0], end_ms),
            c.query(&q[1], end_ms),
            c.query(&q[2], end_ms),
            c.query(&q[3], end_ms),
            c.query(&q[4], end_ms),
            c.query(&q[5], end_ms),
            c.query(&q[6], end_ms),
            c.query(&q[7], end_ms),
            c.query(&q[8], end_ms),
            c.query(&q[9], end_ms),
        )?;
        Ok(RawInventory {
            pod_owner: a,
            pod_alive: b,
            pod_created: cr,
            pod_revision: d,
            replicaset_owner: e,
            workload_created: f,
            replicas: g,
            labels: h,
            replicaset_created: rs,
            hpa,
        })
    }

    /// A range query over `window`, split under the points-per-series limit; a series'
    /// parts are joined with exact reservations (no doubled capacity). With `keep`, only
    /// those labels are kept and series that then coincide are merged by their max.
    async fn range(
        &self,
        promql: &str,
        window: Window,
        keep: Option<&[&str]>,
    ) -> Result<Vec<RawSeries>, DatasourceError> {
        let mut merged = Merged::default();
        for (from, to) in queries::split_range(window.start_ms, window.end_ms, window.step_seconds)
        {
            for s in self
                .client
                .query_range(promql, from, to, window.step_seconds)
                .await?
            {
                merged.add(s.labels, keep, s.samples);
            }
        }
        Ok(merged.into_series())
    }

    /// Current settings and OOM terminations of one group, and the memory-limit
    /// history of its OOM-killed pods (only when there are some), so each kill carries
    /// the limit at its time.
    async fn group_settings(
        &self,
        scope: &ClusterScope,
        group: &Group,
        window: Window,
        window_s: i64,
    ) -> Result<RawSettings, DatasourceError> {
        let sel = Selector::group(scope, group);
        let (now_q, oom_q) = (queries::settings_now(&sel), queries::oom_terminations(&sel));
        let (settings_now, oom_terminations) = tokio::try_join!(
            self.client.query(&now_q, window.end_ms),
            self.range(&oom_q, window, None),
        )?;
        // Without the termination timestamp (many kube-state-metrics installs), the
        // restarts of containers last terminated by an OOM kill bound each kill.
        let (restarts, oom_reasons, killed) = if oom_terminations.is_empty() {
            let q = queries::oom_killed_containers(&sel, window_s);
            let killed = self.client.query(&q, window.end_ms).await?;
            if killed.is_empty() {
                (Vec::new(), Vec::new(), Vec::new())
            } else {
                let sel = Selector::group(scope, &pods_of(&killed));
                let (rq, oq) = (queries::restarts(&sel), queries::oom_reasons(&sel));
                let (restarts, reasons) = tokio::try_join!(
                    self.range(&rq, window, None),
                    self.range(&oq, window, None),
                )?;
                (restarts, reasons, killed)
            }
        } else {
            (Vec::new(), Vec::new(), Vec::new())
        };
        let with_kills = if oom_terminations.is_empty() {
            &killed
        } else {
            &oom_terminations
        };
        let memory_limits = if with_kills.is_empty() {
            Vec::new()
        } else {
            let sel = Selector::group(scope, &pods_of(with_kills));
            self.client
                .query(
                    &queries::memory_limit_history(&sel, window_s),
                    window.end_ms,
                )
                .await?
        };
        Ok(RawSettings {
            settings_now,
            memory_limits,
            oom_terminations,
            restarts,
            oom_reasons,
        })
    }

    /// One group over `query_range`: settings and usage concurrently, mapped whole.
    async fn collect_range_group(
        &self,
        plan: &CollectPlan,
        group: &Group,
    ) -> Result<Collection, DatasourceError> {
        let window = plan.window;
        let window_s = check(window)?;
        let before = self.counters();
        let started = Instant::now();
        let sel = Selector::group(&plan.scope, group);
        let (cpu_q, memory_q) = (
            queries::usage(&sel, metric::CPU),
            queries::usage(&sel, metric::MEMORY),
        );
        let (settings, cpu, memory) = tokio::try_join!(
            self.group_settings(&plan.scope, group, window, window_s),
            self.range(&cpu_q, window, Some(queries::USAGE_LABELS)),
            self.range(&memory_q, window, Some(queries::USAGE_LABELS)),
        )?;
        let usage = RawUsage { cpu, memory };
        let fetched_ms = ms(started);
        let series = (usage.cpu.len() + usage.memory.len()) as u64;
        let samples = usage
            .cpu
            .iter()
            .chain(&usage.memory)
            .map(|s| s.samples.len() as u64)
            .sum();
        let mapped = Instant::now();
        let (containers, workloads) = map_batch(window, &plan.pods, &settings, usage);
        let mut out = Collection::empty(window);
        out.input.containers = containers;
        out.workloads = workloads;
        out.sort();
        out.stats = CollectStats {
            series,
            samples,
            phase_ms: vec![("usage".into(), fetched_ms), ("map".into(), ms(mapped))],
            ..self.stats_since(before)
        };
        Ok(out)
    }
}

/// The group of the pods `series` name (their namespaces and pod names).
fn pods_of(series: &[RawSeries]) -> Group {
    let pick = |name: &str| -> BTreeSet<String> {
        series.iter().map(|s| s.label(name).to_string()).collect()
    };
    Group {
        namespaces: pick("namespace").into_iter().collect(),
        pods: pick("pod").into_iter().collect(),
        ..Group::default()
    }
}

impl Source for PrometheusSource {
    async fn plan(
        &self,
        scope: &ClusterScope,
        window: Window,
    ) -> Result<CollectPlan, DatasourceError> {
        let window_s = check(window)?;
        let before = self.counters();
        let started = Instant::now();
        let everything = Selector::new(scope, &[]);
        let (inventory, protocol) = tokio::try_join!(
            self.inventory(&everything, window_s, window.end_ms),
            self.protocol(),
        )?;
        let pods = PodIndex::build(&inventory);
        drop(inventory);
        // Remote read streams usage per workload: a group only bounds settings queries.
        let budget = match protocol {
            Protocol::RemoteRead(_) | Protocol::VmExport(_) => MAX_GROUP_PODS,
            Protocol::QueryRange => group_pods(window, self.budget),
        };
        let groups = plan_groups(&pods, budget);
        Ok(CollectPlan {
            scope: scope.clone(),
            window,
            groups,
            pods: Arc::new(pods),
            stats: CollectStats {
                phase_ms: vec![("inventory".into(), ms(started))],
                ..self.stats_since(before)
            },
        })
    }

    async fn collect_group(
        &self,
        plan: &CollectPlan,
        index: usize,
    ) -> Result<Collection, DatasourceError> {
        let group = plan
            .groups
            .get(index)
            .ok_or_else(|| DatasourceError::Invalid(format!("the plan has no group {index}")))?;
        if let Protocol::QueryRange = self.protocol().await? {
            return self.collect_range_group(plan, group).await;
        }
        // Streamed workloads gathered into one collection (tests, `collect`).
        let (sink, mut pieces) = tokio::sync::mpsc::channel(4);
        let mut out = Collection::empty(plan.window);
        let gather = async {
            while let Some(piece) = pieces.recv().await {
                out.absorb(piece);
            }
        };
        let (stats, ()) = tokio::join!(
            async move { self.stream_group(plan, index, &sink).await },
            gather
        );
        out.stats = stats?;
        out.sort();
        Ok(out)
    }

    async fn stream_group(
        &self,
        plan: &CollectPlan,
        index: usize,
        sink: &Sink,
    ) -> Result<CollectStats, DatasourceError> {
        match self.protocol().await? {
            Protocol::RemoteRead(lookback) => {
                let reader = stream::Reader::RemoteRead(lookback);
                stream::stream_group(self, plan, index, reader, sink).await
            }
            Protocol::VmExport(rollup) => {
                let reader = stream::Reader::VmExport(rollup);
                stream::stream_group(self, plan, index, reader, sink).await
            }
            Protocol::QueryRange => {
                let group = plan.groups.get(index).ok_or_else(|| {
                    DatasourceError::Invalid(format!("the plan has no group {index}"))
                })?;
                let mut whole = self.collect_range_group(plan, group).await?;
                let stats = std::mem::take(&mut whole.stats);
                crate::datasource::send(sink, whole).await?;
                Ok(stats)
            }
        }
    }

    async fn usage(
        &self,
        scope: &ClusterScope,
        workload: (&str, &str, &str),
        container: &str,
        resource: UsageResource,
        window: Window,
    ) -> Result<Vec<Series>, DatasourceError> {
        on_demand::usage(self, scope, workload, container, resource, window).await
    }

    async fn test(&self, scope: &ClusterScope) -> Result<TestReport, DatasourceError> {
        on_demand::test(self, scope).await
    }
}
