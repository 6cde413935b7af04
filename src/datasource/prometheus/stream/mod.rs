//! One group collected from raw samples, workload by workload, over remote read, the
//! VictoriaMetrics export API or range selectors: the group's settings and OOM answers
//! first (small), then one selector per workload alive at the end (its pods named),
//! several per request within the load budget. Each workload's raw samples are checked
//! (strict time order), rid of staleness markers, mapped and sent to the run as soon as
//! its series are complete, so kerf holds the workloads in flight, not the group. Remote
//! read answers query by query, so a workload is complete when the next one starts; the
//! other two answer series in any order, so a request's workloads are complete at its
//! end. A stream cut short is resumed from the first workload not yet sent; an answer
//! the server got wrong is read again workload by workload, and the workload it belongs
//! to is sent as unreadable, naming the datasource and the fault.

use std::ops::Range;
use std::time::Instant;

use futures_util::{StreamExt as _, TryStreamExt as _};

mod whole;

use super::merged::{fault_in, usage_of};
use super::queries;
use super::range_selector;
use super::remote_read::ReadQuery;
use super::{check, ms, PrometheusSource};
use crate::datasource::mapping::{
    map_with, unreadable_piece, PodIndex, SettingsIndex, WorkloadKey,
};
use crate::datasource::raw::RawSeries;
use crate::datasource::{
    send, Budget, ClusterScope, CollectPlan, CollectStats, Collection, DatasourceError, Group,
    Sink, Window,
};
pub(super) use whole::read_raw;
use whole::{read_export_batch, read_selector_batch};

/// Usage series a pod is assumed to have when sizing requests (2 containers × CPU and
/// memory).
pub(super) const SERIES_PER_POD: u64 = 4;
/// Retries of a stream cut short (connection lost) before the group fails.
pub(super) const RESUMES: u32 = 3;

/// How raw samples are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reader {
    RemoteRead,
    VmExport,
    RangeSelector,
}

/// One workload to read: its key (none without kube-state-metrics: the whole group),
/// its pods and its selector.
pub(super) struct Member {
    key: Option<WorkloadKey>,
    pods: usize,
    pod_names: Vec<String>,
    query: ReadQuery,
}

/// What every workload of the group is mapped with.
struct Context<'a> {
    window: Window,
    /// The datasource as faults name it.
    datasource: String,
    scope: &'a ClusterScope,
    pods: &'a PodIndex,
    settings: SettingsIndex,
    ooms: Vec<RawSeries>,
    sink: &'a Sink,
}

