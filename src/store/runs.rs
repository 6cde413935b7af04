//! The `runs` table: one row per recommendation run of one cluster, written when the run
//! starts, at each phase and chunk, and when it ends.

use rusqlite::types::Value;
use rusqlite::{params, params_from_iter, OptionalExtension};

use super::{Page, Read, StoreError, Tx};
use crate::run_vocabulary::{
    collect_column, collect_from_column, from_column, to_column, CollectSummary, Phase, PhaseMs,
    RunErrors, RunStatus, Trigger,
};

/// A run as stored. The vocabulary of its typed fields is `crate::run_vocabulary`; the
/// columns keep the spellings and JSON texts of earlier versions (see [`from_row`]).
#[derive(Debug, Clone, PartialEq)]
pub struct RunRecord {
    /// Position in the run log (0 until inserted).
    pub seq: i64,
    pub id: String,
    pub cluster: String,
    pub trigger: Trigger,
    pub status: RunStatus,
    pub phase: Phase,
    pub started_at: i64,
    pub finished_at: Option<i64>,
    pub window_start: i64,
    pub window_end: i64,
    pub settings_identity: String,
    pub workloads_total: i64,
    pub workloads_done: i64,
    pub workloads_failed: i64,
    pub workloads_stale: i64,
    pub recommendations: i64,
    pub phase_ms: PhaseMs,
    /// `None` until the plan is in (stored `{}`).
    pub collect_stats: Option<CollectSummary>,
    pub errors: RunErrors,
}

/// Which runs to list, newest first.
#[derive(Debug, Clone, Default)]
pub struct RunFilter {
    pub cluster: Option<String>,
    pub status: Option<RunStatus>,
    pub trigger: Option<Trigger>,
    pub before_seq: Option<i64>,
    pub limit: usize,
}

const COLUMNS: &str = "seq, id, cluster, trigger, status, phase, started_at, finished_at, \
    window_start, window_end, settings_identity, workloads_total, workloads_done, \
    workloads_failed, workloads_stale, recommendations, phase_ms, collect_stats, errors";

/// A column's text read as its type; a value kerf does not know is an error naming it
/// (and its column), never a default.
fn typed<T, E>(
    r: &rusqlite::Row<'_>,
    i: usize,
    read: impl FnOnce(&str) -> Result<T, E>,
) -> rusqlite::Result<T>
where
    E: std::error::Error + Send + Sync + 'static,
{
    let text: String = r.get(i)?;
    read(&text).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, Box::new(e))
    })
}

fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RunRecord> {
    Ok(RunRecord {
        seq: r.get(0)?,
        id: r.get(1)?,
        cluster: r.get(2)?,
        trigger: typed(r, 3, Trigger::parse)?,
        status: typed(r, 4, RunStatus::parse)?,
        phase: typed(r, 5, Phase::parse)?,
        started_at: r.get(6)?,
        finished_at: r.get(7)?,
        window_start: r.get(8)?,
        window_end: r.get(9)?,
        settings_identity: r.get(10)?,
        workloads_total: r.get(11)?,
        workloads_done: r.get(12)?,
        workloads_failed: r.get(13)?,
        workloads_stale: r.get(14)?,
        recommendations: r.get(15)?,
        phase_ms: typed(r, 16, |t| from_column("phase_ms", t))?,
        collect_stats: typed(r, 17, collect_from_column)?,
        errors: typed(r, 18, |t| from_column("errors", t))?,
    })
}

