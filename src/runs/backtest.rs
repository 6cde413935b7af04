//! Backtest: replays the recorded usage window of the selected workloads against the
//! recommendations a policy would have made. Two scores per workload: in sample (the
//! recommendation made on the whole window, what a run would store now, scored on that
//! same window) and out of sample (made on the first part of the window only, as if it
//! had been applied at the split, and scored on the rest), which shows the risk of
//! applying a recommendation to usage it has not seen. docs/contracts/policy.md,
//! "Backtest".
//!
//! [`backtest_groups`] is pure (the workloads and the policy in, the report rows out);
//! [`Runs::backtest`] collects the selected workloads of every matching cluster from
//! its datasource, group by group, and adds them up.

use serde::Serialize;

use super::backtest_score::{score, values, ContainerValues, Counts};
use super::summary::summarize;
use super::workload::{group, WorkloadGroup};
use super::{RecommenderSettings, RunError, RunFailure, Runs};
use crate::analysis::{self, ContainerObservation, Input, Policy, INPUT_SCHEMA_VERSION};
use crate::datasource::{Source, Window};
use crate::policy::resolve::selects;
use crate::policy::{Selector, WorkloadRef};

/// At most this many workloads per backtest unless asked for fewer.
pub const DEFAULT_LIMIT: usize = 500;
/// The largest `limit` accepted.
pub const MAX_LIMIT: usize = 5_000;

/// What to backtest.
#[derive(Debug, Clone)]
pub struct BacktestRequest {
    /// The analysis policy (normalized by the engine when analyzing).
    pub analysis: Policy,
    /// Which workloads.
    pub selector: Selector,
    /// Fraction of the window the out-of-sample recommendation is made on, 0.1..=0.9.
    pub split: f64,
    /// Workloads at most (the first in cluster, namespace, kind, name order).
    pub limit: usize,
}

/// The scores of one workload (or of all) in one mode.
#[derive(Debug, Clone, Default, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Score {
    /// Estimated monthly cost change of the requests (as runs compute it); `null` when
    /// the replicas are unknown.
    pub cost_change: Option<f64>,
    /// Share of CPU samples above the recommended request, 0..=1.
    pub cpu_above_request_share: Option<f64>,
    /// Share of CPU samples above the recommended limit (time throttled), 0..=1.
    pub cpu_throttled_share: Option<f64>,
    /// Share of memory samples above the recommended request, 0..=1.
    pub memory_above_request_share: Option<f64>,
    /// Times memory would have reached the recommended limit.
    pub would_be_oom_kills: u64,
    /// OOM kills recorded in the scored window, at today's limits.
    pub recorded_oom_kills: u64,
    /// The sample counts behind the shares.
    pub counts: Counts,
}

impl Score {
    fn of(cost_change: Option<f64>, counts: Counts) -> Score {
        Score {
            cost_change,
            cpu_above_request_share: counts.cpu_above_request_share(),
            cpu_throttled_share: counts.cpu_throttled_share(),
            memory_above_request_share: counts.memory_above_request_share(),
            would_be_oom_kills: counts.would_be_oom_kills,
            recorded_oom_kills: counts.recorded_oom_kills,
            counts,
        }
    }

    fn add(&mut self, o: &Score) {
        if let Some(c) = o.cost_change {
            self.cost_change = Some(self.cost_change.unwrap_or(0.0) + c);
        }
        self.counts.add(&o.counts);
        *self = Score::of(self.cost_change, self.counts);
    }
}

/// One workload's backtest.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadBacktest {
    pub id: String,
    pub cluster: String,
    pub namespace: String,
    pub kind: String,
    pub name: String,
    pub replicas: Option<u32>,
    /// Today's values and those the policy recommends now (in sample): what changes.
    pub containers: Vec<ContainerValues>,
    /// The recommendation made on the whole window, scored on it.
    pub in_sample: Score,
    /// The recommendation made on the window up to the split, scored after it.
    pub out_of_sample: Score,
    /// Why a score is missing or partial (the engine refused the workload), if so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The time ranges of a backtest: recommended on `[start, split]` (out of sample) or
