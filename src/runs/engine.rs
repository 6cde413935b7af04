//! One run of one cluster: collect → analyze (in chunks, on the blocking pool) → store,
//! with progress after every chunk, per-phase durations, and the rules for failures:
//! a failed collection fails the run and touches no recommendation; a workload that
//! cannot be analyzed keeps its last good recommendation and is marked stale; a workload
//! the collection no longer returns is marked stale.

use std::sync::Arc;
use std::time::Instant;

use serde_json::json;

use super::analyze::{analyze_chunk, ChunkContext};
use super::progress::ProgressSlot;
use super::settings::{Pricing, RecommenderSettings};
use super::workload::group;
use super::Clock;
use crate::datasource::{ClusterScope, Source, Window};
use crate::store::{ChunkWrite, RunRecord, Store};

/// Workloads analyzed per engine call; bounds the memory of one chunk's output.
pub const CHUNK_WORKLOADS: usize = 100;

/// Why a stale workload is stale when the collection no longer returns it.
pub const ABSENT_REASON: &str = "not returned by the latest collection";

/// What a run needs besides its record.
pub struct RunInputs {
    pub store: Store,
    pub clock: Arc<dyn Clock>,
    pub settings: RecommenderSettings,
    pub pricing: Pricing,
    /// Policies and overrides of the cluster's workloads, loaded once for the run.
    pub policies: crate::policy::PolicySet,
    pub progress: ProgressSlot,
}

/// The time range a run starting at `now_ms` analyzes: it ends at `now_ms` rounded down
/// to the step, so repeated runs align on the same sample grid.
pub fn window_for(now_ms: i64, settings: &RecommenderSettings) -> Window {
    let step_ms = i64::from(settings.step_seconds) * 1000;
    let end_ms = now_ms - now_ms.rem_euclid(step_ms);
    Window {
        end_ms,
        start_ms: end_ms - settings.lookback_seconds * 1000,
        step_seconds: settings.step_seconds,
    }
}

/// The record of a run starting now: `running`, in phase `collect`, nothing counted.
pub fn new_record(
    id: String,
    cluster: &str,
    trigger: super::Trigger,
    now_ms: i64,
    settings: &RecommenderSettings,
) -> RunRecord {
    let window = window_for(now_ms, settings);
    RunRecord {
        seq: 0,
        id,
        cluster: cluster.to_string(),
        trigger: trigger.as_str().into(),
        status: "running".into(),
        phase: "collect".into(),
        started_at: now_ms,
        finished_at: None,
        window_start: window.start_ms,
        window_end: window.end_ms,
        settings_identity: settings.identity(),
        workloads_total: 0,
        workloads_done: 0,
        workloads_failed: 0,
        workloads_stale: 0,
        recommendations: 0,
        phase_ms: "{}".into(),
        collect_stats: "{}".into(),
        errors: "[]".into(),
    }
}

#[derive(Default)]
struct Tally {
    errors: Vec<serde_json::Value>,
    collect_ms: u64,
    analyze_ms: u64,
    store_ms: u64,
}

/// Executes `run` (already stored as `running`) to its end and returns the final record,
/// also written to the store. Never panics on datasource, engine or store errors: they
/// end up in the record.
pub async fn execute<S: Source>(
    inputs: &RunInputs,
    mut run: RunRecord,
    source: Result<(S, ClusterScope), String>,
) -> RunRecord {
    let mut tally = Tally::default();
    let outcome = stages(inputs, &mut run, source, &mut tally).await;
    if let Err(message) = outcome {
        tally.errors.push(json!({ "message": message }));
        run.status = "failed".into();
    }
    run.phase = "done".into();
    run.finished_at = Some(inputs.clock.now_ms());
    run.phase_ms = json!({
        "collect": tally.collect_ms, "analyze": tally.analyze_ms, "store": tally.store_ms,
    })
    .to_string();
    run.errors = serde_json::Value::Array(tally.errors).to_string();
    inputs.progress.finish(&run);
    if let Err(e) = inputs.store.update_run(run.clone()).await {
        tracing::error!(run = %run.id, error = %e, "cannot record the end of a run");
    }
    tracing::info!(
        run = %run.id, cluster = %run.cluster, status = %run.status,
        workloads = run.workloads_total, recommendations = run.recommendations,
        failed = run.workloads_failed, stale = run.workloads_stale,
        phase_ms = %run.phase_ms, "run finished"
    );
    run
}

async fn stages<S: Source>(
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
    let started = Instant::now();
    let collected = source.collect(&scope, window).await;
    tally.collect_ms = started.elapsed().as_millis() as u64;
    let collection = collected.map_err(|e| format!("collect: {e}"))?;
    let stats = &collection.stats;
    run.collect_stats = json!({
        "queries": stats.queries, "series": stats.series, "samples": stats.samples,
        "phaseMs": stats.phase_ms.iter().cloned().collect::<std::collections::BTreeMap<_, _>>(),
    })
    .to_string();
    let mut groups = group(&run.cluster, collection);
    run.workloads_total = groups.len() as i64;
    run.phase = "analyze".into();
    inputs.progress.update(run);
    save(inputs, run).await?;
    let ctx = ChunkContext {
        run_id: run.id.clone(),
        now_ms: inputs.clock.now_ms(),
        window,
        policies: inputs.policies.clone(),
        prices: inputs.pricing.for_cluster(&run.cluster),
    };
    let ctx = Arc::new(ctx);
    while !groups.is_empty() {
        let rest = groups.split_off(groups.len().min(CHUNK_WORKLOADS));
        let chunk = std::mem::replace(&mut groups, rest);
        let n = chunk.len() as i64;
        let started = Instant::now();
        let c = ctx.clone();
        let outcome = tokio::task::spawn_blocking(move || analyze_chunk(chunk, &c))
            .await
            .map_err(|e| format!("analysis task failed: {e}"))?;
        tally.analyze_ms += started.elapsed().as_millis() as u64;
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
    run.workloads_stale = run.workloads_failed + absent as i64;
    run.status = if run.workloads_failed == 0 {
        "succeeded"
    } else if run.recommendations == 0 {
        "failed"
    } else {
        "partial"
    }
    .into();
    Ok(())
}

async fn save(inputs: &RunInputs, run: &RunRecord) -> Result<(), String> {
    inputs
        .store
        .update_run(run.clone())
        .await
        .map_err(|e| format!("store: {e}"))
}

#[cfg(test)]
#[path = "engine_tests.rs"]
mod tests;
