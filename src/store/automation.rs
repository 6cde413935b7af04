//! The `automation_pauses` table: which scopes (a cluster name, or `*` for the fleet)
//! have automation paused, why, by whom and until when.

use rusqlite::{params, OptionalExtension};

use super::{Read, StoreError, Tx};

/// The scope key of a fleet-wide pause.
pub const FLEET_SCOPE: &str = "*";

/// A stored pause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PauseRecord {
    /// A cluster name, or [`FLEET_SCOPE`].
    pub scope: String,
    pub reason: String,
    pub paused_at: i64,
    /// The actor that paused, as JSON.
    pub paused_by: String,
    pub resume_at: Option<i64>,
}

fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<PauseRecord> {
    Ok(PauseRecord {
        scope: r.get(0)?,
        reason: r.get(1)?,
        paused_at: r.get(2)?,
        paused_by: r.get(3)?,
        resume_at: r.get(4)?,
    })
}

const COLUMNS: &str = "scope, reason, paused_at, paused_by, resume_at";

impl Read<'_> {
    /// The pause of `scope`, if any.
    pub fn pause(&self, scope: &str) -> Result<Option<PauseRecord>, StoreError> {
        Ok(self
            .0
            .query_row(
                &format!("SELECT {COLUMNS} FROM automation_pauses WHERE scope = ?1"),
                [scope],
                from_row,
            )
            .optional()?)
    }

    /// Every pause, by scope.
    pub fn pauses(&self) -> Result<Vec<PauseRecord>, StoreError> {
        let mut stmt = self.0.prepare(&format!(
            "SELECT {COLUMNS} FROM automation_pauses ORDER BY scope"
        ))?;
        let rows = stmt.query_map([], from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Pauses whose `resumeAt` is at or before `now`.
    pub fn due_pauses(&self, now: i64) -> Result<Vec<PauseRecord>, StoreError> {
        let mut stmt = self.0.prepare(&format!(
            "SELECT {COLUMNS} FROM automation_pauses
             WHERE resume_at IS NOT NULL AND resume_at <= ?1 ORDER BY scope"
        ))?;
        let rows = stmt.query_map([now], from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The earliest `resumeAt` of any pause (the ticker sleeps until it).
    pub fn next_resume_at(&self) -> Result<Option<i64>, StoreError> {
        Ok(self
            .0
            .query_row("SELECT MIN(resume_at) FROM automation_pauses", [], |r| {
                r.get(0)
            })?)
    }
}

impl Tx<'_> {
    /// Pauses `p.scope`, replacing any earlier pause of it; returns that earlier pause.
    pub fn put_pause(&self, p: &PauseRecord) -> Result<Option<PauseRecord>, StoreError> {
        let before = self.pause(&p.scope)?;
        self.tx.execute(
            "INSERT INTO automation_pauses (scope, reason, paused_at, paused_by, resume_at)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (scope) DO UPDATE SET reason = excluded.reason,
                 paused_at = excluded.paused_at, paused_by = excluded.paused_by,
                 resume_at = excluded.resume_at",
            params![p.scope, p.reason, p.paused_at, p.paused_by, p.resume_at],
        )?;
        Ok(before)
    }

    /// Resumes `scope`; returns the pause that ended, or `None` when it was not paused.
    pub fn delete_pause(&self, scope: &str) -> Result<Option<PauseRecord>, StoreError> {
        let before = self.pause(scope)?;
        self.tx
            .execute("DELETE FROM automation_pauses WHERE scope = ?1", [scope])?;
        Ok(before)
    }

    /// Ends the pause `expected` only if it is still exactly that pause and its
    /// `resumeAt` has come (compare-and-delete: a pause replaced meanwhile is left
    /// alone). False when it was replaced meanwhile.
    pub fn delete_due_pause(&self, expected: &PauseRecord, now: i64) -> Result<bool, StoreError> {
        let n = self.tx.execute(
            "DELETE FROM automation_pauses
             WHERE scope = ?1 AND paused_at = ?2 AND resume_at = ?3 AND resume_at <= ?4",
            params![expected.scope, expected.paused_at, expected.resume_at, now],
        )?;
        Ok(n == 1)
    }
}