/// `[start, end]` (in sample), scored on `(split, end]` or `[start, end]`. RFC 3339 in
/// the API.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Span {
    #[serde(rename = "start", serialize_with = "rfc3339")]
    #[schema(value_type = String)]
    pub start_ms: i64,
    #[serde(rename = "split", serialize_with = "rfc3339")]
    #[schema(value_type = String)]
    pub split_ms: i64,
    #[serde(rename = "end", serialize_with = "rfc3339")]
    #[schema(value_type = String)]
    pub end_ms: i64,
}

fn rfc3339<S: serde::Serializer>(ms: &i64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&crate::timestamp::format_ms(*ms))
}

/// A cluster that could not be backtested, and why.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct ClusterError {
    pub cluster: String,
    pub message: String,
}

/// The whole backtest.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// The engine's identity of the analysis policy.
    pub policy_version: String,
    /// The analysis policy, normalized.
    #[schema(value_type = Object)]
    pub analysis: Policy,
    pub span: Span,
    /// The currency of `costChange` (the pricing settings').
    pub currency: String,
    /// Sums over every workload (shares weighted by samples).
    pub in_sample: Score,
    pub out_of_sample: Score,
    /// Workloads that changed (any setting recommended in sample) and that grew (a
    /// request raised).
    pub workloads_changed: usize,
    pub workloads_grown: usize,
    pub workloads: Vec<WorkloadBacktest>,
    /// More workloads matched than `limit`.
    pub truncated: bool,
    pub errors: Vec<ClusterError>,
}

/// The backtest window: the run window of `settings` ending at `now_ms`, split at
/// `split` of its length (on the step grid).
pub fn span_for(now_ms: i64, settings: &RecommenderSettings, split: f64) -> (Window, Span) {
    let window = super::engine::window_for(now_ms, settings);
    let step_ms = i64::from(window.step_seconds) * 1000;
    let raw = window.start_ms + ((window.end_ms - window.start_ms) as f64 * split) as i64;
    let split_ms = raw - (raw - window.start_ms).rem_euclid(step_ms);
    let span = Span {
        start_ms: window.start_ms,
        split_ms,
        end_ms: window.end_ms,
    };
    (window, span)
}

/// The observation as the datasource would have answered at `at_ms`: current settings,
/// identity and inventory stamped then (they are assumed unchanged since), a release
/// start after it left for the engine to infer.
fn as_of(c: &ContainerObservation, at_ms: i64) -> ContainerObservation {
    let mut c = c.clone();
    let stamp = |s: &mut crate::analysis::Signal| {
        if s.available {
            s.timestamp = at_ms;
        }
    };
    stamp(&mut c.cpu.current_request);
    stamp(&mut c.cpu.current_limit);
    stamp(&mut c.memory.current_request);
    stamp(&mut c.memory.current_limit);
    if c.identity.available {
        c.identity.timestamp = at_ms;
    }
    if c.identity.release_started_at > at_ms {
        c.identity.release_started_at = 0;
    }
    if c.inventory.available {
        c.inventory.timestamp = at_ms;
    }
    c
}

fn engine_input(containers: Vec<ContainerObservation>, start_ms: i64, at_ms: i64) -> Input {
    Input {
        schema_version: INPUT_SCHEMA_VERSION.into(),
        evaluation_time: at_ms,
        window_start: start_ms,
        containers,
    }
}

