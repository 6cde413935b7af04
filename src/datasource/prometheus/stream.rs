//! One group collected from raw samples, workload by workload, over remote read or
//! VictoriaMetrics's export API: the group's settings and OOM answers first (small),
//! then one selector per workload alive at the end (its pods named), several per
//! request within the load budget. Each workload is put on the step grid (as the
//! server's `query_range` would), mapped and sent to the run as soon as its series are
//! complete, so kerf holds the workloads in flight, not the group. Remote read answers
//! query by query, so a workload is complete when the next one starts; the export API
//! answers series in any order, so a request's workloads are complete at its end. A
//! stream cut short is resumed from the first workload not yet sent.

use std::collections::HashMap;
use std::ops::Range;
use std::time::Instant;

use futures_util::{StreamExt as _, TryStreamExt as _};

use super::merged::Merged;
use super::queries::{self, USAGE_LABELS};
use super::remote_read::{MatchType, Matcher, ReadQuery};
use super::resample::{at_steps, Grid, Lookback};
use super::vm_export::{rollup, VmRollup};
use super::{check, ms, PrometheusSource};
use crate::analysis::Sample;
use crate::datasource::mapping::{map_with, PodIndex, SettingsIndex, WorkloadKey};
use crate::datasource::raw::{label, metric, RawSeries, RawUsage};
use crate::datasource::{
    send, Budget, CollectPlan, CollectStats, Collection, DatasourceError, Group, Sink, Window,
};

/// Usage series a pod is assumed to have when sizing requests (2 containers × CPU and
/// memory).
const SERIES_PER_POD: u64 = 4;
/// Retries of a stream cut short (connection lost) before the group fails.
const RESUMES: u32 = 3;

/// How raw samples are read and put on the step grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reader {
    RemoteRead(Lookback),
    VmExport(VmRollup),
}

impl Reader {
    /// The oldest raw sample a step of `grid` can use.
    fn read_from(self, grid: Grid) -> i64 {
        match self {
            Reader::RemoteRead(lookback) => grid.read_from(lookback),
            Reader::VmExport(rule) => rule.read_from(grid),
        }
    }

    /// The points of `raw` on `grid`, as the server's `query_range` gives them.
    fn points(self, raw: Vec<Sample>, grid: Grid) -> Vec<Sample> {
        match self {
            Reader::RemoteRead(lookback) => at_steps(raw, grid, lookback),
            Reader::VmExport(rule) => rollup::at_steps(&raw, grid, rule),
        }
    }
}

/// One workload to read: its key (none without kube-state-metrics: the whole group),
/// its pods and its selector.
struct Member {
    key: Option<WorkloadKey>,
    pods: usize,
    pod_names: Vec<String>,
    query: ReadQuery,
}

/// What every workload of the group is mapped with.
struct Context<'a> {
    window: Window,
    grid: Grid,
    reader: Reader,
    pods: &'a PodIndex,
    settings: SettingsIndex,
    ooms: Vec<RawSeries>,
    sink: &'a Sink,
}

/// The workloads of `group` with a pod alive at the window end (the others are never
/// analyzed, so their usage is not read), or the whole group without an inventory.
fn members(plan: &CollectPlan, group: &Group, grid: Grid, reader: Reader) -> Vec<Member> {
    let query = |namespaces: &[String], pods: &[String]| ReadQuery {
        start_ms: reader.read_from(grid),
        end_ms: grid.end_ms,
        matchers: queries::usage_matchers(&plan.scope, namespaces, pods),
    };
    if !plan.pods.ksm_present {
        return vec![Member {
            key: None,
            pods: group.pod_count.max(1),
            pod_names: Vec::new(),
            query: query(&group.namespaces, &group.pods),
        }];
    }
    let mut out = Vec::new();
    for (namespace, workloads) in plan.pods.workloads_by_namespace() {
        if !group.namespaces.contains(&namespace) {
            continue;
        }
        for (key, w) in workloads {
            let in_group = group.pods.is_empty() || w.pods.iter().all(|p| group.pods.contains(p));
            if w.alive && in_group {
                out.push(Member {
                    pods: w.pods.len(),
                    query: query(std::slice::from_ref(&namespace), &w.pods),
                    pod_names: w.pods,
                    key: Some(key),
                });
            }
        }
    }
    out
}

/// Consecutive members per request: as many as the budget's samples and series allow,
/// at least one.
fn batches(members: &[Member], points: u64, budget: Budget) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let (mut start, mut series) = (0, 0u64);
    for (i, m) in members.iter().enumerate() {
        let more = m.pods as u64 * SERIES_PER_POD;
        let full = series + more > budget.series_per_request
            || (series + more) * points > budget.samples_per_request;
        if i > start && full {
            out.push(start..i);
            (start, series) = (i, 0);
        }
        series += more;
    }
    if start < members.len() {
        out.push(start..members.len());
    }
    out
}

/// Series and samples handed on.
#[derive(Default)]
struct Tally {
    series: u64,
    samples: u64,
}

