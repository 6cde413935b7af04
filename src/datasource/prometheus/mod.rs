//! Collection from a Prometheus-compatible API (Prometheus, Thanos, Mimir,
//! VictoriaMetrics): one inventory phase for the whole cluster (the plan), then settings
//! and OOM queries per group of workloads (never per container), and usage as the raw
//! samples the TSDB stores, streamed workload by workload (`stream`) over remote read,
//! VictoriaMetrics's export API or range selectors, whichever the server supports
//! (`protocol`), all through one bounded client. Answers are decoded straight into
//! samples, mapped, and dropped.

pub mod client;
pub mod decode;
pub mod merged;
mod on_demand;
pub mod protocol;
pub mod queries;
pub mod range_selector;
pub mod remote_read;
pub mod samples;
mod status;
mod stream;
pub mod vm_export;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Instant;

use crate::analysis::Series;
use crate::datasource::mapping::PodIndex;
use crate::datasource::plan::{group_pods, plan_groups, MAX_GROUP_PODS};
use crate::datasource::raw::{RawInventory, RawSeries, RawSettings};
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

    /// Current settings and OOM terminations of one group (and the settings of the
    /// `finished` runs of its batch work over the window), and the memory-limit
    /// history of its OOM-killed pods (only when there are some), so each kill carries
    /// the limit at its time.
    async fn group_settings(
        &self,
        scope: &ClusterScope,
        (group, finished, batch): (&Group, &Group, &Group),
        window: Window,
        window_s: i64,
    ) -> Result<RawSettings, DatasourceError> {
        let sel = Selector::group(scope, group);
        let (now_q, oom_q) = (queries::settings_now(&sel), queries::oom_terminations(&sel));
        let (mut settings_now, oom_terminations) = tokio::try_join!(
            self.client.query(&now_q, window.end_ms),
            self.range(&oom_q, window, None),
        )?;
        if !finished.pods.is_empty() {
            let sel = Selector::group(scope, finished);
            let q = queries::settings_of_finished_runs(&sel, window_s);
            settings_now.extend(self.client.query(&q, window.end_ms).await?);
        }
        // Without a termination timestamp (init containers and sidecars always; app
        // containers on many kube-state-metrics installs), the restarts of containers
        // last terminated by an OOM kill bound each kill.
        let apps = oom_terminations.is_empty();
        let q = queries::oom_killed_containers(&sel, window_s, apps);
        let killed = self.client.query(&q, window.end_ms).await?;
        let (restarts, oom_reasons) = if killed.is_empty() {
            (Vec::new(), Vec::new())
        } else {
            let sel = Selector::group(scope, &pods_of(&killed));
            let (rq, oq) = (queries::restarts(&sel), queries::oom_reasons(&sel));
            tokio::try_join!(self.range(&rq, window, None), self.range(&oq, window, None),)?
        };
        // Batch work's pods that ended in an OOM kill and were not restarted.
        let terminated_ooms = if batch.pods.is_empty() {
            Vec::new()
        } else {
            let q = queries::terminated_ooms(&Selector::group(scope, batch));
            self.range(&q, window, None).await?
        };
        let with_kills: Vec<RawSeries> = oom_terminations
            .iter()
            .chain(&killed)
            .chain(&terminated_ooms)
            .cloned()
            .collect();
        let memory_limits = if with_kills.is_empty() {
            Vec::new()
        } else {
            let sel = Selector::group(scope, &pods_of(&with_kills));
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
            terminated_ooms,
        })
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
        // Usage is streamed per workload, so a group only bounds the settings queries;
        // without remote read or export, those include OOM range queries of every pod
        // of the group, which the load budget sizes.
        let budget = match protocol {
            Protocol::RemoteRead | Protocol::VmExport => MAX_GROUP_PODS,
            Protocol::RangeSelector => group_pods(window, self.budget),
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
        crate::datasource::gather_streamed(self, plan, index).await
    }

    async fn stream_group(
        &self,
        plan: &CollectPlan,
        index: usize,
        sink: &Sink,
    ) -> Result<CollectStats, DatasourceError> {
        let reader = match self.protocol().await? {
            Protocol::RemoteRead => stream::Reader::RemoteRead,
            Protocol::VmExport => stream::Reader::VmExport,
            Protocol::RangeSelector => stream::Reader::RangeSelector,
        };
        stream::stream_group(self, plan, index, reader, sink).await
    }

    async fn usage(
        &self,
        scope: &ClusterScope,
        workload: &crate::workload::WorkloadKey,
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
