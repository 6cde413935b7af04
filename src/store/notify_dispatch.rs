//! The dispatcher's reading: new rows of the audit log and newly finished runs after its
//! stored cursors, and the one transaction that records the deliveries made from them
//! *and* moves the cursors, so a restart never loses a row nor records it twice. Also
//! the digest's slot bookkeeping (recorded once per channel and slot).

use rusqlite::{params, Connection, OptionalExtension};

use super::notify_deliveries::NewDelivery;
use super::{Read, StoreError, Tx};

/// Cursor over `audit_events.seq`.
pub const AUDIT_CURSOR: &str = "audit";
/// Cursor over `runs.seq`: every run at or below it has finished and been looked at.
pub const RUNS_CURSOR: &str = "runs";

/// One audit row as the dispatcher reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditRow {
    pub seq: i64,
    pub id: String,
    /// The row's type: an event type or `config_changed`.
    pub kind: String,
    /// The event reason or the configuration action.
    pub reason: String,
    pub cluster: Option<String>,
    pub namespace: Option<String>,
    pub time_ms: i64,
    pub received_at_ms: i64,
    /// The event JSON, or the configuration change record.
    pub payload: String,
}

/// One run as the dispatcher reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    pub seq: i64,
    pub id: String,
    pub cluster: String,
    pub status: String,
    pub trigger: String,
    pub started_at: i64,
    pub finished_at: Option<i64>,
    pub errors: String,
}

/// What one dispatcher pass hands back to the store.
#[derive(Debug, Clone, Default)]
pub struct DispatchBatch {
    pub deliveries: Vec<NewDelivery>,
    /// New audit cursor (the last row looked at), when rows were read.
    pub audit_to: Option<i64>,
    /// New runs cursor, when it moves.
    pub runs_to: Option<i64>,
}

/// The stored position of cursor `name` (0 when never stored).
fn cursor(conn: &Connection, name: &str) -> Result<i64, StoreError> {
    Ok(conn
        .query_row(
            "SELECT position FROM notification_cursors WHERE name = ?1",
            [name],
            |r| r.get(0),
        )
        .optional()?
        .unwrap_or(0))
}

fn set_cursor(conn: &Connection, name: &str, position: i64) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO notification_cursors (name, position) VALUES (?1, ?2)
         ON CONFLICT (name) DO UPDATE SET position = MAX(position, excluded.position)",
        params![name, position],
    )?;
    Ok(())
}

/// Audit rows after `seq`, oldest first, at most `limit`.
fn audit_after(conn: &Connection, seq: i64, limit: usize) -> Result<Vec<AuditRow>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT seq, id, type, reason, cluster, namespace, time_ms, received_at_ms, payload
         FROM audit_events WHERE seq > ?1 ORDER BY seq LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![seq, limit as i64], |r| {
        Ok(AuditRow {
            seq: r.get(0)?,
            id: r.get(1)?,
            kind: r.get(2)?,
            reason: r.get(3)?,
            cluster: r.get(4)?,
            namespace: r.get(5)?,
            time_ms: r.get(6)?,
            received_at_ms: r.get(7)?,
            payload: r.get(8)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Runs after `seq`, oldest first, at most `limit` (running ones included).
fn runs_after(conn: &Connection, seq: i64, limit: usize) -> Result<Vec<RunRow>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT seq, id, cluster, status, trigger, started_at, finished_at, errors
         FROM runs WHERE seq > ?1 ORDER BY seq LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![seq, limit as i64], |r| {
        Ok(RunRow {
            seq: r.get(0)?,
            id: r.get(1)?,
            cluster: r.get(2)?,
            status: r.get(3)?,
            trigger: r.get(4)?,
            started_at: r.get(5)?,
            finished_at: r.get(6)?,
            errors: r.get(7)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

impl Read<'_> {
    /// Both cursors: (audit, runs).
    pub fn notify_cursors(&self) -> Result<(i64, i64), StoreError> {
        Ok((cursor(self.0, AUDIT_CURSOR)?, cursor(self.0, RUNS_CURSOR)?))
    }

    /// Audit rows after `audit_seq` and runs after `runs_seq`, oldest first, at most
    /// `limit` of each (running runs included).
    pub fn notify_sources(
        &self,
        audit_seq: i64,
        runs_seq: i64,
        limit: usize,
    ) -> Result<(Vec<AuditRow>, Vec<RunRow>), StoreError> {
        Ok((
            audit_after(self.0, audit_seq, limit)?,
            runs_after(self.0, runs_seq, limit)?,
        ))
    }
}

impl Tx<'_> {
    /// Records the batch's deliveries and moves the cursors. Returns how many deliveries
    /// were new (dedupe keys seen before are skipped).
    pub fn commit_dispatch(&self, b: &DispatchBatch, now: i64) -> Result<usize, StoreError> {
        let mut added = 0;
        for d in &b.deliveries {
            added += usize::from(self.insert_delivery(d, now)?);
        }
        if let Some(p) = b.audit_to {
            set_cursor(self.tx, AUDIT_CURSOR, p)?;
        }
        if let Some(p) = b.runs_to {
            set_cursor(self.tx, RUNS_CURSOR, p)?;
        }
        Ok(added)
    }

    /// Records channel `channel_id`'s digest for `slot` unless a slot at or after it is
    /// already done, and marks the slot done. `false` when it was done.
    pub fn record_digest(
        &self,
        channel_id: i64,
        slot: i64,
        d: &NewDelivery,
        now: i64,
    ) -> Result<bool, StoreError> {
        let done: Option<Option<i64>> = self
            .tx
            .query_row(
                "SELECT digest_last_slot FROM notification_channels WHERE id = ?1",
                [channel_id],
                |r| r.get(0),
            )
            .optional()?;
        let fresh = matches!(done, Some(last) if last.is_none_or(|l| l < slot));
        if fresh {
            self.insert_delivery(d, now)?;
            self.tx.execute(
                "UPDATE notification_channels SET digest_last_slot = ?2 WHERE id = ?1",
                params![channel_id, slot],
            )?;
        }
        Ok(fresh)
    }
}
