//! Collection from a Prometheus-compatible API (Prometheus, Thanos, Mimir,
//! VictoriaMetrics): one inventory phase for the whole cluster (the plan), then usage,
//! settings and OOM queries per group of workloads (never per container), each range
//! split under the points-per-series limit, all through one bounded client. A group's
//! answers are decoded straight into samples, mapped, and dropped.

pub mod client;
pub mod decode;
pub mod queries;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use crate::analysis::{Sample, Series};
use crate::datasource::mapping::{map_batch, PodIndex, WorkloadKey};
use crate::datasource::plan::{group_pods, plan_groups};
use crate::datasource::raw::{metric, Labels, RawInventory, RawSeries, RawSettings, RawUsage};
use crate::datasource::{
    ClusterScope, CollectPlan, CollectStats, Collection, DatasourceError, Group, Source,
    TestReport, UsageResource, Window,
};

pub use client::{Client, ClientAuth, ClientConfig};
use queries::Selector;

/// A Prometheus-compatible datasource.
#[derive(Debug, Clone)]
pub struct PrometheusSource {
    client: Client,
}

fn check(window: Window) -> Result<i64, DatasourceError> {
    if window.end_ms <= window.start_ms || window.step_seconds == 0 {
        return Err(DatasourceError::Invalid(
            "window must have end > start and a positive step".into(),
        ));
    }
    Ok(((window.end_ms - window.start_ms) / 1000).max(1))
}

/// Appends `more` to `samples` (both in time order): the next range piece is appended
/// as is; samples of a coinciding series are merged, the max kept at equal times.
fn merge_max(samples: &mut Vec<Sample>, more: Vec<Sample>) {
    match (samples.last(), more.first()) {
        (Some(last), Some(first)) if last.timestamp < first.timestamp => {
            samples.reserve_exact(more.len());
            samples.extend(more);
        }
        (_, None) => {}
        _ => {
            let mut out = Vec::with_capacity(samples.len() + more.len());
            let (mut i, mut j) = (0, 0);
            while i < samples.len() || j < more.len() {
                let take = match (samples.get(i), more.get(j)) {
                    (Some(x), Some(y)) if x.timestamp == y.timestamp => {
                        i += 1;
                        j += 1;
                        Sample {
                            timestamp: x.timestamp,
                            value: x.value.max(y.value),
                        }
                    }
                    (Some(x), Some(y)) if x.timestamp < y.timestamp => {
                        i += 1;
                        *x
                    }
                    (Some(x), None) => {
                        i += 1;
                        *x
                    }
                    (_, Some(y)) => {
                        j += 1;
                        *y
                    }
                    (None, None) => break,
                };
                out.push(take);
            }
            out.shrink_to_fit();
            *samples = out;
        }
    }
}

