//! The `sessions` table: one row per logged-in browser, keyed by the SHA-256 of the
//! session id (the id itself lives only in the user's cookie).

use rusqlite::{params, Connection, OptionalExtension};

use super::{Read, StoreError, Tx};

/// A session as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRecord {
    pub user_id: i64,
    pub csrf_token: String,
    pub created_at: i64,
    pub last_seen_at: i64,
    /// Absolute expiry, ms.
    pub expires_at: i64,
    /// When the identity provider last vouched for a single sign-on session (its
    /// tokens are kept beside it, `store::sso`); `None` for a password session. Written
    /// only by `Tx::set_session_sso`.
    pub sso_checked_at: Option<i64>,
}

/// Records a new session under the hash of its id.
pub(in crate::store) fn insert_session(
    conn: &Connection,
    id_sha256: &str,
    s: &SessionRecord,
) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO sessions (id_sha256, user_id, csrf_token, created_at, last_seen_at, expires_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![id_sha256, s.user_id, s.csrf_token, s.created_at, s.last_seen_at, s.expires_at],
    )?;
    Ok(())
}

/// Ends one session.
pub(in crate::store) fn delete_session(
    conn: &Connection,
    id_sha256: &str,
) -> Result<(), StoreError> {
    conn.execute("DELETE FROM sessions WHERE id_sha256 = ?1", [id_sha256])?;
    Ok(())
}

/// Ends every session of a user (password reset, disable).
pub(in crate::store) fn delete_user_sessions(
    conn: &Connection,
    user_id: i64,
) -> Result<(), StoreError> {
    conn.execute("DELETE FROM sessions WHERE user_id = ?1", [user_id])?;
    Ok(())
}

/// Drops sessions past their absolute expiry or idle for longer than `idle_ms`.
pub(in crate::store) fn purge_expired(
    conn: &Connection,
    now: i64,
    idle_ms: i64,
) -> Result<usize, StoreError> {
    Ok(conn.execute(
        "DELETE FROM sessions WHERE expires_at <= ?1 OR last_seen_at + ?2 <= ?1",
        params![now, idle_ms],
    )?)
}

impl Read<'_> {
    /// The session whose id hashes to `id_sha256`, if any.
    pub fn session_by_hash(&self, id_sha256: &str) -> Result<Option<SessionRecord>, StoreError> {
        Ok(self
            .0
            .query_row(
                "SELECT user_id, csrf_token, created_at, last_seen_at, expires_at, sso_checked_at
                 FROM sessions WHERE id_sha256 = ?1",
                [id_sha256],
                |r| {
                    Ok(SessionRecord {
                        user_id: r.get(0)?,
                        csrf_token: r.get(1)?,
                        created_at: r.get(2)?,
                        last_seen_at: r.get(3)?,
                        expires_at: r.get(4)?,
                        sso_checked_at: r.get(5)?,
                    })
                },
            )
            .optional()?)
    }
}

impl Tx<'_> {
    /// Notes activity on a session (extends its idle expiry).
    pub fn touch_session(&self, id_sha256: &str, now: i64) -> Result<(), StoreError> {
        self.tx.execute(
            "UPDATE sessions SET last_seen_at = ?2 WHERE id_sha256 = ?1",
            params![id_sha256, now],
        )?;
        Ok(())
    }
}

impl Tx<'_> {
    pub fn insert_session(&self, id_sha256: &str, s: &SessionRecord) -> Result<(), StoreError> {
        insert_session(self.tx, id_sha256, s)
    }

    pub fn delete_session(&self, id_sha256: &str) -> Result<(), StoreError> {
        delete_session(self.tx, id_sha256)
    }

    /// Sessions idle or past their lifetime at `now`.
    pub fn purge_expired_sessions(&self, now: i64, idle_ms: i64) -> Result<usize, StoreError> {
        purge_expired(self.tx, now, idle_ms)
    }
}
