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

/// Replaces the document under `key` and returns the previous one. Call it inside the
/// transaction that records the `SettingsUpdated` audit row (`Store::write_audited`).
pub fn replace_setting(
    conn: &Connection,
    key: &str,
    value: &str,
    now_ms: i64,
) -> Result<Option<String>, StoreError> {
    let before = get_setting(conn, key)?;
    conn.execute(
        "INSERT INTO settings (key, value, updated_at) VALUES (?1, ?2, ?3)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
        params![key, value, now_ms],
    )?;
    Ok(before)
}

/// [`replace_setting`] in its own transaction, unaudited: for offline setup such as
/// `kerf demo` preparing its data dir.
pub fn put_setting(
    conn: &mut Connection,
    key: &str,
    value: &str,
    now_ms: i64,
) -> Result<Option<String>, StoreError> {
    let tx = conn.transaction()?;
    let before = replace_setting(&tx, key, value, now_ms)?;
    tx.commit()?;
    Ok(before)
}

impl super::Store {
    /// See [`get_setting`].
    pub async fn setting(&self, key: &'static str) -> Result<Option<String>, StoreError> {
        self.read(move |c| get_setting(c, key)).await
    }
}
