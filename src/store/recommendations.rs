//! The `recommendations` table: one row per workload per run, the engine's output kept
//! whole in one compact JSON column, plus the cluster feed, savings totals and pruning.

use rusqlite::{params, OptionalExtension};

use super::workloads::{from_row_at, WorkloadRow, WorkloadSeen, COLUMNS, COLUMN_COUNT};
use super::{Page, Read, StoreError, Tx};

/// A recommendation to store, with the workload columns it refreshes.
#[derive(Debug, Clone, PartialEq)]
pub struct NewRecommendation {
    pub id: String,
    pub workload_id: String,
    pub run_id: String,
    pub created_at: i64,
    pub policy_version: String,
    pub settings_identity: String,
    pub cost_delta: Option<f64>,
    /// Small JSON: values per container × resource.
    pub summary: String,
    /// The engine's results for the workload (compact JSON).
    pub analysis: String,
    pub has_changes: bool,
    pub data_quality: String,
    /// `,a,b,` (empty when none).
    pub notices: String,
    pub confidence: i64,
    /// What the recommendation protects against (see [`WorkloadRow::risk`]).
    pub risk: i64,
    /// The workload's change tolerance (a fraction): a pending approval of the
    /// recommendation this one supersedes carries over when no value moves further.
    pub change_tolerance: f64,
}

/// A stored recommendation; `analysis` is empty unless asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct RecommendationRow {
    pub seq: i64,
    pub id: String,
    pub workload_id: String,
    pub run_id: String,
    pub created_at: i64,
    pub policy_version: String,
    pub settings_identity: String,
    pub cost_delta: Option<f64>,
    pub summary: String,
    pub analysis: String,
}

/// What one chunk of a run writes, in one transaction.
#[derive(Debug, Default)]
pub struct ChunkWrite {
    pub run_id: String,
    pub now_ms: i64,
    /// Analyzed workloads and their new recommendation.
    pub analyzed: Vec<(WorkloadSeen, NewRecommendation)>,
    /// Workloads that could not be analyzed, with why (they keep their last one).
    pub failed: Vec<(WorkloadSeen, String)>,
}

/// Per-cluster savings over the latest recommendations.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterSavings {
    pub cluster: String,
    /// Sum of negative deltas, as a positive amount.
    pub savings: f64,
    /// Sum of positive deltas.
    pub extra_spend: f64,
    pub workloads: i64,
    /// Workloads whose latest recommendation has no cost estimate.
    pub unknown: i64,
}

const REC_COLUMNS: &str = "r.seq, r.id, r.workload_id, r.run_id, r.created_at, \
    r.policy_version, r.settings_identity, r.cost_delta, r.summary";

fn rec_from_row(
    r: &rusqlite::Row<'_>,
    at: usize,
    analysis: bool,
) -> rusqlite::Result<RecommendationRow> {
    Ok(RecommendationRow {
        seq: r.get(at)?,
        id: r.get(at + 1)?,
        workload_id: r.get(at + 2)?,
        run_id: r.get(at + 3)?,
        created_at: r.get(at + 4)?,
        policy_version: r.get(at + 5)?,
        settings_identity: r.get(at + 6)?,
        cost_delta: r.get(at + 7)?,
        summary: r.get(at + 8)?,
        analysis: if analysis {
            r.get(at + 9)?
        } else {
            String::new()
        },
    })
}

