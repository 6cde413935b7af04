//! One group collected from the usage store, workload by workload: the group's settings
//! and OOM answers first (one read), then each workload alive at the end read alone
//! (queries 12 and 13: both usage metrics of its pods, raw, over the window inclusive at
//! both ends), checked (strict time order), rid of staleness markers, merged on the
//! labels kerf keeps, mapped and sent, so a run holds the workloads in flight (the one
//! mapped and the one read ahead), not the group. Without an inventory, each namespace
//! is read and sent as one piece.

use std::time::Instant;

use futures_util::StreamExt;

use super::selection::Selection;
use super::EmbeddedSource;
use crate::datasource::mapping::{
    map_with, unreadable_piece, PodIndex, SettingsIndex, WorkloadKey,
};
use crate::datasource::prometheus::merged::usage_of;
use crate::datasource::raw::{label, metric, RawSeries};
use crate::datasource::{
    send, CollectPlan, CollectStats, Collection, DatasourceError, Group, Sink, Window,
};
use crate::store::usage::{LabelMatcher, SeriesQuery};

/// Workloads read at once: one ahead of the one being mapped.
const READ_AHEAD: usize = 2;

/// One piece to read: a workload (its pods), or without an inventory a namespace.
struct Member {
    key: Option<WorkloadKey>,
    selection: Selection,
}

/// What every workload of the group is mapped with.
struct Context<'a> {
    window: Window,
    /// The datasource as faults name it.
    datasource: String,
    pods: &'a PodIndex,
    settings: SettingsIndex,
    ooms: Vec<RawSeries>,
    sink: &'a Sink,
}

/// Series and samples read and handed on.
#[derive(Default)]
struct Tally {
    reads: u64,
    read: u64,
    series: u64,
    samples: u64,
}

/// The usage selector of queries 12 and 13 over `window`, inclusive at both ends.
pub(super) fn usage_query(sel: &Selection, metrics: &[&str], window: Window) -> SeriesQuery {
    sel.query(metrics)
        .matching(LabelMatcher::not_equal(label::CONTAINER, ""))
        .matching(LabelMatcher::not_equal(label::CONTAINER, "POD"))
        .between(window.start_ms, window.end_ms)
}

/// Streams group `index` of `plan` into `sink`.
pub(super) async fn stream_group(
    src: &EmbeddedSource,
    plan: &CollectPlan,
    index: usize,
    sink: &Sink,
) -> Result<CollectStats, DatasourceError> {
    let window = plan.window;
    let window_ms = super::check(window)?;
    src.check_scope(&plan.scope)?;
    let group = plan
        .groups
        .get(index)
        .ok_or_else(|| DatasourceError::Invalid(format!("the plan has no group {index}")))?;
    let started = Instant::now();
    let sel = Selection::group(&src.cluster, &plan.scope, group);
    let group_sel = sel.clone();
    let of = |g: crate::datasource::Group| {
        (!g.pods.is_empty()).then(|| Selection::group(&src.cluster, &plan.scope, &g))
    };
    let finished = of(plan.pods.finished_runs(group));
    let batch = of(plan.pods.batch_pods(group));
    let mut settings = src
        .read(move |r| {
            let sels = (&group_sel, finished.as_ref(), batch.as_ref());
            super::settings::group_settings(r, sels, window, window_ms)
        })
        .await?;
    let settings_ms = super::ms(started);
    let ooms = std::mem::take(&mut settings.oom_terminations);
    let ctx = Context {
        window,
        datasource: src.name(),
        pods: &plan.pods,
        settings: SettingsIndex::build(&settings),
        ooms,
        sink,
    };
    drop(settings);
    let started = Instant::now();
    let mut tally = Tally {
        reads: 1,
        ..Tally::default()
    };
    // The next workload is read (on a reader thread) while this one is mapped.
    let reads = members(src, plan, group, &sel, window)
        .await?
        .into_iter()
        .map(|member| {
            let q = usage_query(&member.selection, &[metric::CPU, metric::MEMORY], window);
            async move { Ok::<_, DatasourceError>((member, src.read(move |r| r.select(&q)).await?)) }
        });
    let mut reads = futures_util::stream::iter(reads).buffered(READ_AHEAD);
    while let Some(read) = reads.next().await {
        let (member, stored) = read?;
        tally.reads += 1;
        let raw: Vec<RawSeries> = stored
            .into_iter()
            .map(|s| RawSeries {
                labels: s.labels,
                samples: s.samples,
            })
            .collect();
        tally.read += raw.iter().map(|s| s.samples.len() as u64).sum::<u64>();
        emit(&ctx, &member, raw, &mut tally).await?;
    }
    Ok(CollectStats {
        queries: tally.reads,
        series: tally.series,
        samples: tally.samples,
        samples_decoded: tally.read,
        protocol: super::PROTOCOL.into(),
        phase_ms: vec![
            ("settings".into(), settings_ms),
            ("usage".into(), super::ms(started)),
        ],
        ..CollectStats::default()
    })
}