impl Tally {
    fn add(mut self, other: Tally) -> Tally {
        self.series += other.series;
        self.samples += other.samples;
        self
    }
}

/// Puts one workload's raw series on the grid, maps it and sends it.
async fn emit(
    ctx: &Context<'_>,
    member: &Member,
    raw: Vec<RawSeries>,
) -> Result<Tally, DatasourceError> {
    let (mut cpu, mut memory) = (Merged::default(), Merged::default());
    for s in raw {
        let points = ctx.reader.points(s.samples, ctx.grid);
        if points.is_empty() {
            continue;
        }
        let target = match s.labels.get(label::NAME).map(String::as_str) {
            Some(metric::CPU) => &mut cpu,
            Some(metric::MEMORY) => &mut memory,
            _ => continue,
        };
        target.add(s.labels, Some(USAGE_LABELS), points);
    }
    let usage = RawUsage {
        cpu: cpu.into_series(),
        memory: memory.into_series(),
    };
    let tally = Tally {
        series: (usage.cpu.len() + usage.memory.len()) as u64,
        samples: usage
            .cpu
            .iter()
            .chain(&usage.memory)
            .map(|s| s.samples.len() as u64)
            .sum(),
    };
    let (mut containers, mut workloads) =
        map_with(ctx.window, ctx.pods, &ctx.settings, &ctx.ooms, usage);
    if let Some(key) = &member.key {
        // A pod name reused by another workload can bring its series along: keep only
        // this workload (the other is read with its own selector).
        containers.retain(|c| {
            (&c.target.namespace, &c.target.kind, &c.target.name)
                == (&key.namespace, &key.kind, &key.name)
        });
        workloads
            .retain(|w| (&w.namespace, &w.kind, &w.name) == (&key.namespace, &key.kind, &key.name));
    }
    if !workloads.is_empty() || !containers.is_empty() {
        let mut piece = Collection::empty(ctx.window);
        piece.input.containers = containers;
        piece.workloads = workloads;
        piece.sort();
        send(ctx.sink, piece).await?;
    }
    Ok(tally)
}

/// Reads one batch over remote read, sending each workload when complete; resumes a
/// cut stream at the first workload not yet sent.
async fn read_batch(
    src: &PrometheusSource,
    ctx: &Context<'_>,
    members: &[Member],
) -> Result<Tally, DatasourceError> {
    let queries: Vec<ReadQuery> = members.iter().map(|m| m.query.clone()).collect();
    let mut tally = Tally::default();
    let (mut resume, mut resumes) = (0usize, 0u32);
    loop {
        let mut stream = src.client.remote_read(&queries[resume..]).await?;
        let mut current: Option<(usize, Vec<RawSeries>)> = None;
        let outcome = loop {
            match stream.next().await {
                Ok(Some(read)) => {
                    let q = resume + read.query;
                    let series = RawSeries {
                        labels: read.labels,
                        samples: read.samples,
                    };
                    match &mut current {
                        Some((cq, list)) if *cq == q => list.push(series),
                        _ => {
                            if let Some((cq, list)) = current.take() {
                                tally = tally.add(emit(ctx, &members[cq], list).await?);
                            }
                            current = Some((q, vec![series]));
                        }
                    }
                }
                Ok(None) => break Ok(()),
                Err(e) => break Err(e),
            }
        };
        src.client.count_samples(stream.counts.samples);
        match outcome {
            Ok(()) => {
                if let Some((cq, list)) = current.take() {
                    tally = tally.add(emit(ctx, &members[cq], list).await?);
                }
                return Ok(tally);
            }
            Err(e @ DatasourceError::Unreachable(_)) if resumes < RESUMES => {
                resume = current.map(|(q, _)| q).unwrap_or(resume);
                resumes += 1;
                tracing::debug!(error = %e, resume, "remote-read stream cut short; resuming");
            }
            Err(e) => return Err(e),
        }
    }
}

/// `{name op "value", …}`: the selector text of remote-read matchers.
fn selector_text(matchers: &[Matcher]) -> String {
    let parts: Vec<String> = matchers
        .iter()
        .map(|m| {
            let op = match m.kind {
                MatchType::Eq => "=",
                MatchType::Neq => "!=",
                MatchType::Re => "=~",
                MatchType::Nre => "!~",
            };
            format!("{}{op}{}", m.name, queries::quote(&m.value))
        })
        .collect();
    format!("{{{}}}", parts.join(","))
}