/// One mode of one workload: the engine at `at_ms`, then the score of `(from, to]`.
fn one_mode(
    g: &WorkloadGroup,
    policy: &Policy,
    span: Span,
    at_ms: i64,
    from_ms: i64,
    prices: (f64, f64),
) -> Result<(Vec<ContainerValues>, Score), analysis::Error> {
    let observed: Vec<ContainerObservation> = if at_ms == span.end_ms {
        g.containers.clone()
    } else {
        g.containers.iter().map(|c| as_of(c, at_ms)).collect()
    };
    let input = engine_input(observed, span.start_ms, at_ms);
    let output = analysis::analyze(&input, policy)?;
    let results: Vec<&analysis::ResourceAnalysis> = output.results.iter().collect();
    let values = values(&g.containers, &results);
    let mut counts = Counts::default();
    for (c, v) in g.containers.iter().zip(&values) {
        counts.add(&score(c, v, from_ms, span.end_ms));
    }
    let pods = (g.info.replicas, &g.info.roles);
    let cost = summarize(&results, pods, prices, (span.start_ms, at_ms)).cost_delta;
    Ok((values, Score::of(cost, counts)))
}

/// Backtests `groups` (one cluster's workloads) under `policy`. `prices` are the
/// cluster's (per vCPU-hour, per GiB-hour).
pub fn backtest_groups(
    groups: &[WorkloadGroup],
    policy: &Policy,
    span: Span,
    prices: (f64, f64),
) -> Vec<WorkloadBacktest> {
    let mut out = Vec::with_capacity(groups.len());
    for g in groups.iter().filter(|g| !g.containers.is_empty()) {
        let s = &g.seen;
        let mut row = WorkloadBacktest {
            id: s.id.clone(),
            cluster: s.cluster.clone(),
            namespace: s.namespace.clone(),
            kind: s.kind.clone(),
            name: s.name.clone(),
            replicas: g.info.replicas,
            containers: Vec::new(),
            in_sample: Score::default(),
            out_of_sample: Score::default(),
            note: None,
        };
        match one_mode(g, policy, span, span.end_ms, span.start_ms, prices) {
            Ok((values, score)) => {
                row.containers = values;
                row.in_sample = score;
            }
            Err(e) => row.note = Some(format!("not analyzed: {e}")),
        }
        match one_mode(g, policy, span, span.split_ms, span.split_ms, prices) {
            Ok((_, score)) => row.out_of_sample = score,
            Err(e) => row.note = Some(format!("not analyzed at the split: {e}")),
        }
        out.push(row);
    }
    out
}

/// Adds `rows` up into a report.
pub fn report(
    policy: &Policy,
    span: Span,
    workloads: Vec<WorkloadBacktest>,
    truncated: bool,
    errors: Vec<ClusterError>,
) -> Report {
    let analysis = analysis::normalize_policy(policy).unwrap_or_else(|_| policy.clone());
    let mut in_sample = Score::default();
    let mut out_of_sample = Score::default();
    let (mut changed, mut grown) = (0, 0);
    for w in &workloads {
        in_sample.add(&w.in_sample);
        out_of_sample.add(&w.out_of_sample);
        let moved = |f: fn(&ContainerValues) -> bool| w.containers.iter().any(f);
        changed += usize::from(moved(|c| {
            c.cpu.current != c.cpu.recommended || c.memory.current != c.memory.recommended
        }));
        grown += usize::from(moved(|c| {
            raised(c.cpu.current.request, c.cpu.recommended.request)
                || raised(c.memory.current.request, c.memory.recommended.request)
        }));
    }
    Report {
        policy_version: analysis::policy_version(&analysis).unwrap_or_default(),
        analysis,
        span,
        currency: String::new(),
        in_sample,
        out_of_sample,
        workloads_changed: changed,
        workloads_grown: grown,
        workloads,
        truncated,
        errors,
    }
}

fn raised(current: Option<f64>, recommended: Option<f64>) -> bool {
    match (current, recommended) {
        (Some(c), Some(r)) => r > c,
        (None, Some(_)) => true,
        _ => false,
    }
}

