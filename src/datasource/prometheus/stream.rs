//! One group collected over remote read, workload by workload: the group's settings and
//! OOM answers first (small), then one selector per workload alive at the end (its pods
//! named), several per request within the load budget. Each workload is put on the step
//! grid, mapped and sent to the run as soon as its last series has arrived, so kerf
//! holds the workloads in flight, not the group. A stream cut short is resumed from the
//! first workload not yet sent.

use std::ops::Range;
use std::time::Instant;

use futures_util::{StreamExt as _, TryStreamExt as _};

use super::merged::Merged;
use super::queries::{self, USAGE_LABELS};
use super::remote_read::{ReadQuery, ReadSeries};
use super::resample::{at_steps, Grid, Lookback};
use super::{check, ms, PrometheusSource};
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

/// One workload to read: its key (none without kube-state-metrics: the whole group) and
/// its selector.
struct Member {
    key: Option<WorkloadKey>,
    pods: usize,
    query: ReadQuery,
}

/// What every workload of the group is mapped with.
struct Context<'a> {
    window: Window,
    grid: Grid,
    lookback: Lookback,
    pods: &'a PodIndex,
    settings: SettingsIndex,
    ooms: Vec<RawSeries>,
    sink: &'a Sink,
}

/// The workloads of `group` with a pod alive at the window end (the others are never
/// analyzed, so their usage is not read), or the whole group without an inventory.
fn members(plan: &CollectPlan, group: &Group, grid: Grid, lookback: Lookback) -> Vec<Member> {
    let query = |namespaces: &[String], pods: &[String]| ReadQuery {
        start_ms: grid.read_from(lookback),
        end_ms: grid.end_ms,
        matchers: queries::usage_matchers(&plan.scope, namespaces, pods),
    };
    if !plan.pods.ksm_present {
        return vec![Member {
            key: None,
            pods: group.pod_count.max(1),
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
    raw: Vec<ReadSeries>,
) -> Result<Tally, DatasourceError> {
    let (mut cpu, mut memory) = (Merged::default(), Merged::default());
    for s in raw {
        let points = at_steps(&s.samples, ctx.grid, ctx.lookback);
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

/// Reads one batch, sending each workload when complete; resumes a cut stream at the
/// first workload not yet sent.
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
        let mut current: Option<(usize, Vec<ReadSeries>)> = None;
        let outcome = loop {
            match stream.next().await {
                Ok(Some(series)) => {
                    let q = resume + series.query;
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

/// Streams group `index` of `plan` over remote read into `sink`.
pub(super) async fn stream_group(
    src: &PrometheusSource,
    plan: &CollectPlan,
    index: usize,
    lookback: Lookback,
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
    let settings = src
        .group_settings(&plan.scope, group, window, window_s)
        .await?;
    let settings_ms = ms(started);
    let grid = Grid::new(window.start_ms, window.end_ms, window.step_seconds);
    let members = members(plan, group, grid, lookback);
    let points = ((grid.end_ms - grid.read_from(lookback)) / grid.step_ms + 1) as u64;
    let ctx = Context {
        window,
        grid,
        lookback,
        pods: &plan.pods,
        settings: SettingsIndex::build(&settings),
        ooms: settings.oom_terminations,
        sink,
    };
    let started = Instant::now();
    let lanes = src.client.max_concurrent().clamp(1, 2);
    let tally = futures_util::stream::iter(batches(&members, points, src.budget))
        .map(|range| read_batch(src, &ctx, &members[range]))
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