impl Read<'_> {
    /// One run by id.
    pub fn run(&self, id: &str) -> Result<Option<RunRecord>, StoreError> {
        Ok(self
            .0
            .query_row(
                &format!("SELECT {COLUMNS} FROM runs WHERE id = ?1"),
                [id],
                from_row,
            )
            .optional()?)
    }

    /// A page of runs, newest first; the next page continues below the last `seq`.
    pub fn list_runs(&self, f: &RunFilter) -> Result<Page<RunRecord>, StoreError> {
        let mut sql = format!("SELECT {COLUMNS} FROM runs WHERE 1 = 1");
        let mut args: Vec<Value> = Vec::new();
        for (column, value) in [
            ("cluster", f.cluster.as_deref()),
            ("status", f.status.map(RunStatus::as_str)),
            ("trigger", f.trigger.map(Trigger::as_str)),
        ] {
            if let Some(v) = value {
                args.push(Value::Text(v.to_string()));
                sql.push_str(&format!(" AND {column} = ?{}", args.len()));
            }
        }
        if let Some(seq) = f.before_seq {
            args.push(Value::Integer(seq));
            sql.push_str(&format!(" AND seq < ?{}", args.len()));
        }
        sql.push_str(&format!(" ORDER BY seq DESC LIMIT {}", f.limit + 1));
        let mut stmt = self.0.prepare(&sql)?;
        let rows: Vec<RunRecord> = stmt
            .query_map(params_from_iter(args), from_row)?
            .collect::<Result<_, _>>()?;
        Ok(Page::of_probe(rows, f.limit, |r| r.seq))
    }
}

impl Tx<'_> {
    /// Records a run that is starting; returns its `seq`.
    pub fn insert_run(&self, run: &RunRecord) -> Result<i64, StoreError> {
        self.tx.execute(
            "INSERT INTO runs (id, cluster, trigger, status, phase, started_at, finished_at,
                 window_start, window_end, settings_identity, workloads_total, workloads_done,
                 workloads_failed, workloads_stale, recommendations, phase_ms, collect_stats,
                 errors)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
                 ?18)",
            params![
                run.id,
                run.cluster,
                run.trigger.as_str(),
                run.status.as_str(),
                run.phase.as_str(),
                run.started_at,
                run.finished_at,
                run.window_start,
                run.window_end,
                run.settings_identity,
                run.workloads_total,
                run.workloads_done,
                run.workloads_failed,
                run.workloads_stale,
                run.recommendations,
                to_column(&run.phase_ms),
                collect_column(run.collect_stats.as_ref()),
                to_column(&run.errors),
            ],
        )?;
        Ok(self.tx.last_insert_rowid())
    }

    /// Writes the mutable part of a run (status, phase, progress, results).
    pub fn update_run(&self, run: &RunRecord) -> Result<(), StoreError> {
        self.tx.execute(
            "UPDATE runs SET status = ?2, phase = ?3, finished_at = ?4, workloads_total = ?5,
                 workloads_done = ?6, workloads_failed = ?7, workloads_stale = ?8,
                 recommendations = ?9, phase_ms = ?10, collect_stats = ?11, errors = ?12
             WHERE id = ?1",
            params![
                run.id,
                run.status.as_str(),
                run.phase.as_str(),
                run.finished_at,
                run.workloads_total,
                run.workloads_done,
                run.workloads_failed,
                run.workloads_stale,
                run.recommendations,
                to_column(&run.phase_ms),
                collect_column(run.collect_stats.as_ref()),
                to_column(&run.errors),
            ],
        )?;
        Ok(())
    }

    /// Marks runs left `running` by a previous process as failed; returns how many.
    pub fn fail_interrupted_runs(&self, now_ms: i64) -> Result<usize, StoreError> {
        Ok(self.tx.execute(
            "UPDATE runs SET status = 'failed', phase = 'done', finished_at = ?1,
                 errors = '[{\"message\":\"interrupted: kerf stopped while this run was in progress\"}]'
             WHERE status = 'running'",
            [now_ms],
        )?)
    }

    /// Deletes finished runs started before `cutoff_ms`, keeping each cluster's latest
    /// run; returns how many.
    pub fn prune_runs(&self, cutoff_ms: i64) -> Result<usize, StoreError> {
        Ok(self.tx.execute(
            "DELETE FROM runs WHERE started_at < ?1 AND status != 'running'
               AND seq NOT IN (SELECT MAX(seq) FROM runs GROUP BY cluster)",
            [cutoff_ms],
        )?)
    }
}
