//! What a running run carries, in one place: its record (with its typed status and
//! phase), the tally of its errors and phase times, the context its chunks share, and
//! the analysis output waiting to be stored; and the transitions between its phases,
//! each of which updates the in-memory progress and, where the figures should last,
//! the run's row. `pipeline` drives it; `docs/contracts/runs.md` ("Run states") lists
//! the states.

use std::sync::Arc;
use std::time::Instant;

use super::analyze::{analyze_chunk, ChunkContext, ChunkOutcome};
use super::engine::{RunInputs, ABSENT_REASON, CHUNK_WORKLOADS};
use super::workload::group;
use super::{CollectSummary, Phase, PhaseMs, RunErrorEntry, RunErrors, RunFailure, RunStatus};
use crate::datasource::{Collection, Window};
use crate::store::{ChunkWrite, RunRecord};

/// Errors and summed phase times of a run (phases overlap: collection of one group runs
/// while the previous is analyzed, so their sum can exceed the run's wall time). Kept
/// apart from the record until the run ends: a running run shows neither.
#[derive(Default)]
struct Tally {
    errors: RunErrors,
    collect_ms: u64,
    analyze_ms: u64,
    store_ms: u64,
}

/// Analysis output waiting to be stored (one transaction per [`CHUNK_WORKLOADS`]).
#[derive(Default)]
struct Batch {
    outcome: ChunkOutcome,
    workloads: i64,
}

/// One run in flight, from its first row (`running`, `collect`) to its end (`done`).
pub(super) struct RunState<'a> {
    inputs: &'a RunInputs,
    run: RunRecord,
    tally: Tally,
    /// Stamped with the present again when the plan is in (see [`RunState::planned`]).
    ctx: Arc<ChunkContext>,
    batch: Batch,
}

