//! The `settings` table: runtime settings users change through the API (recommender,
//! pricing), one JSON document per key. Boot config never lands here.

use rusqlite::{params, Connection, OptionalExtension};

use super::StoreError;

/// The stored document under `key`, if any.
pub fn get_setting(conn: &Connection, key: &str) -> Result<Option<String>, StoreError> {
    Ok(conn
        .query_row("SELECT value FROM settings WHERE key = ?1", [key], |r| {
            r.get(0)
        })
        .optional()?)
}

/// Replaces the document under `key` and returns the previous one. The caller gets
/// `before` so a `config_changed` audit row can be written in the same transaction once
/// config-change auditing lands (SEAM: config-audit).
pub fn put_setting(
    conn: &mut Connection,
    key: &str,
    value: &str,
    now_ms: i64,
) -> Result<Option<String>, StoreError> {
    let tx = conn.transaction()?;
    let before = get_setting(&tx, key)?;
    tx.execute(
        "INSERT INTO settings (key, value, updated_at) VALUES (?1, ?2, ?3)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
        params![key, value, now_ms],
    )?;
    // SEAM(config-audit): insert the ConfigChange row (before → value) here, inside `tx`.
    tx.commit()?;
    Ok(before)
}

impl super::Store {
    /// See [`get_setting`].
    pub async fn setting(&self, key: &'static str) -> Result<Option<String>, StoreError> {
        self.read(move |c| get_setting(c, key)).await
    }

    /// See [`put_setting`].
    pub async fn put_setting(
        &self,
        key: &'static str,
        value: String,
    ) -> Result<Option<String>, StoreError> {
        self.write(move |c| put_setting(c, key, &value, super::now_ms()))
            .await
    }
}
