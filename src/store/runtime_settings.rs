//! The `settings` table: runtime settings users change through the API (recommender,
//! pricing), one JSON document per key. Boot config never lands here.

use rusqlite::{params, Connection, OptionalExtension};

use super::{Read, StoreError, Tx};

/// Replaces the document under `key` and returns the previous one. Call it inside the
/// transaction that records the `SettingsUpdated` audit row (`Store::write_audited`).
pub(in crate::store) fn replace_setting(
    conn: &Connection,
    key: &str,
    value: &str,
    now_ms: i64,
) -> Result<Option<String>, StoreError> {
    let before = Read(conn).setting(key)?;
    conn.execute(
        "INSERT INTO settings (key, value, updated_at) VALUES (?1, ?2, ?3)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
        params![key, value, now_ms],
    )?;
    Ok(before)
}

impl Read<'_> {
    /// The stored document under `key`, if any.
    pub fn setting(&self, key: &str) -> Result<Option<String>, StoreError> {
        Ok(self
            .0
            .query_row("SELECT value FROM settings WHERE key = ?1", [key], |r| {
                r.get(0)
            })
            .optional()?)
    }
}

impl Tx<'_> {
    /// The previous document under `key`, if any.
    pub fn replace_setting(
        &self,
        key: &str,
        value: &str,
        now: i64,
    ) -> Result<Option<String>, StoreError> {
        replace_setting(self.tx, key, value, now)
    }
}