fn ms(since: Instant) -> u64 {
    since.elapsed().as_millis() as u64
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

    async fn inventory(
        &self,
        sel: &Selector,
        window_s: i64,
        end_ms: i64,
    ) -> Result<RawInventory, DatasourceError> {
        let q = queries::inventory(sel, window_s);
        let c = &self.client;
        let (a, b, cr, d, e, f, g, h) = tokio::try_join!(
            c.query(&q[0], end_ms),
            c.query(&q[1], end_ms),
            c.query(&q[2], end_ms),
            c.query(&q[3], end_ms),
            c.query(&q[4], end_ms),
            c.query(&q[5], end_ms),
            c.query(&q[6], end_ms),
            c.query(&q[7], end_ms),
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
        let mut merged: BTreeMap<Labels, Vec<Sample>> = BTreeMap::new();
        for (from, to) in queries::split_range(window.start_ms, window.end_ms, window.step_seconds)
        {
            for mut s in self
                .client
                .query_range(promql, from, to, window.step_seconds)
                .await?
            {
                if let Some(keep) = keep {
                    s.labels.retain(|k, _| keep.contains(&k.as_str()));
                }
                match merged.get_mut(&s.labels) {
                    Some(samples) => merge_max(samples, s.samples),
                    None => {
                        merged.insert(s.labels, s.samples);
                    }
                }
            }
        }
        Ok(merged
            .into_iter()
            .map(|(labels, samples)| RawSeries { labels, samples })
            .collect())
    }

    /// The settings, OOM and usage answers of one group.
    async fn group_answers(
        &self,
        sel: &Selector,
        window: Window,
        window_s: i64,
    ) -> Result<(RawSettings, RawUsage), DatasourceError> {
        let c = &self.client;
        let q = [
            queries::settings_now(sel),
            queries::memory_limits(sel, window_s),
            queries::oom_terminations(sel),
            queries::usage(sel, metric::CPU),
            queries::usage(sel, metric::MEMORY),
        ];
        let (settings_now, memory_limits, oom, cpu, memory) = tokio::try_join!(
            c.query(&q[0], window.end_ms),
            c.query(&q[1], window.end_ms),
            self.range(&q[2], window, None),
            self.range(&q[3], window, Some(queries::USAGE_LABELS)),
            self.range(&q[4], window, Some(queries::USAGE_LABELS)),
        )?;
        let settings = RawSettings {
            settings_now,
            memory_limits,
            oom_terminations: oom,
        };
        Ok((settings, RawUsage { cpu, memory }))
    }
}

impl Source for PrometheusSource {
    async fn plan(
        &self,
        scope: &ClusterScope,
        window: Window,
    ) -> Result<CollectPlan, DatasourceError> {
        let window_s = check(window)?;
        let queries_before = self.client.queries();
        let started = Instant::now();
        let inventory = self
            .inventory(&Selector::new(scope, &[]), window_s, window.end_ms)
            .await?;
        let pods = PodIndex::build(&inventory);
        drop(inventory);
        let groups = plan_groups(&pods, group_pods(window));
        Ok(CollectPlan {
            scope: scope.clone(),
            window,
            groups,
            pods: Arc::new(pods),
            stats: CollectStats {
                queries: self.client.queries() - queries_before,
                phase_ms: vec![("inventory".into(), ms(started))],
                ..CollectStats::default()
            },
        })
    }

    async fn collect_group(
        &self,
        plan: &CollectPlan,
        index: usize,
    ) -> Result<Collection, DatasourceError> {
        let window = plan.window;
        let window_s = check(window)?;
        let group = plan
            .groups
            .get(index)
            .ok_or_else(|| DatasourceError::Invalid(format!("the plan has no group {index}")))?;
        let queries_before = self.client.queries();
        let started = Instant::now();
        let sel = Selector::group(&plan.scope, group);
        let (settings, usage) = self.group_answers(&sel, window, window_s).await?;
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
            queries: self.client.queries() - queries_before,
            series,
            samples,
            phase_ms: vec![("usage".into(), fetched_ms), ("map".into(), ms(mapped))],
        };
        Ok(out)
    }

    /// Only the chart's container: the namespace's inventory (instant queries) names the
    /// workload's pods, and one range query selects that container of those pods.
    async fn usage(
        &self,
        scope: &ClusterScope,
        workload: (&str, &str, &str),
        container: &str,
        resource: UsageResource,
        window: Window,
    ) -> Result<Vec<Series>, DatasourceError> {
        let window_s = check(window)?;
        let (ns, kind, name) = workload;
        let namespaces = vec![ns.to_string()];
        let inventory = self
            .inventory(&Selector::new(scope, &namespaces), window_s, window.end_ms)
            .await?;
        let pods = PodIndex::build(&inventory);
        drop(inventory);
        let key = WorkloadKey {
            namespace: ns.to_string(),
            kind: kind.to_string(),
            name: name.to_string(),
        };
        let mut group = Group {
            namespaces,
            ..Group::default()
        };
        if pods.ksm_present {
            match pods
                .workloads_by_namespace()
                .remove(ns)
                .and_then(|mut w| w.remove(&key))
            {
                Some(w) => group.pods = w.pods,
                None => return Ok(Vec::new()),
            }
        }
        let sel = Selector::group(scope, &group).container(container);
        let name_of = match resource {
            UsageResource::Cpu => metric::CPU,
            UsageResource::Memory => metric::MEMORY,
        };
        let series = self
            .range(
                &queries::usage(&sel, name_of),
                window,
                Some(queries::USAGE_LABELS),
            )
            .await?;
        let usage = match resource {
            UsageResource::Cpu => RawUsage {
                cpu: series,
                memory: Vec::new(),
            },
            UsageResource::Memory => RawUsage {
                cpu: Vec::new(),
                memory: series,
            },
        };
        let (containers, _) = map_batch(window, &pods, &RawSettings::default(), usage);
        Ok(containers
            .into_iter()
            .find(|c| {
                c.target.kind == kind && c.target.name == name && c.target.container == container
            })
            .map(|c| match resource {
                UsageResource::Cpu => c.cpu.series,
                UsageResource::Memory => c.memory.series,
            })
            .unwrap_or_default())
    }

    async fn test(&self, scope: &ClusterScope) -> Result<TestReport, DatasourceError> {
        // A reachability probe asks the real server about the real present.
        let now = crate::clock::Clock::now_ms(&crate::clock::SystemClock);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn s(points: &[(i64, f64)]) -> Vec<Sample> {
        points
            .iter()
            .map(|&(timestamp, value)| Sample { timestamp, value })
            .collect()
    }

    #[test]
    fn range_pieces_append_and_coinciding_series_keep_the_max() {
        let mut a = s(&[(1, 1.0), (2, 5.0)]);
        merge_max(&mut a, s(&[(3, 2.0)]));
        assert_eq!(a, s(&[(1, 1.0), (2, 5.0), (3, 2.0)]));
        merge_max(&mut a, s(&[(2, 7.0), (3, 1.0), (4, 4.0)]));
        assert_eq!(a, s(&[(1, 1.0), (2, 7.0), (3, 2.0), (4, 4.0)]));
        merge_max(&mut a, Vec::new());
        assert_eq!(a.len(), 4);
    }
}
