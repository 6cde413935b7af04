//! The `runs` table: one row per recommendation run of one cluster, written when the run
//! starts, at each phase and chunk, and when it ends.

use rusqlite::types::Value;
use rusqlite::{params, params_from_iter, Connection, OptionalExtension};

use super::StoreError;

/// A run as stored. JSON columns stay text here; `runs` gives them meaning.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRecord {
    /// Position in the run log (0 until inserted).
    pub seq: i64,
    pub id: String,
    pub cluster: String,
    pub trigger: String,
    pub status: String,
    pub phase: String,
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
    pub phase_ms: String,
    pub collect_stats: String,
    pub errors: String,
}

/// Which runs to list, newest first.
#[derive(Debug, Clone, Default)]
pub struct RunFilter {
    pub cluster: Option<String>,
    pub status: Option<String>,
    pub trigger: Option<String>,
    pub before_seq: Option<i64>,
    pub limit: usize,
}

const COLUMNS: &str = "seq, id, cluster, trigger, status, phase, started_at, finished_at, \
    window_start, window_end, settings_identity, workloads_total, workloads_done, \
    workloads_failed, workloads_stale, recommendations, phase_ms, collect_stats, errors";

fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<RunRecord> {
    Ok(RunRecord {
        seq: r.get(0)?,
        id: r.get(1)?,
        cluster: r.get(2)?,
        trigger: r.get(3)?,
        status: r.get(4)?,
        phase: r.get(5)?,
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
        phase_ms: r.get(16)?,
        collect_stats: r.get(17)?,
        errors: r.get(18)?,
    })
}

/// Records a run that is starting; returns its `seq`.
pub fn insert_run(conn: &Connection, run: &RunRecord) -> Result<i64, StoreError> {
    conn.execute(
        "INSERT INTO runs (id, cluster, trigger, status, phase, started_at, finished_at,
             window_start, window_end, settings_identity, workloads_total, workloads_done,
             workloads_failed, workloads_stale, recommendations, phase_ms, collect_stats, errors)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
        params![
            run.id,
            run.cluster,
            run.trigger,
            run.status,
            run.phase,
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
            run.phase_ms,
            run.collect_stats,
            run.errors,
        ],
    )?;
    Ok(conn.last_insert_rowid())
}

/// Writes the mutable part of a run (status, phase, progress, results).
pub fn update_run(conn: &Connection, run: &RunRecord) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE runs SET status = ?2, phase = ?3, finished_at = ?4, workloads_total = ?5,
             workloads_done = ?6, workloads_failed = ?7, workloads_stale = ?8,
             recommendations = ?9, phase_ms = ?10, collect_stats = ?11, errors = ?12
         WHERE id = ?1",
        params![
            run.id,
            run.status,
            run.phase,
            run.finished_at,
            run.workloads_total,
            run.workloads_done,
            run.workloads_failed,
            run.workloads_stale,
            run.recommendations,
            run.phase_ms,
            run.collect_stats,
            run.errors,
        ],
    )?;
    Ok(())
}

/// One run by id.
pub fn get_run(conn: &Connection, id: &str) -> Result<Option<RunRecord>, StoreError> {
    Ok(conn
        .query_row(
            &format!("SELECT {COLUMNS} FROM runs WHERE id = ?1"),
            [id],
            from_row,
        )
        .optional()?)
}

/// A page of runs, newest first, and the cursor of the next page.
pub fn list_runs(
    conn: &Connection,
    f: &RunFilter,
) -> Result<(Vec<RunRecord>, Option<i64>), StoreError> {
    let mut sql = format!("SELECT {COLUMNS} FROM runs WHERE 1 = 1");
    let mut args: Vec<Value> = Vec::new();
    for (column, value) in [
        ("cluster", &f.cluster),
        ("status", &f.status),
        ("trigger", &f.trigger),
    ] {
        if let Some(v) = value {
            args.push(Value::Text(v.clone()));
            sql.push_str(&format!(" AND {column} = ?{}", args.len()));
        }
    }
    if let Some(seq) = f.before_seq {
        args.push(Value::Integer(seq));
        sql.push_str(&format!(" AND seq < ?{}", args.len()));
    }
    sql.push_str(&format!(" ORDER BY seq DESC LIMIT {}", f.limit + 1));
    let mut stmt = conn.prepare(&sql)?;
    let mut items: Vec<RunRecord> = stmt
        .query_map(params_from_iter(args), from_row)?
        .collect::<Result<_, _>>()?;
    let next = if items.len() > f.limit {
        items.truncate(f.limit);
        items.last().map(|r| r.seq)
    } else {
        None
    };
    Ok((items, next))
}

