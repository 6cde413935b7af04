//! The `workloads` table: every workload seen by a run, stable across runs, with the
//! denormalized columns of its latest recommendation that lists filter and sort on
//! (`workload_list`).

use rusqlite::{params, OptionalExtension};

use super::{Read, StoreError, Tx};

/// A workload as one run saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadSeen {
    pub id: String,
    pub cluster: String,
    pub namespace: String,
    pub kind: String,
    pub name: String,
    pub uid: String,
    pub replicas: Option<i64>,
    /// JSON object.
    pub labels: String,
    /// JSON array: per container requests/limits in force.
    pub current: String,
}

/// A stored workload.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadRow {
    pub seen: WorkloadSeen,
    pub first_seen_at: i64,
    pub last_seen_at: i64,
    pub last_run_id: String,
    pub stale: bool,
    pub stale_reason: Option<String>,
    pub stale_since: Option<i64>,
    pub latest_rec_id: Option<String>,
    pub has_changes: bool,
    pub data_quality: Option<String>,
    /// `,a,b,` (empty when none).
    pub notices: String,
    /// Lowest recommendation confidence; -1 when none.
    pub confidence: i64,
    pub cost_delta: Option<f64>,
    /// The signed monthly saving (−cost delta, 0 when unknown): the savings sort key.
    pub monthly_savings: f64,
    /// What the latest recommendation protects against: 3 OOM kill, 2 potential memory
    /// leak, 1 requests raised, 0 none (`runs::summary::risk`).
    pub risk: i64,
}

pub(super) const COLUMNS: &str = "w.id, w.cluster, w.namespace, w.kind, w.name, w.uid, \
    w.replicas, w.labels, w.current, w.first_seen_at, w.last_seen_at, w.last_run_id, w.stale, \
    w.stale_reason, w.stale_since, w.latest_rec_id, w.has_changes, w.data_quality, w.notices, \
    w.confidence, w.cost_delta, w.monthly_savings, w.risk";

/// How many [`COLUMNS`] there are.
pub(super) const COLUMN_COUNT: usize = 23;

/// Reads the [`COLUMNS`] starting at `at`.
pub(super) fn from_row_at(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<WorkloadRow> {
    Ok(WorkloadRow {
        seen: WorkloadSeen {
            id: r.get(at)?,
            cluster: r.get(at + 1)?,
            namespace: r.get(at + 2)?,
            kind: r.get(at + 3)?,
            name: r.get(at + 4)?,
            uid: r.get(at + 5)?,
            replicas: r.get(at + 6)?,
            labels: r.get(at + 7)?,
            current: r.get(at + 8)?,
        },
        first_seen_at: r.get(at + 9)?,
        last_seen_at: r.get(at + 10)?,
        last_run_id: r.get(at + 11)?,
        stale: r.get(at + 12)?,
        stale_reason: r.get(at + 13)?,
        stale_since: r.get(at + 14)?,
        latest_rec_id: r.get(at + 15)?,
        has_changes: r.get(at + 16)?,
        data_quality: r.get(at + 17)?,
        notices: r.get(at + 18)?,
        confidence: r.get(at + 19)?,
        cost_delta: r.get(at + 20)?,
        monthly_savings: r.get(at + 21)?,
        risk: r.get(at + 22)?,
    })
}

impl Read<'_> {
    /// One workload by id.
    pub fn workload(&self, id: &str) -> Result<Option<WorkloadRow>, StoreError> {
        Ok(self
            .0
            .query_row(
                &format!("SELECT {COLUMNS} FROM workloads w WHERE w.id = ?1"),
                [id],
                |r| from_row_at(r, 0),
            )
            .optional()?)
    }
}

impl Tx<'_> {
    /// Inserts or refreshes a workload seen by run `run_id` at `now_ms`.
    pub(super) fn upsert_seen(
        &self,
        w: &WorkloadSeen,
        run_id: &str,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        self.tx.execute(
            "INSERT INTO workloads (id, cluster, namespace, kind, name, uid, replicas, labels,
                 current, first_seen_at, last_seen_at, last_run_id)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10, ?11)
             ON CONFLICT (id) DO UPDATE SET uid = excluded.uid, replicas = excluded.replicas,
                 labels = excluded.labels, current = excluded.current,
                 last_seen_at = excluded.last_seen_at, last_run_id = excluded.last_run_id",
            params![
                w.id,
                w.cluster,
                w.namespace,
                w.kind,
                w.name,
                w.uid,
                w.replicas,
                w.labels,
                w.current,
                now_ms,
                run_id
            ],
        )?;
        Ok(())
    }

    /// Marks a workload stale (keeping its latest recommendation); `stale_since` keeps
    /// the first time it went stale.
    pub(super) fn mark_stale(
        &self,
        workload_id: &str,
        reason: &str,
        now_ms: i64,
    ) -> Result<(), StoreError> {
        self.tx.execute(
            "UPDATE workloads SET stale = 1, stale_reason = ?2,
                 stale_since = COALESCE(stale_since, ?3) WHERE id = ?1",
            params![workload_id, reason, now_ms],
        )?;
        Ok(())
    }

    /// Marks stale every workload of `cluster` that run `run_id` did not see; returns
    /// how many went stale now.
    pub fn mark_absent_stale(
        &self,
        cluster: &str,
        run_id: &str,
        reason: &str,
        now_ms: i64,
    ) -> Result<usize, StoreError> {
        Ok(self.tx.execute(
            "UPDATE workloads SET stale = 1, stale_reason = ?3, stale_since = ?4
             WHERE cluster = ?1 AND last_run_id != ?2 AND stale = 0",
            params![cluster, run_id, reason, now_ms],
        )?)
    }

    /// Forgets up to `batch` workloads stale for `reason` (no run has seen them) since
    /// before `cutoff_ms`: the workload, its recommendations and approvals, and its live
    /// change. Its override stays (configuration, audited on its own, and back in force
    /// if the workload returns). Returns how many were forgotten.
    pub fn forget_gone_workloads(
        &self,
        cutoff_ms: i64,
        reason: &str,
        batch: usize,
    ) -> Result<usize, StoreError> {
        let ids: Vec<String> = self
            .tx
            .prepare(
                "SELECT id FROM workloads WHERE stale = 1 AND stale_reason = ?2
                   AND stale_since < ?1 ORDER BY id LIMIT ?3",
            )?
            .query_map(params![cutoff_ms, reason, batch as i64], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        for id in &ids {
            self.tx
                .execute("DELETE FROM approvals WHERE workload_id = ?1", [id])?;
            self.tx
                .execute("DELETE FROM recommendations WHERE workload_id = ?1", [id])?;
            self.tx
                .execute("DELETE FROM workloads WHERE id = ?1", [id])?;
        }
        Ok(ids.len())
    }
}
