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
use std::sync::Arc;
use std::time::Instant;

use serde_json::json;

use super::analyze::{analyze_chunk, ChunkContext, ChunkOutcome};
use super::engine::{RunInputs, ABSENT_REASON, CHUNK_WORKLOADS};
use super::workload::group;
use super::RecommenderSettings;
use crate::datasource::{
    ClusterScope, CollectPlan, CollectStats, Collection, Group, Source, Window,
};
use crate::store::{ChunkWrite, RunRecord};

/// Errors and summed phase times of a run (phases overlap: collection of one group runs
/// while the previous is analyzed, so their sum can exceed the run's wall time).
#[derive(Default)]
pub(super) struct Tally {
    pub errors: Vec<serde_json::Value>,
    pub collect_ms: u64,
    pub analyze_ms: u64,
    pub store_ms: u64,
}

async fn timed<T>(f: impl Future<Output = T>) -> (T, u64) {
    let started = Instant::now();
    let out = f.await;
    (out, started.elapsed().as_millis() as u64)
}

fn stats_json(stats: &CollectStats, groups: usize, failed: usize, excluded: &Excluded) -> String {
    json!({
        "queries": stats.queries, "series": stats.series, "samples": stats.samples,
        "bytes": stats.bytes, "samplesDecoded": stats.samples_decoded,
        "protocol": stats.protocol,
        "phaseMs": stats.phases(), "groups": groups, "groupsFailed": failed,
        "excluded": { "namespaces": excluded.namespaces, "workloads": excluded.workloads },
    })
    .to_string()
}

/// What the recommender settings' `excludedNamespaces` left out of a run.
#[derive(Debug, Default)]
pub(super) struct Excluded {
    /// Namespaces seen and left out, sorted.
    pub namespaces: Vec<String>,
    /// Workloads with a pod alive at the end in them.
    pub workloads: usize,
}