impl Read<'_> {
    /// One recommendation with its analysis.
    pub fn recommendation(&self, id: &str) -> Result<Option<RecommendationRow>, StoreError> {
        Ok(self
            .0
            .query_row(
                &format!("SELECT {REC_COLUMNS}, r.analysis FROM recommendations r WHERE r.id = ?1"),
                [id],
                |r| rec_from_row(r, 0, true),
            )
            .optional()?)
    }

    /// A workload's recommendations, newest first, before `before_seq`; with the
    /// analysis when `analysis`. The next page continues below the last `seq`.
    pub fn list_recommendations(
        &self,
        workload_id: &str,
        before_seq: Option<i64>,
        limit: usize,
        analysis: bool,
    ) -> Result<Page<RecommendationRow>, StoreError> {
        let extra = if analysis { ", r.analysis" } else { "" };
        let mut stmt = self.0.prepare(&format!(
            "SELECT {REC_COLUMNS}{extra} FROM recommendations r
             WHERE r.workload_id = ?1 AND r.seq < ?2 ORDER BY r.seq DESC LIMIT ?3"
        ))?;
        let rows: Vec<RecommendationRow> = stmt
            .query_map(
                params![
                    workload_id,
                    before_seq.unwrap_or(i64::MAX),
                    limit as i64 + 1
                ],
                |r| rec_from_row(r, 0, analysis),
            )?
            .collect::<Result<_, _>>()?;
        Ok(Page::of_probe(rows, limit, |r| r.seq))
    }

    /// The agent feed: each workload of `cluster` (by id, after `after_id`) with its
    /// latest recommendation. The next page continues after the last workload id.
    pub fn cluster_feed(
        &self,
        cluster: &str,
        after_id: &str,
        limit: usize,
    ) -> Result<Page<(WorkloadRow, RecommendationRow), String>, StoreError> {
        let mut stmt = self.0.prepare(&format!(
            "SELECT {COLUMNS}, {REC_COLUMNS} FROM workloads w
             JOIN recommendations r ON r.id = w.latest_rec_id
             WHERE w.cluster = ?1 AND w.id > ?2 ORDER BY w.id LIMIT ?3"
        ))?;
        let rows: Vec<(WorkloadRow, RecommendationRow)> = stmt
            .query_map(params![cluster, after_id, limit as i64 + 1], |r| {
                Ok((from_row_at(r, 0)?, rec_from_row(r, COLUMN_COUNT, false)?))
            })?
            .collect::<Result<_, _>>()?;
        Ok(Page::of_probe(rows, limit, |(w, _)| w.seen.id.clone()))
    }

    /// Workload `id` of `cluster` with its latest recommendation, as the feed reads it
    /// (`None` when there is no such workload or it has no recommendation).
    pub fn cluster_feed_entry(
        &self,
        cluster: &str,
        id: &str,
    ) -> Result<Option<(WorkloadRow, RecommendationRow)>, StoreError> {
        Ok(self
            .0
            .query_row(
                &format!(
                    "SELECT {COLUMNS}, {REC_COLUMNS} FROM workloads w
                     JOIN recommendations r ON r.id = w.latest_rec_id
                     WHERE w.cluster = ?1 AND w.id = ?2"
                ),
                params![cluster, id],
                |r| Ok((from_row_at(r, 0)?, rec_from_row(r, COLUMN_COUNT, false)?)),
            )
            .optional()?)
    }

    /// Savings and extra spend of the latest recommendations, per cluster.
    pub fn savings_by_cluster(&self) -> Result<Vec<ClusterSavings>, StoreError> {
        let mut stmt = self.0.prepare(
            "SELECT cluster,
                 COALESCE(SUM(CASE WHEN cost_delta < 0 THEN -cost_delta ELSE 0 END), 0),
                 COALESCE(SUM(CASE WHEN cost_delta > 0 THEN cost_delta ELSE 0 END), 0),
                 COUNT(*),
                 SUM(CASE WHEN cost_delta IS NULL THEN 1 ELSE 0 END)
             FROM workloads WHERE latest_rec_id IS NOT NULL GROUP BY cluster ORDER BY cluster",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(ClusterSavings {
                cluster: r.get(0)?,
                savings: r.get(1)?,
                extra_spend: r.get(2)?,
                workloads: r.get(3)?,
                unknown: r.get(4)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

impl Tx<'_> {
    /// Stores one chunk: upserts workloads, inserts recommendations, marks failures
    /// stale.
    pub fn write_chunk(&self, chunk: &ChunkWrite) -> Result<(), StoreError> {
        for (w, rec) in &chunk.analyzed {
            self.upsert_seen(w, &chunk.run_id, chunk.now_ms)?;
            self.carry_or_lapse_approval(rec, chunk.now_ms)?;
            self.tx.execute(
                "INSERT INTO recommendations (id, workload_id, run_id, created_at, policy_version,
                     settings_identity, cost_delta, summary, analysis)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![
                    rec.id,
                    rec.workload_id,
                    rec.run_id,
                    rec.created_at,
                    rec.policy_version,
                    rec.settings_identity,
                    rec.cost_delta,
                    rec.summary,
                    rec.analysis
                ],
            )?;
            self.tx.execute(
                "UPDATE workloads SET stale = 0, stale_reason = NULL, stale_since = NULL,
                     latest_rec_id = ?2, has_changes = ?3, data_quality = ?4, notices = ?5,
                     confidence = ?6, cost_delta = ?7, monthly_savings = ?8, risk = ?9
                 WHERE id = ?1",
                params![
                    rec.workload_id,
                    rec.id,
                    rec.has_changes,
                    rec.data_quality,
                    rec.notices,
                    rec.confidence,
                    rec.cost_delta,
                    -rec.cost_delta.unwrap_or(0.0),
                    rec.risk,
                ],
            )?;
        }
        for (w, why) in &chunk.failed {
            self.upsert_seen(w, &chunk.run_id, chunk.now_ms)?;
            self.mark_stale(&w.id, why, chunk.now_ms)?;
        }
        Ok(())
    }

    /// Deletes at most `batch` recommendations created before `cutoff_ms`, never a
    /// workload's latest; returns how many. Callers repeat it, one write per batch, so
    /// the writer is never held long.
    pub fn prune_recommendations(&self, cutoff_ms: i64, batch: usize) -> Result<usize, StoreError> {
        Ok(self.tx.execute(
            "DELETE FROM recommendations WHERE seq IN (
                 SELECT r.seq FROM recommendations r WHERE r.created_at < ?1
                   AND NOT EXISTS (SELECT 1 FROM workloads w WHERE w.latest_rec_id = r.id)
                 LIMIT ?2)",
            params![cutoff_ms, batch as i64],
        )?)
    }
}