/// Marks runs left `running` by a previous process as failed; returns how many.
pub fn fail_interrupted_runs(conn: &Connection, now_ms: i64) -> Result<usize, StoreError> {
    Ok(conn.execute(
        "UPDATE runs SET status = 'failed', phase = 'done', finished_at = ?1,
             errors = '[{\"message\":\"interrupted: kerf stopped while this run was in progress\"}]'
         WHERE status = 'running'",
        [now_ms],
    )?)
}

/// Deletes finished runs started before `cutoff_ms`, keeping each cluster's latest run.
pub fn prune_runs(conn: &Connection, cutoff_ms: i64) -> Result<usize, StoreError> {
    Ok(conn.execute(
        "DELETE FROM runs WHERE started_at < ?1 AND status != 'running'
           AND seq NOT IN (SELECT MAX(seq) FROM runs GROUP BY cluster)",
        [cutoff_ms],
    )?)
}

/// Recommendations deleted per write by [`super::Store::prune_history`].
const HISTORY_BATCH: usize = 2000;

impl super::Store {
    /// See [`get_run`].
    pub async fn run(&self, id: String) -> Result<Option<RunRecord>, StoreError> {
        self.read(move |c| get_run(c, &id)).await
    }

    /// See [`list_runs`].
    pub async fn list_runs(
        &self,
        filter: RunFilter,
    ) -> Result<(Vec<RunRecord>, Option<i64>), StoreError> {
        self.read(move |c| list_runs(c, &filter)).await
    }

    /// See [`insert_run`].
    pub async fn insert_run(&self, run: RunRecord) -> Result<i64, StoreError> {
        self.write(move |c| insert_run(c, &run)).await
    }

    /// See [`update_run`].
    pub async fn update_run(&self, run: RunRecord) -> Result<(), StoreError> {
        self.write(move |c| update_run(c, &run)).await
    }

    /// Names of the clusters that are not retired, by name.
    pub async fn active_cluster_names(&self) -> Result<Vec<String>, StoreError> {
        self.read(|c| {
            Ok(super::list_clusters(c)?
                .into_iter()
                .filter(|c| c.retired_at.is_none())
                .map(|c| c.name)
                .collect())
        })
        .await
    }

    /// See [`fail_interrupted_runs`].
    pub async fn fail_interrupted_runs(&self, now_ms: i64) -> Result<usize, StoreError> {
        self.write(move |c| fail_interrupted_runs(c, now_ms)).await
    }

    /// See [`super::mark_absent_stale`].
    pub async fn mark_absent_stale(
        &self,
        cluster: String,
        run_id: String,
        reason: &'static str,
        now_ms: i64,
    ) -> Result<usize, StoreError> {
        self.write(move |c| super::mark_absent_stale(c, &cluster, &run_id, reason, now_ms))
            .await
    }

    /// Retention: deletes recommendations and runs older than `cutoff_ms`, always keeping
    /// each workload's latest recommendation and each cluster's latest run. Returns
    /// (recommendations, runs) deleted.
    pub async fn prune_history(&self, cutoff_ms: i64) -> Result<(usize, usize), StoreError> {
        // One short write per batch: other writers get the writer between batches.
        let mut recs = 0;
        loop {
            let n = self
                .write(move |c| super::prune_recommendations(c, cutoff_ms, HISTORY_BATCH))
                .await?;
            recs += n;
            if n < HISTORY_BATCH {
                break;
            }
            tokio::task::yield_now().await;
        }
        let runs = self.write(move |c| prune_runs(c, cutoff_ms)).await?;
        Ok((recs, runs))
    }
}