impl<'a> RunState<'a> {
    /// The state of `run`, already stored as `running` in phase `collect`.
    pub fn new(inputs: &'a RunInputs, run: RunRecord) -> RunState<'a> {
        let ctx = Arc::new(ChunkContext {
            run_id: run.id.clone(),
            now_ms: inputs.clock.now_ms(),
            window: window_of(&run, inputs),
            policies: inputs.policies.clone(),
            prices: inputs.pricing.for_cluster(&run.cluster),
        });
        RunState {
            inputs,
            run,
            tally: Tally::default(),
            ctx,
            batch: Batch::default(),
        }
    }

    pub fn record(&self) -> &RunRecord {
        &self.run
    }

    pub fn inputs(&self) -> &RunInputs {
        self.inputs
    }

    /// The usage window the run analyzes.
    pub fn window(&self) -> Window {
        self.ctx.window
    }

    /// Adds `ms` to the time spent in `phase`.
    pub fn spent(&mut self, phase: Phase, ms: u64) {
        match phase {
            Phase::Collect => self.tally.collect_ms += ms,
            Phase::Analyze => self.tally.analyze_ms += ms,
            Phase::Store => self.tally.store_ms += ms,
            Phase::Done => {}
        }
    }

    /// Records an error the run met (shown once the run ends).
    pub fn met(&mut self, entry: RunErrorEntry) {
        self.tally.errors.push(entry);
    }

    /// The plan is in: `total` workloads expected, `collect` its figures. Written to the
    /// row; the present is taken again for what the run stores.
    pub async fn planned(
        &mut self,
        total: usize,
        collect: CollectSummary,
    ) -> Result<(), RunFailure> {
        self.run.workloads_total = total as i64;
        self.run.collect_stats = Some(collect);
        self.inputs.progress.update(&self.run);
        self.save().await?;
        Arc::make_mut(&mut self.ctx).now_ms = self.inputs.clock.now_ms();
        Ok(())
    }

    /// Collection is over: its figures summed over every group.
    pub fn collected(&mut self, collect: CollectSummary) {
        self.run.collect_stats = Some(collect);
    }

    /// Moves to `phase` (the progress shows it at once).
    fn enter(&mut self, phase: Phase) {
        debug_assert_ne!(self.run.phase, Phase::Done, "an ended run moves no more");
        self.run.phase = phase;
        self.inputs.progress.update(&self.run);
    }

    /// Analyzes one collection (a workload, or a group in chunks) on the blocking pool and
    /// stores the output whenever a chunk's worth is waiting.
    pub async fn analyze(&mut self, collection: Collection) -> Result<(), RunFailure> {
        let mut groups = group(&self.run.cluster, collection);
        groups.retain(|g| !self.inputs.settings.excludes(&g.info.namespace));
        self.enter(Phase::Analyze);
        while !groups.is_empty() {
            let rest = groups.split_off(groups.len().min(CHUNK_WORKLOADS));
            let chunk = std::mem::replace(&mut groups, rest);
            let n = chunk.len() as i64;
            let c = self.ctx.clone();
            let started = Instant::now();
            let outcome = tokio::task::spawn_blocking(move || analyze_chunk(chunk, &c)).await;
            let ms = started.elapsed().as_millis() as u64;
            let outcome = outcome.map_err(RunFailure::AnalysisTask)?;
            self.spent(Phase::Analyze, ms);
            for (w, why) in &outcome.failed {
                self.met(RunErrorEntry::Workload {
                    workload: format!("{}/{}/{}", w.namespace, w.kind, w.name),
                    message: why.clone(),
                });
            }
            self.batch.outcome.analyzed.extend(outcome.analyzed);
            self.batch.outcome.failed.extend(outcome.failed);
            self.batch.outcome.observed.extend(outcome.observed);
            self.batch.workloads += n;
            if self.batch.workloads >= CHUNK_WORKLOADS as i64 {
                self.flush().await?;
            }
        }
        Ok(())
    }

    /// Stores the waiting analysis output in one transaction and records progress.
    pub async fn flush(&mut self) -> Result<(), RunFailure> {
        if self.batch.workloads == 0 {
            return Ok(());
        }
        let Batch { outcome, workloads } = std::mem::take(&mut self.batch);
        let run = &mut self.run;
        run.recommendations += outcome.analyzed.len() as i64;
        run.workloads_failed += outcome.failed.len() as i64;
        run.workloads_done += workloads;
        run.workloads_total = run.workloads_total.max(run.workloads_done);
        let write = ChunkWrite {
            run_id: run.id.clone(),
            now_ms: self.ctx.now_ms,
            analyzed: outcome.analyzed,
            failed: outcome.failed,
        };
        let (observed, prices) = (outcome.observed, self.ctx.prices);
        self.enter(Phase::Store);
        let started = Instant::now();
        self.inputs
            .store
            .writing(move |tx| {
                tx.write_chunk(&write)?;
                super::live_check::reconcile(tx, &observed, prices)
            })
            .await
            .map_err(RunFailure::Store)?;
        self.run.phase = Phase::Analyze;
        self.save().await?;
        self.spent(Phase::Store, started.elapsed().as_millis() as u64);
        self.inputs.progress.update(&self.run);
        Ok(())
    }

    /// Every group was tried (`groups_failed` of them failed) and everything analyzed is
    /// stored: marks the workloads the collection did not return stale and sets how the
    /// run went.
    pub async fn settle(&mut self, groups_failed: usize) -> Result<(), RunFailure> {
        let started = Instant::now();
        let (cluster, run_id, now_ms) = (
            self.run.cluster.clone(),
            self.run.id.clone(),
            self.ctx.now_ms,
        );
        let absent = self
            .inputs
            .store
            .writing(move |tx| tx.mark_absent_stale(&cluster, &run_id, ABSENT_REASON, now_ms))
            .await
            .map_err(RunFailure::Store)?;
        self.spent(Phase::Store, started.elapsed().as_millis() as u64);
        let run = &mut self.run;
        run.workloads_total = run.workloads_done;
        run.workloads_stale = run.workloads_failed + absent as i64;
        run.status = if run.workloads_failed == 0 && groups_failed == 0 {
            RunStatus::Succeeded
        } else if run.recommendations == 0 {
            RunStatus::Failed
        } else {
            RunStatus::Partial
        };
        Ok(())
    }

    /// Ends the run (`failed` with `failure` as its last error, or as settled), writes
    /// its final row and returns its record.
    pub async fn end(mut self, failure: Option<RunFailure>) -> RunRecord {
        if let Some(e) = failure {
            self.met(RunErrorEntry::Run {
                message: e.to_string(),
            });
            self.run.status = RunStatus::Failed;
        }
        let Tally {
            errors,
            collect_ms,
            analyze_ms,
            store_ms,
        } = self.tally;
        let mut run = self.run;
        run.phase = Phase::Done;
        run.finished_at = Some(self.inputs.clock.now_ms());
        run.phase_ms = PhaseMs::ended(collect_ms, analyze_ms, store_ms);
        run.errors = errors;
        self.inputs.progress.finish(&run);
        let last = run.clone();
        if let Err(e) = self
            .inputs
            .store
            .writing(move |tx| tx.update_run(&last))
            .await
        {
            tracing::error!(run = %run.id, error = %e, "cannot record the end of a run");
        }
        tracing::info!(
            run = %run.id, cluster = %run.cluster, status = %run.status,
            workloads = run.workloads_total, recommendations = run.recommendations,
            failed = run.workloads_failed, stale = run.workloads_stale,
            phase_ms = %crate::run_vocabulary::to_column(&run.phase_ms), "run finished"
        );
        run
    }

    async fn save(&self) -> Result<(), RunFailure> {
        let run = self.run.clone();
        self.inputs
            .store
            .writing(move |tx| tx.update_run(&run))
            .await
            .map_err(RunFailure::Store)
    }
}

fn window_of(run: &RunRecord, inputs: &RunInputs) -> Window {
    Window {
        start_ms: run.window_start,
        end_ms: run.window_end,
        step_seconds: inputs.settings.step_seconds,
    }
}
