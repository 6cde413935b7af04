//! The stages of one run: the datasource's plan (inventory) first, then every group
//! streamed from the datasource while its workloads are analyzed and stored. Collection
//! and analysis run side by side, joined by a channel one collection deep: a workload is
//! analyzed as soon as its series are complete, and a full channel pauses collection,
//! so a run holds a bounded window of workloads (remote read) or of groups
//! (`query_range`), never the cluster's samples. Analysis output is stored in chunks.
//!
//! Failures: a failed plan fails the run and touches nothing; a failed group is recorded
//! as an error, its workloads not yet analyzed keep their last good recommendation and
//! are marked stale (the collection did not return them), and the run is `partial`;
//! when every group fails and nothing was analyzed, the run fails and touches nothing.

use std::future::Future;
use std::time::Instant;

use super::state::RunState;
use super::{CollectSummary, Excluded, Phase, RecommenderSettings, RunErrorEntry, RunFailure};
use crate::datasource::{ClusterScope, CollectPlan, CollectStats, Collection, Group, Source};

async fn timed<T>(f: impl Future<Output = T>) -> (T, u64) {
    let started = Instant::now();
    let out = f.await;
    (out, started.elapsed().as_millis() as u64)
}

/// The run's `collect` figures: the datasource's, with the groups and what was excluded.
fn summary(
    stats: &CollectStats,
    groups: usize,
    failed: usize,
    excluded: &Excluded,
) -> CollectSummary {
    CollectSummary {
        queries: stats.queries,
        series: stats.series,
        samples: stats.samples,
        bytes: stats.bytes,
        samples_decoded: stats.samples_decoded,
        protocol: stats.protocol.clone(),
        phase_ms: stats.phases(),
        groups: groups as u64,
        groups_failed: failed as u64,
        excluded: excluded.clone(),
    }
}

/// Drops the excluded namespaces from `plan`'s groups (a group left empty goes).
fn exclude(plan: &mut CollectPlan, settings: &RecommenderSettings) -> Excluded {
    let mut out = Excluded::default();
    let per_ns = plan.pods.workloads_by_namespace();
    for namespace in per_ns.keys().filter(|n| settings.excludes(n)) {
        out.workloads += alive_in(&per_ns, namespace) as u64;
        out.namespaces.push(namespace.clone());
    }
    if out.namespaces.is_empty() {
        return out;
    }
    for g in &mut plan.groups {
        let before = g.namespaces.len();
        g.namespaces.retain(|n| !settings.excludes(n));
        if g.namespaces.len() != before {
            g.pod_count = g.namespaces.iter().map(|n| pods_in(&per_ns, n)).sum();
            g.workloads = g.namespaces.iter().map(|n| alive_in(&per_ns, n)).sum();
        }
    }
    // Only groups of excluded namespaces are left empty here: without an inventory
    // nothing is excluded by name until the workloads are collected.
    plan.groups.retain(|g| !g.namespaces.is_empty());
    out
}

type PerNamespace = std::collections::BTreeMap<
    String,
    std::collections::BTreeMap<crate::workload::WorkloadKey, crate::datasource::plan::WorkloadPods>,
>;

fn pods_in(per_ns: &PerNamespace, ns: &str) -> usize {
    per_ns
        .get(ns)
        .map_or(0, |w| w.values().map(|w| w.pods.len()).sum())
}

fn alive_in(per_ns: &PerNamespace, ns: &str) -> usize {
    per_ns
        .get(ns)
        .map_or(0, |w| w.values().filter(|w| w.alive).count())
}

/// What a group's error names: its namespaces, and how many pods when it is a slice.
fn describe(g: &Group) -> String {
    let namespaces = if g.namespaces.is_empty() {
        "every namespace".to_string()
    } else {
        g.namespaces.join(",")
    };
    if g.pods.is_empty() {
        namespaces
    } else {
        format!("{namespaces} ({} pods)", g.pods.len())
    }
}

/// Collections in flight between the datasource and analysis (each one workload with
/// remote read, one group with `query_range`).
const IN_FLIGHT: usize = 1;

/// Plans, then collects and analyzes every group side by side, then settles the run.
/// An `Err` fails the run (its message becomes the run's last error).
pub(super) async fn stages<S: Source>(
    state: &mut RunState<'_>,
    source: Result<(S, ClusterScope), RunFailure>,
) -> Result<(), RunFailure> {
    let (source, scope) = source?;
    let window = state.window();
    let (plan, ms) = timed(source.plan(&scope, window)).await;
    state.spent(Phase::Collect, ms);
    let mut plan = plan.map_err(RunFailure::Collect)?;
    let excluded = exclude(&mut plan, &state.inputs().settings);
    let groups = plan.groups.len();
    let planned = summary(&plan.stats, groups, 0, &excluded);
    state.planned(plan.workloads(), planned).await?;
    let (sink, pieces) = tokio::sync::mpsc::channel::<Collection>(IN_FLIGHT);
    let (report, mut reports) = tokio::sync::mpsc::unbounded_channel();
    let collect = async {
        for index in 0..groups {
            if sink.is_closed() {
                break; // analysis stopped (a store error): collect nothing more
            }
            let (outcome, ms) = timed(source.stream_group(&plan, index, &sink)).await;
            // The receiver lives as long as the analysis loop; a send only fails once
            // the run has already stopped.
            let _ = report.send((index, outcome, ms));
        }
        drop(sink);
    };
    let analyze = async {
        // Owned here, so an analysis error closes the channel and collection stops.
        let mut pieces = pieces;
        while let Some(collection) = pieces.recv().await {
            state.analyze(collection).await?;
        }
        state.flush().await
    };
    let ((), analyzed) = tokio::join!(collect, analyze);
    analyzed?;
    let mut stats = plan.stats.clone();
    let (mut failed, mut first_error) = (0usize, None);
    while let Ok((index, outcome, ms)) = reports.try_recv() {
        state.spent(Phase::Collect, ms);
        match outcome {
            Ok(group_stats) => stats.add(&group_stats),
            Err(e) => {
                let group = describe(&plan.groups[index]);
                let run_id = &state.record().id;
                tracing::warn!(run = %run_id, group = %group, error = %e, "group not collected");
                let e = RunFailure::Collect(e);
                state.met(RunErrorEntry::Group {
                    group,
                    message: e.to_string(),
                });
                first_error.get_or_insert(e);
                failed += 1;
            }
        }
    }
    state.collected(summary(&stats, groups, failed, &excluded));
    if let (true, 0, Some(e)) = (
        failed == groups,
        state.record().recommendations,
        first_error,
    ) {
        return Err(e);
    }
    state.settle(failed).await
}
