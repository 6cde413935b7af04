//! One run of one cluster: plan → (collect a group → analyze it in chunks on the
//! blocking pool → store) per group, pipelined (`pipeline`), with progress after every
//! chunk, per-phase durations, and the rules for failures: a failed plan fails the run
//! and touches no recommendation; a workload that cannot be analyzed, or whose group
//! could not be collected, keeps its last good recommendation and is marked stale; a
//! workload the collection no longer returns is marked stale.

use std::sync::Arc;

use super::pipeline::stages;
use super::progress::ProgressSlot;
use super::state::RunState;
use super::{
    Phase, PhaseMs, Pricing, RecommenderSettings, RunErrors, RunFailure, RunStatus, Trigger,
};
use crate::clock::Clock;
use crate::datasource::{ClusterScope, Source, Window};
use crate::store::{RunRecord, Store};

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
    trigger: Trigger,
    now_ms: i64,
    settings: &RecommenderSettings,
) -> RunRecord {
    let window = window_for(now_ms, settings);
    RunRecord {
        seq: 0,
        id,
        cluster: cluster.to_string(),
        trigger,
        status: RunStatus::Running,
        phase: Phase::Collect,
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
        phase_ms: PhaseMs::default(),
        collect_stats: None,
        errors: RunErrors::default(),
    }
}

/// Executes `run` (already stored as `running`) to its end and returns the final record,
/// also written to the store. Never panics on datasource, engine or store errors: they
/// end up in the record.
pub async fn execute<S: Source>(
    inputs: &RunInputs,
    run: RunRecord,
    source: Result<(S, ClusterScope), RunFailure>,
) -> RunRecord {
    let mut state = RunState::new(inputs, run);
    let outcome = stages(&mut state, source).await;
    state.end(outcome.err()).await
}

#[cfg(test)]
#[path = "engine_tests.rs"]
mod tests;
