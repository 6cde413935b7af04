//! The stages of one run, group by group: the datasource's plan (inventory) first, then
//! each group collected while the previous one is analyzed and stored — a pipeline two
//! groups deep, so a run holds the samples of at most two groups, never the cluster's.
//! A group's samples are dropped as soon as its last chunk is analyzed.
//!
//! Failures: a failed plan fails the run and touches nothing; a failed group is recorded
//! as an error, its workloads keep their last good recommendation and are marked stale
//! (the collection did not return them), and the run is `partial`; when every group
//! fails the run fails and touches nothing.

use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use serde_json::json;

use super::analyze::{analyze_chunk, ChunkContext};
use super::engine::{RunInputs, ABSENT_REASON, CHUNK_WORKLOADS};
use super::workload::group;
use crate::datasource::{ClusterScope, CollectStats, Collection, Group, Source, Window};
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

fn stats_json(stats: &CollectStats, groups: usize, failed: usize) -> String {
    json!({
        "queries": stats.queries, "series": stats.series, "samples": stats.samples,
        "phaseMs": stats.phases(), "groups": groups, "groupsFailed": failed,
    })
    .to_string()
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
    let plan = plan.map_err(|e| format!("collect: {e}"))?;
    let groups = plan.groups.len();
    let mut stats = plan.stats.clone();
    let mut remaining = plan.workloads();
    run.workloads_total = remaining as i64;
    run.collect_stats = stats_json(&stats, groups, 0);
    inputs.progress.update(run);
    save(inputs, run).await?;
    let ctx = Arc::new(ChunkContext {
        run_id: run.id.clone(),
        now_ms: inputs.clock.now_ms(),
        window,
        policies: inputs.policies.clone(),
        prices: inputs.pricing.for_cluster(&run.cluster),
    });
    let (mut failed, mut first_error) = (0usize, None);
    let mut next = match groups {
        0 => None,
        _ => Some(timed(source.collect_group(&plan, 0)).await),
    };
    for index in 0..groups {
        let Some((collected, ms)) = next.take() else {
            break;
        };
        tally.collect_ms += ms;
        remaining = remaining.saturating_sub(plan.groups[index].workloads);
        let fetch = async {
            match index + 1 < groups {
                true => Some(timed(source.collect_group(&plan, index + 1)).await),
                false => None,
            }
        };
        match collected {
            Ok(collection) => {
                stats.add(&collection.stats);
                let work = analyze_group(inputs, run, tally, &ctx, collection, remaining);
                let (fetched, done) = tokio::join!(fetch, work);
                next = fetched;
                done?;
            }
            Err(e) => {
                let message = format!("collect: {e}");
                tracing::warn!(run = %run.id, group = %describe(&plan.groups[index]), error = %e, "group not collected");
                tally
                    .errors
                    .push(json!({ "group": describe(&plan.groups[index]), "message": &message }));
                first_error.get_or_insert(message);
                failed += 1;
                run.workloads_total = run.workloads_done + remaining as i64;
                next = fetch.await;
            }
        }
        run.collect_stats = stats_json(&stats, groups, failed);
    }
    if let (true, Some(message)) = (failed == groups, first_error) {
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

/// Analyzes and stores one collected group, chunk by chunk; `remaining` is the
/// estimate of workloads in the groups after it (progress total).
async fn analyze_group(
    inputs: &RunInputs,
    run: &mut RunRecord,
    tally: &mut Tally,
    ctx: &Arc<ChunkContext>,
    collection: Collection,
    remaining: usize,
) -> Result<(), String> {
    let mut groups = group(&run.cluster, collection);
    run.workloads_total = run.workloads_done + (groups.len() + remaining) as i64;
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
        run.recommendations += outcome.analyzed.len() as i64;
        run.workloads_failed += outcome.failed.len() as i64;
        run.workloads_done += n;
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
    }
    Ok(())
}

pub(super) async fn save(inputs: &RunInputs, run: &RunRecord) -> Result<(), String> {
    inputs
        .store
        .update_run(run.clone())
        .await
        .map_err(|e| format!("store: {e}"))
}
