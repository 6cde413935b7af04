//! Retention of the audit log: rows older than a cutoff (by arrival) are deleted in
//! small batches, each its own short write, so pruning never holds the single writer
//! for long; every pruned workload event is tallied by (cluster, type, reason) so
//! `kerf_actions_total` still counts it after a restart. The export reads what
//! retention would prune, oldest first, a page at a time.

use rusqlite::params;

use super::{Read, StoreError, Tx};
use crate::events::wellknown::CONFIG_CHANGED;

/// Which rows of the audit log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuditRows {
    /// Workload events from agents.
    Events,
    /// The hub's own configuration changes (`config_changed`).
    ConfigChanges,
}

/// One row of an export, oldest first.
#[derive(Debug, Clone)]
pub struct ExportRow {
    pub seq: i64,
    pub config_change: bool,
    pub cluster: Option<String>,
    pub received_at_ms: i64,
    /// The stored JSON: the event as sent, or the configuration change record.
    pub payload: String,
}

impl Tx<'_> {
    /// Deletes at most `batch` rows of `rows` that arrived before `cutoff_ms`; returns
    /// how many. Each batch is meant as its own short write: call until it returns less
    /// than `batch`.
    pub fn prune_audit_batch(
        &self,
        rows: AuditRows,
        cutoff_ms: i64,
        batch: usize,
    ) -> Result<usize, StoreError> {
        let op = match rows {
            AuditRows::Events => "!=",
            AuditRows::ConfigChanges => "=",
        };
        // The batch is the oldest rows up to a sequence number; every row up to it that
        // is past the cutoff goes (rows arrive in sequence, so that is the batch).
        let last = format!(
            "SELECT MAX(seq) FROM (SELECT seq FROM audit_events
             WHERE received_at_ms < ?1 AND type {op} ?2 ORDER BY received_at_ms LIMIT ?3)"
        );
        let chosen = format!("seq <= ?1 AND received_at_ms < ?2 AND type {op} ?3");
        let max: Option<i64> = self.tx.query_row(
            &last,
            params![cutoff_ms, CONFIG_CHANGED, batch as i64],
            |r| r.get(0),
        )?;
        let Some(max) = max else { return Ok(0) };
        if rows == AuditRows::Events {
            self.tx.execute(
                &format!(
                    "INSERT INTO audit_pruned_counts (cluster, type, reason, n)
                     SELECT cluster, type, reason, COUNT(*) FROM audit_events
                     WHERE {chosen} AND cluster IS NOT NULL
                     GROUP BY cluster, type, reason
                     ON CONFLICT (cluster, type, reason) DO UPDATE SET n = n + excluded.n"
                ),
                params![max, cutoff_ms, CONFIG_CHANGED],
            )?;
        }
        Ok(self.tx.execute(
            &format!("DELETE FROM audit_events WHERE {chosen}"),
            params![max, cutoff_ms, CONFIG_CHANGED],
        )?)
    }
}

impl Read<'_> {
    /// Up to `limit` rows that arrived before `until_ms`, after the position `after`
    /// (arrival ms, seq) of the previous page, oldest first.
    pub fn audit_export_page(
        &self,
        until_ms: i64,
        after: Option<(i64, i64)>,
        limit: usize,
    ) -> Result<Vec<ExportRow>, StoreError> {
        let (after_ms, after_seq) = after.unwrap_or((i64::MIN, i64::MIN));
        let mut stmt = self.0.prepare_cached(
            "SELECT seq, type, cluster, received_at_ms, payload FROM audit_events
             WHERE received_at_ms < ?1 AND (received_at_ms, seq) > (?2, ?3)
             ORDER BY received_at_ms, seq LIMIT ?4",
        )?;
        let rows = stmt.query_map(params![until_ms, after_ms, after_seq, limit as i64], |r| {
            Ok(ExportRow {
                seq: r.get(0)?,
                config_change: r.get::<_, String>(1)? == CONFIG_CHANGED,
                cluster: r.get(2)?,
                received_at_ms: r.get(3)?,
                payload: r.get(4)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