/// Drops the excluded namespaces from `plan`'s groups (a group left empty goes).
fn exclude(plan: &mut CollectPlan, settings: &RecommenderSettings) -> Excluded {
    let mut out = Excluded::default();
    let per_ns = plan.pods.workloads_by_namespace();
    for namespace in per_ns.keys().filter(|n| settings.excludes(n)) {
        out.workloads += alive_in(&per_ns, namespace);
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
    std::collections::BTreeMap<
        crate::datasource::mapping::WorkloadKey,
        crate::datasource::plan::WorkloadPods,
    >,
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

pub(super) async fn stages<S: Source>(
    inputs: &RunInputs,
    run: &mut RunRecord,
    source: Result<(S, ClusterScope), String>,
    tally: &mut Tally,
) -> Result<(), String> {
    let (source, scope) = source?;
    let window = Window {
        start_ms: run.window_start,
        end_ms: run.window_end,
        step_seconds: inputs.settings.step_seconds,
    };
    let (plan, ms) = timed(source.plan(&scope, window)).await;
    tally.collect_ms += ms;
    let mut plan = plan.map_err(|e| format!("collect: {e}"))?;
    let excluded = exclude(&mut plan, &inputs.settings);
    let groups = plan.groups.len();
    run.workloads_total = plan.workloads() as i64;
    run.collect_stats = stats_json(&plan.stats, groups, 0, &excluded);
    inputs.progress.update(run);
    save(inputs, run).await?;
    let ctx = Arc::new(ChunkContext {
        run_id: run.id.clone(),
        now_ms: inputs.clock.now_ms(),
        window,
        policies: inputs.policies.clone(),
        prices: inputs.pricing.for_cluster(&run.cluster),
    });
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
    let mut batch = Batch::default();
    let analyze = async {
        // Owned here, so an analysis error closes the channel and collection stops.
        let mut pieces = pieces;
        while let Some(collection) = pieces.recv().await {
            analyze_piece(inputs, run, tally, &ctx, collection, &mut batch).await?;
        }
        flush(inputs, run, tally, &ctx, &mut batch).await
    };
    let ((), analyzed) = tokio::join!(collect, analyze);
    analyzed?;
    let mut stats = plan.stats.clone();
    let (mut failed, mut first_error) = (0usize, None);
    while let Ok((index, outcome, ms)) = reports.try_recv() {
        tally.collect_ms += ms;
        match outcome {
            Ok(group_stats) => stats.add(&group_stats),
            Err(e) => {
                let message = format!("collect: {e}");
                let group = describe(&plan.groups[index]);
                tracing::warn!(run = %run.id, group = %group, error = %e, "group not collected");
                tally
                    .errors
                    .push(json!({ "group": group, "message": &message }));
                first_error.get_or_insert(message);
                failed += 1;
            }
        }
    }
    run.collect_stats = stats_json(&stats, groups, failed, &excluded);
    if let (true, 0, Some(message)) = (failed == groups, run.recommendations, first_error) {
        return Err(message);
    }
    let started = Instant::now();
    let absent = inputs
        .store
        .mark_absent_stale(
            run.cluster.clone(),
            run.id.clone(),
            ABSENT_REASON,
            ctx.now_ms,
        )
        .await
        .map_err(|e| format!("store: {e}"))?;
    tally.store_ms += started.elapsed().as_millis() as u64;
    run.workloads_total = run.workloads_done;
    run.workloads_stale = run.workloads_failed + absent as i64;
    run.status = if run.workloads_failed == 0 && failed == 0 {
        "succeeded"
    } else if run.recommendations == 0 {
        "failed"
    } else {
        "partial"
    }
    .into();
    Ok(())
}

/// Analysis output waiting to be stored (one transaction per [`CHUNK_WORKLOADS`]).
#[derive(Default)]
struct Batch {
    outcome: ChunkOutcome,
    workloads: i64,
}

/// Analyzes one collection (a workload, or a group in chunks) on the blocking pool and
/// stores the output whenever a chunk's worth is waiting.
async fn analyze_piece(
    inputs: &RunInputs,
    run: &mut RunRecord,
    tally: &mut Tally,
    ctx: &Arc<ChunkContext>,
    collection: Collection,
    batch: &mut Batch,
) -> Result<(), String> {
    let mut groups = group(&run.cluster, collection);
    groups.retain(|g| !inputs.settings.excludes(&g.info.namespace));
    run.phase = "analyze".into();
    inputs.progress.update(run);
    while !groups.is_empty() {
        let rest = groups.split_off(groups.len().min(CHUNK_WORKLOADS));
        let chunk = std::mem::replace(&mut groups, rest);
        let n = chunk.len() as i64;
        let c = ctx.clone();
        let (outcome, ms) = timed(tokio::task::spawn_blocking(move || {
            analyze_chunk(chunk, &c)
        }))
        .await;
        let outcome = outcome.map_err(|e| format!("analysis task failed: {e}"))?;
        tally.analyze_ms += ms;
        for (w, why) in &outcome.failed {
            let workload = format!("{}/{}/{}", w.namespace, w.kind, w.name);
            tally
                .errors
                .push(json!({ "workload": workload, "message": why }));
        }
        batch.outcome.analyzed.extend(outcome.analyzed);
        batch.outcome.failed.extend(outcome.failed);
        batch.workloads += n;
        if batch.workloads >= CHUNK_WORKLOADS as i64 {
            flush(inputs, run, tally, ctx, batch).await?;
        }
    }
    Ok(())
}

/// Stores the waiting analysis output in one transaction and records progress.
async fn flush(
    inputs: &RunInputs,
    run: &mut RunRecord,
    tally: &mut Tally,
    ctx: &Arc<ChunkContext>,
    batch: &mut Batch,
) -> Result<(), String> {
    if batch.workloads == 0 {
        return Ok(());
    }
    let Batch { outcome, workloads } = std::mem::take(batch);
    run.recommendations += outcome.analyzed.len() as i64;
    run.workloads_failed += outcome.failed.len() as i64;
    run.workloads_done += workloads;
    run.workloads_total = run.workloads_total.max(run.workloads_done);
    let write = ChunkWrite {
        run_id: run.id.clone(),
        now_ms: ctx.now_ms,
        analyzed: outcome.analyzed,
        failed: outcome.failed,
    };
    run.phase = "store".into();
    inputs.progress.update(run);
    let started = Instant::now();
    inputs
        .store
        .write_chunk(write)
        .await
        .map_err(|e| format!("store: {e}"))?;
    run.phase = "analyze".into();
    save(inputs, run).await?;
    tally.store_ms += started.elapsed().as_millis() as u64;
    inputs.progress.update(run);
    Ok(())
}

pub(super) async fn save(inputs: &RunInputs, run: &RunRecord) -> Result<(), String> {
    inputs
        .store
        .update_run(run.clone())
        .await
        .map_err(|e| format!("store: {e}"))
}