/// Reads one batch over the export API (one `match[]` per workload) and sends each
/// workload once the answer is complete (series come in any order). A cut answer is
/// read again whole: nothing of it was sent.
async fn read_export_batch(
    src: &PrometheusSource,
    ctx: &Context<'_>,
    members: &[Member],
) -> Result<Tally, DatasourceError> {
    let selectors: Vec<String> = members
        .iter()
        .map(|m| selector_text(&m.query.matchers))
        .collect();
    let mut owners: HashMap<(&str, &str), Vec<usize>> = HashMap::new();
    for (i, m) in members.iter().enumerate() {
        if let Some(key) = &m.key {
            for pod in &m.pod_names {
                owners
                    .entry((key.namespace.as_str(), pod.as_str()))
                    .or_default()
                    .push(i);
            }
        }
    }
    let (from, to) = (members[0].query.start_ms, members[0].query.end_ms);
    let mut resumes = 0u32;
    loop {
        let mut stream = src.client.vm_export(&selectors, from, to).await?;
        let mut held: Vec<Vec<RawSeries>> = members.iter().map(|_| Vec::new()).collect();
        let outcome = loop {
            match stream.next().await {
                Ok(Some(series)) => {
                    let at = (series.label(label::NAMESPACE), series.label(label::POD));
                    match owners.get(&at).map(Vec::as_slice) {
                        _ if owners.is_empty() => held[0].push(series),
                        Some([one]) => held[*one].push(series),
                        Some(many) => many.iter().for_each(|i| held[*i].push(series.clone())),
                        None => {}
                    }
                }
                Ok(None) => break Ok(()),
                Err(e) => break Err(e),
            }
        };
        src.client.count_samples(stream.counts.samples);
        drop(stream);
        match outcome {
            Ok(()) => {
                let mut tally = Tally::default();
                for (member, list) in members.iter().zip(held) {
                    tally = tally.add(emit(ctx, member, list).await?);
                }
                return Ok(tally);
            }
            Err(e @ DatasourceError::Unreachable(_)) if resumes < RESUMES => {
                resumes += 1;
                tracing::debug!(error = %e, "export answer cut short; reading it again");
            }
            Err(e) => return Err(e),
        }
    }
}

/// Streams group `index` of `plan` into `sink`, over remote read or the export API.
pub(super) async fn stream_group(
    src: &PrometheusSource,
    plan: &CollectPlan,
    index: usize,
    reader: Reader,
    sink: &Sink,
) -> Result<CollectStats, DatasourceError> {
    let window = plan.window;
    let window_s = check(window)?;
    let group = plan
        .groups
        .get(index)
        .ok_or_else(|| DatasourceError::Invalid(format!("the plan has no group {index}")))?;
    let before = src.counters();
    let started = Instant::now();
    let mut settings = src
        .group_settings(&plan.scope, group, window, window_s)
        .await?;
    let settings_ms = ms(started);
    let ooms = std::mem::take(&mut settings.oom_terminations);
    let index = SettingsIndex::build(&settings);
    // The raw series (a label map each, thousands per group) are not needed once
    // indexed: freed now rather than held while the group's usage streams.
    drop(settings);
    let grid = Grid::new(window.start_ms, window.end_ms, window.step_seconds);
    let members = members(plan, group, grid, reader);
    let points = ((grid.end_ms - reader.read_from(grid)) / grid.step_ms + 1) as u64;
    let ctx = Context {
        window,
        grid,
        reader,
        pods: &plan.pods,
        settings: index,
        ooms,
        sink,
    };
    let started = Instant::now();
    let lanes = src.client.max_concurrent().clamp(1, 2);
    let tally = futures_util::stream::iter(batches(&members, points, src.budget))
        .map(|range| async {
            match reader {
                Reader::RemoteRead(_) => read_batch(src, &ctx, &members[range]).await,
                Reader::VmExport(_) => read_export_batch(src, &ctx, &members[range]).await,
            }
        })
        .buffer_unordered(lanes)
        .try_fold(Tally::default(), |acc, t| async move { Ok(acc.add(t)) })
        .await?;
    let mut stats = src.stats_since(before);
    stats.series = tally.series;
    stats.samples = tally.samples;
    stats.phase_ms = vec![
        ("settings".into(), settings_ms),
        ("usage".into(), ms(started)),
    ];
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(pods: usize) -> Member {
        Member {
            key: None,
            pods,
            pod_names: Vec::new(),
            query: ReadQuery {
                start_ms: 0,
                end_ms: 0,
                matchers: Vec::new(),
            },
        }
    }

    #[test]
    fn batches_fill_up_to_the_budget_and_an_oversized_workload_goes_alone() {
        let members: Vec<Member> = [3, 3, 3, 50, 1, 1].into_iter().map(member).collect();
        let budget = Budget {
            samples_per_request: 12 * 4 * 100,
            series_per_request: 1_000,
        };
        // 3 pods × 4 series × 100 points = 1,200 samples each: three fit in 4,800;
        // the 50-pod workload exceeds the budget on its own and goes alone.
        assert_eq!(batches(&members, 100, budget), vec![0..3, 3..4, 4..6]);
        let by_series = Budget {
            samples_per_request: u64::MAX,
            series_per_request: 24,
        };
        assert_eq!(
            batches(&members, 100, by_series),
            vec![0..2, 2..3, 3..4, 4..6]
        );
        assert!(batches(&[], 100, budget).is_empty());
    }
}
