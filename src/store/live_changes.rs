//! The `live_changes` table: kerf's change on each workload that is still live (see
//! `runs::realized`, which folds events into it), and the one write that moves a
//! workload's available saving when a change lands after its latest recommendation.

use rusqlite::{params, OptionalExtension};

use super::{Read, StoreError, Tx};
use crate::wire::WorkloadKey;

/// A workload's live change.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveChange {
    pub workload_id: String,
    /// JSON `runs::realized::Chain`.
    pub chain: String,
    /// Its monthly saving, priced when the last event was folded in.
    pub realized_monthly: f64,
    pub applied_at: i64,
    pub event_id: String,
    pub reason: String,
    pub approved_by: Option<String>,
    pub strategy: String,
    pub recommendation_id: Option<String>,
    /// JSON `[{name, from, to}]` of the last applied event.
    pub containers: String,
    pub updated_at: i64,
}

/// The workload an event is about, as the fold needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct FoldTarget {
    pub workload_id: String,
    pub replicas: Option<i64>,
    /// When its latest recommendation was made (none yet: `None`).
    pub recommended_at: Option<i64>,
    /// Its live change's chain JSON, if any.
    pub chain: Option<String>,
}

const COLUMNS: &str = "l.workload_id, l.chain, l.applied_at, l.event_id, l.reason, \
    l.approved_by, l.strategy, l.recommendation_id, l.containers, l.updated_at, \
    l.realized_monthly";

fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<LiveChange> {
    Ok(LiveChange {
        workload_id: r.get(0)?,
        chain: r.get(1)?,
        applied_at: r.get(2)?,
        event_id: r.get(3)?,
        reason: r.get(4)?,
        approved_by: r.get(5)?,
        strategy: r.get(6)?,
        recommendation_id: r.get(7)?,
        containers: r.get(8)?,
        updated_at: r.get(9)?,
        realized_monthly: r.get(10)?,
    })
}

impl Read<'_> {
    /// The live change of workload `id`, if any.
    pub fn live_change(&self, id: &str) -> Result<Option<LiveChange>, StoreError> {
        Ok(self
            .0
            .query_row(
                &format!("SELECT {COLUMNS} FROM live_changes l WHERE l.workload_id = ?1"),
                [id],
                from_row,
            )
            .optional()?)
    }

    /// The live changes of the workloads `ids` (those that have one).
    pub fn live_changes_of(&self, ids: &[String]) -> Result<Vec<LiveChange>, StoreError> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let marks = vec!["?"; ids.len()].join(", ");
        let mut stmt = self.0.prepare(&format!(
            "SELECT {COLUMNS} FROM live_changes l WHERE l.workload_id IN ({marks})"
        ))?;
        let out = stmt
            .query_map(rusqlite::params_from_iter(ids), from_row)?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(out)
    }
}

impl Tx<'_> {
    /// The stored workload `key` of `cluster` is, for folding an event about it in;
    /// `None` when no run has seen it (there is nothing to show or price it by).
    pub fn fold_target(
        &self,
        cluster: &str,
        key: &WorkloadKey,
    ) -> Result<Option<FoldTarget>, StoreError> {
        Ok(self
            .tx
            .prepare_cached(
                "SELECT w.id, w.replicas, r.created_at, l.chain FROM workloads w
                 LEFT JOIN recommendations r ON r.id = w.latest_rec_id
                 LEFT JOIN live_changes l ON l.workload_id = w.id
                 WHERE w.cluster = ?1 AND w.namespace = ?2 AND w.kind = ?3 AND w.name = ?4",
            )?
            .query_row(params![cluster, key.namespace, key.kind, key.name], |r| {
                Ok(FoldTarget {
                    workload_id: r.get(0)?,
                    replicas: r.get(1)?,
                    recommended_at: r.get(2)?,
                    chain: r.get(3)?,
                })
            })
            .optional()?)
    }

    /// Stores a workload's live change (replacing the one it had).
    pub fn put_live_change(&self, c: &LiveChange) -> Result<(), StoreError> {
        self.tx
            .prepare_cached(
                "INSERT OR REPLACE INTO live_changes (workload_id, chain, applied_at, event_id,
                     reason, approved_by, strategy, recommendation_id, containers, updated_at,
                     realized_monthly)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            )?
            .execute(params![
                c.workload_id,
                c.chain,
                c.applied_at,
                c.event_id,
                c.reason,
                c.approved_by,
                c.strategy,
                c.recommendation_id,
                c.containers,
                c.updated_at,
                c.realized_monthly
            ])?;
        Ok(())
    }

    /// Keeps the chain of a workload's live change, its last applied event as it was
    /// (a rollback that leaves part of the change live).
    pub fn update_live_chain(
        &self,
        id: &str,
        chain: &str,
        realized_monthly: f64,
        at: i64,
    ) -> Result<(), StoreError> {
        self.tx
            .prepare_cached(
                "UPDATE live_changes SET chain = ?2, realized_monthly = ?3, updated_at = ?4
                 WHERE workload_id = ?1",
            )?
            .execute(params![id, chain, realized_monthly, at])?;
        Ok(())
    }

    /// Forgets a workload's live change (all of it was rolled back).
    pub fn delete_live_change(&self, id: &str) -> Result<(), StoreError> {
        self.tx
            .prepare_cached("DELETE FROM live_changes WHERE workload_id = ?1")?
            .execute([id])?;
        Ok(())
    }

    /// Moves workload `id`'s available saving by a change of `monthly` in the cost of
    /// its requests in force (its recommendation's cost delta falls by as much).
    pub fn shift_available(&self, id: &str, monthly: f64) -> Result<(), StoreError> {
        self.tx
            .prepare_cached(
                "UPDATE workloads SET cost_delta = cost_delta - ?2,
                     monthly_savings = monthly_savings + ?2
                 WHERE id = ?1 AND cost_delta IS NOT NULL",
            )?
            .execute(params![id, monthly])?;
        Ok(())
    }
}