/// The workloads of `group` with a pod alive at the window end (the others are never
/// analyzed), or without an inventory every namespace of the group with usage.
async fn members(
    src: &EmbeddedSource,
    plan: &CollectPlan,
    group: &Group,
    sel: &Selection,
    window: Window,
) -> Result<Vec<Member>, DatasourceError> {
    if !plan.pods.ksm_present {
        let mut namespaces = group.namespaces.clone();
        if namespaces.is_empty() {
            let q = usage_query(sel, &[metric::CPU, metric::MEMORY], window);
            let found = src.read(move |r| r.series(&q)).await?;
            let names: std::collections::BTreeSet<String> = found
                .into_iter()
                .filter_map(|s| s.labels.get(label::NAMESPACE).cloned())
                .collect();
            namespaces = names.into_iter().collect();
        }
        return Ok(namespaces
            .iter()
            .map(|ns| Member {
                key: None,
                selection: sel.pods(ns, &group.pods),
            })
            .collect());
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
                    selection: sel.pods(&namespace, &w.pods),
                    key: Some(key),
                });
            }
        }
    }
    Ok(out)
}

/// Maps one member's usage and sends it; a fault sends the workload as unreadable.
async fn emit(
    ctx: &Context<'_>,
    member: &Member,
    raw: Vec<RawSeries>,
    tally: &mut Tally,
) -> Result<(), DatasourceError> {
    let usage = match usage_of(raw) {
        Ok(usage) => usage,
        Err(why) => return unreadable(ctx, member, why).await,
    };
    tally.series += (usage.cpu.len() + usage.memory.len()) as u64;
    tally.samples += usage
        .cpu
        .iter()
        .chain(&usage.memory)
        .map(|s| s.samples.len() as u64)
        .sum::<u64>();
    let (mut containers, mut workloads) =
        map_with(ctx.window, ctx.pods, &ctx.settings, &ctx.ooms, usage);
    if let Some(key) = &member.key {
        // A pod name reused by another workload can bring its series along: keep only
        // this workload (the other is read on its own).
        let this = |ns: &str, kind: &str, name: &str| {
            (ns, kind, name) == (&*key.namespace, &*key.kind, &*key.name)
        };
        containers.retain(|c| this(&c.target.namespace, &c.target.kind, &c.target.name));
        workloads.retain(|w| this(&w.namespace, &w.kind, &w.name));
    }
    if workloads.is_empty() && containers.is_empty() {
        return Ok(());
    }
    let mut piece = Collection::empty(ctx.window);
    piece.input.containers = containers;
    piece.workloads = workloads;
    piece.sort();
    send(ctx.sink, piece).await
}

/// Sends `member` as unreadable (the run records why and analyzes the others); without
/// an inventory there is no workload to name, and the group fails.
async fn unreadable(
    ctx: &Context<'_>,
    member: &Member,
    why: String,
) -> Result<(), DatasourceError> {
    let Some(key) = &member.key else {
        return Err(DatasourceError::Decode(format!(
            "datasource {}: {why}",
            ctx.datasource
        )));
    };
    let piece = unreadable_piece(ctx.pods, ctx.window, &ctx.datasource, key, &why);
    let reason = piece.workloads[0].unreadable.as_deref().unwrap_or_default();
    tracing::warn!(reason = %reason, "workload unreadable");
    send(ctx.sink, piece).await
}