/// The workloads of `group` with a pod alive at the window end (the others are never
/// analyzed, so their usage is not read), or the whole group without an inventory.
fn members(plan: &CollectPlan, group: &Group) -> Vec<Member> {
    let query = |namespaces: &[String], pods: &[String]| ReadQuery {
        start_ms: plan.window.start_ms,
        end_ms: plan.window.end_ms,
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

/// One workload's raw series, or what the server got wrong in them.
pub(super) type Got = Result<Vec<RawSeries>, String>;

/// Checks one workload's raw series (strict time order), drops staleness markers, maps
/// it and sends it; a fault sends the workload as unreadable instead.
async fn emit(ctx: &Context<'_>, member: &Member, raw: Got) -> Result<Tally, DatasourceError> {
    let usage = match raw.and_then(usage_of) {
        Ok(usage) => usage,
        Err(why) => return unreadable(ctx, member, why).await,
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

/// Sends `member` as unreadable (the run records why and analyzes the others); without
/// an inventory there is no workload to name, and the group fails.
async fn unreadable(
    ctx: &Context<'_>,
    member: &Member,
    why: String,
) -> Result<Tally, DatasourceError> {
    let Some(key) = &member.key else {
        return Err(DatasourceError::Decode(format!(
            "datasource {}: {why}",
            ctx.datasource
        )));
    };
    let piece = unreadable_piece(ctx.pods, ctx.window, &ctx.datasource, key, &why);
    let reason = piece.workloads[0].unreadable.as_deref().unwrap_or_default();
    tracing::warn!(reason = %reason, "workload unreadable");
    send(ctx.sink, piece).await?;
    Ok(Tally::default())
}

/// A batch that stopped at member `sent` (those before it are sent) with `error`.
struct Stopped {
    sent: usize,
    tally: Tally,
    error: DatasourceError,
}

/// Reads `members` with `reader`; an answer the server got wrong (`Decode`) is read
/// again member by member, and a member that alone still gets one is unreadable.
async fn read_guarded(
    src: &PrometheusSource,
    ctx: &Context<'_>,
    reader: Reader,
    members: &[Member],
) -> Result<Tally, DatasourceError> {
    let stopped = match read_once(src, ctx, reader, members).await {
        Ok(tally) => return Ok(tally),
        Err(stopped) => stopped,
    };
    let Stopped { sent, tally, error } = stopped;
    let DatasourceError::Decode(first) = error else {
        return Err(error);
    };
    let mut tally = tally;
    let rest = &members[sent..];
    if rest.len() == 1 {
        return Ok(tally.add(unreadable(ctx, &rest[0], first).await?));
    }
    for member in rest {
        let one = std::slice::from_ref(member);
        let got = match read_once(src, ctx, reader, one).await {
            Ok(t) => t,
            Err(Stopped {
                error: DatasourceError::Decode(why),
                tally,
                ..
            }) => tally.add(unreadable(ctx, member, why).await?),
            Err(stopped) => return Err(stopped.error),
        };
        tally = tally.add(got);
    }
    Ok(tally)
}

async fn read_once(
    src: &PrometheusSource,
    ctx: &Context<'_>,
    reader: Reader,
    members: &[Member],
) -> Result<Tally, Stopped> {
    match reader {
        Reader::RemoteRead => read_batch(src, ctx, members).await,
        Reader::VmExport | Reader::RangeSelector => {
            let whole = |error| Stopped {
                sent: 0,
                tally: Tally::default(),
                error,
            };
            let held = match reader {
                Reader::VmExport => read_export_batch(src, members).await,
                _ => read_selector_batch(src, (ctx.scope, ctx.window.step_seconds), members).await,
            }
            .map_err(whole)?;
            let mut tally = Tally::default();
            for (i, (member, got)) in members.iter().zip(held).enumerate() {
                match emit(ctx, member, got).await {
                    Ok(t) => tally = tally.add(t),
                    Err(error) => {
                        return Err(Stopped {
                            sent: i,
                            tally,
                            error,
                        })
                    }
                }
            }
            Ok(tally)
        }
    }
}

/// Reads one batch over remote read, sending each workload when complete; resumes a
/// cut stream at the first workload not yet sent.
async fn read_batch(
    src: &PrometheusSource,
    ctx: &Context<'_>,
    members: &[Member],
) -> Result<Tally, Stopped> {
    let queries: Vec<ReadQuery> = members.iter().map(|m| m.query.clone()).collect();
    let mut tally = Tally::default();
    let (mut resume, mut resumes) = (0usize, 0u32);
    loop {
        let stop = |sent, tally, error| Stopped { sent, tally, error };
        let mut stream = match src.client.remote_read(&queries[resume..]).await {
            Ok(s) => s,
            Err(e) => return Err(stop(resume, tally, e)),
        };
        let mut current: Option<(usize, Got)> = None;
        let outcome = loop {
            match stream.next().await {
                Ok(Some(read)) => {
                    let q = resume + read.query;
                    let fault = read.fault.map(|f| fault_in(&f, &read.labels));
                    let series = RawSeries {
                        labels: read.labels,
                        samples: read.samples,
                    };
                    if !matches!(&current, Some((cq, _)) if *cq == q) {
                        if let Some((cq, got)) = current.take() {
                            match emit(ctx, &members[cq], got).await {
                                Ok(t) => tally = tally.add(t),
                                Err(e) => return Err(stop(cq, tally, e)),
                            }
                        }
                        current = Some((q, Ok(Vec::new())));
                    }
                    if let Some((_, got)) = &mut current {
                        match (fault, got.as_mut()) {
                            (Some(why), Ok(_)) => *got = Err(why),
                            (None, Ok(list)) => list.push(series),
                            (_, Err(_)) => {}
                        }
                    }
                }
                Ok(None) => break Ok(()),
                Err(e) => break Err(e),
            }
        };
        src.client.count_samples(stream.counts.samples);
        let unsent = current.as_ref().map_or(resume, |(q, _)| *q);
        match outcome {
            Ok(()) => {
                if let Some((cq, got)) = current.take() {
                    match emit(ctx, &members[cq], got).await {
                        Ok(t) => tally = tally.add(t),
                        Err(e) => return Err(stop(cq, tally, e)),
                    }
                }
                return Ok(tally);
            }
            Err(e @ DatasourceError::Unreachable(_)) if resumes < RESUMES => {
                resume = unsent;
                resumes += 1;
                tracing::debug!(error = %e, resume, "remote-read stream cut short; resuming");
            }
            Err(e) => return Err(stop(unsent, tally, e)),
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
    let (finished, batch) = (plan.pods.finished_runs(group), plan.pods.batch_pods(group));
    let mut settings = src
        .group_settings(&plan.scope, (group, &finished, &batch), window, window_s)
        .await?;
    let settings_ms = ms(started);
    let ooms = std::mem::take(&mut settings.oom_terminations);
    let index = SettingsIndex::build(&settings);
    // The raw series (a label map each, thousands per group) are not needed once
    // indexed: freed now rather than held while the group's usage streams.
    drop(settings);
    let members = members(plan, group);
    // One sample a step is what the budget plans with (the step is the scrape interval
    // kerf expects); a range-selector span holds at most MAX_SPAN_STEPS of them.
    let step_ms = i64::from(window.step_seconds.max(1)) * 1000;
    let mut points = ((window.end_ms - window.start_ms) / step_ms + 1) as u64;
    let mut budget = src.budget;
    if reader == Reader::RangeSelector {
        points = points.min(range_selector::MAX_SPAN_STEPS);
        budget = budget.for_range_selectors();
    }
    let ctx = Context {
        window,
        datasource: src.client.name(),
        scope: &plan.scope,
        pods: &plan.pods,
        settings: index,
        ooms,
        sink,
    };
    let started = Instant::now();
    let lanes = src.client.max_concurrent().clamp(1, 2);
    let tally = futures_util::stream::iter(batches(&members, points, budget))
        .map(|range| read_guarded(src, &ctx, reader, &members[range]))
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