impl Runs {
    /// Backtests `req` over every active cluster its selector matches, as of `now_ms`.
    /// A cluster that cannot be read is reported in `errors`; the others still count.
    pub async fn backtest(&self, req: &BacktestRequest, now_ms: i64) -> Result<Report, RunError> {
        // One backtest at a time (each reads the whole window of its workloads), a
        // few waiting.
        let _turn = self.backtests.enter().await?;
        let settings = self.recommender().await?;
        let pricing = self.pricing().await?;
        let (window, span) = span_for(now_ms, &settings, req.split);
        let policy =
            analysis::normalize_policy(&req.analysis).map_err(|e| RunError::BadSettings {
                key: "analysis",
                message: e.to_string(),
            })?;
        let ctx = Ctx {
            window,
            span,
            policy: &policy,
            settings: &settings,
            selector: &req.selector,
        };
        let (mut rows, mut errors, mut truncated) = (Vec::new(), Vec::new(), false);
        let names = self.store.reading(|r| r.active_cluster_names()).await?;
        for cluster in names {
            let glob = |p: &String| crate::policy::glob::glob_match(p, &cluster);
            let clusters = &req.selector.clusters;
            if !clusters.is_empty() && !clusters.iter().any(glob) {
                continue;
            }
            if rows.len() >= req.limit {
                truncated = true;
                break;
            }
            let left = req.limit - rows.len();
            let prices = pricing.for_cluster(&cluster);
            match self.backtest_cluster(&cluster, &ctx, prices, left).await {
                Ok((mut got, more)) => {
                    rows.append(&mut got);
                    truncated |= more;
                }
                Err(e) => errors.push(ClusterError {
                    cluster,
                    message: e.to_string(),
                }),
            }
        }
        let mut out = report(&policy, span, rows, truncated, errors);
        out.currency = pricing.currency.clone();
        Ok(out)
    }

    /// One cluster: its plan, then each group with a selected namespace, collected
    /// and backtested on the blocking pool. Returns the rows and whether more matched.
    async fn backtest_cluster(
        &self,
        cluster: &str,
        ctx: &Ctx<'_>,
        prices: (f64, f64),
        limit: usize,
    ) -> Result<(Vec<WorkloadBacktest>, bool), RunFailure> {
        let (source, scope) = self.source_for(cluster).await?;
        let plan = source
            .plan(&scope, ctx.window)
            .await
            .map_err(RunFailure::Collect)?;
        let (settings, selector) = (ctx.settings, ctx.selector);
        let namespace_wanted = |n: &String| {
            !settings.excludes(n)
                && (selector.namespaces.is_empty()
                    || selector
                        .namespaces
                        .iter()
                        .any(|p| crate::policy::glob::glob_match(p, n)))
        };
        let mut rows = Vec::new();
        for index in 0..plan.groups.len() {
            let g = &plan.groups[index];
            if !g.namespaces.is_empty() && !g.namespaces.iter().any(namespace_wanted) {
                continue;
            }
            let collection = source
                .collect_group(&plan, index)
                .await
                .map_err(RunFailure::Collect)?;
            let mut groups = group(cluster, collection);
            groups.retain(|g| {
                let s = &g.seen;
                let w =
                    WorkloadRef::from_columns(cluster, &s.namespace, &s.kind, &s.name, &s.labels);
                !settings.excludes(&s.namespace) && selects(selector, &w)
            });
            let more = groups.len() > limit - rows.len();
            groups.truncate(limit - rows.len());
            let (policy, span) = (ctx.policy.clone(), ctx.span);
            let mut got = tokio::task::spawn_blocking(move || {
                backtest_groups(&groups, &policy, span, prices)
            })
            .await
            .map_err(RunFailure::BacktestTask)?;
            rows.append(&mut got);
            if more || rows.len() >= limit {
                return Ok((rows, more || index + 1 < plan.groups.len()));
            }
        }
        Ok((rows, false))
    }
}

/// What every cluster of one backtest shares.
struct Ctx<'a> {
    window: Window,
    span: Span,
    policy: &'a Policy,
    settings: &'a RecommenderSettings,
    selector: &'a Selector,
}

#[cfg(test)]
#[path = "backtest_tests.rs"]
mod tests;
