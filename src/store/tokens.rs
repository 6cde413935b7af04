//! The `api_tokens` table: named API tokens with a fleet role, or a team role within one
//! team, stored as SHA-256 only.

use rusqlite::{params, Connection, OptionalExtension};

use super::{Read, StoreError, Tx};

/// An API token as stored (never the value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiTokenRecord {
    pub id: i64,
    pub name: String,
    /// A fleet role (`admin`, `editor`, `viewer`) or, with `team_id`, a team role.
    pub role: String,
    pub team_id: Option<i64>,
    pub team_name: Option<String>,
    pub created_by: Option<String>,
    pub created_at: i64,
    pub expires_at: Option<i64>,
    pub last_used_at: Option<i64>,
    pub revoked_at: Option<i64>,
}

/// A token to record.
pub struct NewApiToken<'a> {
    pub name: &'a str,
    pub role: &'a str,
    pub team_id: Option<i64>,
    pub created_by: Option<&'a str>,
    pub token_sha256: &'a str,
    pub expires_at: Option<i64>,
}

const SELECT: &str = "SELECT k.id, k.name, k.role, k.team_id, t.name, k.created_by, k.created_at,
        k.expires_at, k.last_used_at, k.revoked_at, k.token_sha256
     FROM api_tokens k LEFT JOIN teams t ON t.id = k.team_id";

fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ApiTokenRecord> {
    Ok(ApiTokenRecord {
        id: r.get(0)?,
        name: r.get(1)?,
        role: r.get(2)?,
        team_id: r.get(3)?,
        team_name: r.get(4)?,
        created_by: r.get(5)?,
        created_at: r.get(6)?,
        expires_at: r.get(7)?,
        last_used_at: r.get(8)?,
        revoked_at: r.get(9)?,
    })
}

/// Records a new token.
pub(in crate::store) fn insert_token(
    conn: &Connection,
    new: &NewApiToken<'_>,
    now: i64,
) -> Result<ApiTokenRecord, StoreError> {
    conn.execute(
        "INSERT INTO api_tokens (name, role, team_id, created_by, token_sha256, created_at,
                                 expires_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            new.name,
            new.role,
            new.team_id,
            new.created_by,
            new.token_sha256,
            now,
            new.expires_at
        ],
    )?;
    require_token(conn, conn.last_insert_rowid())
}

/// The token with `id`, or `NotFound`.
pub(in crate::store) fn require_token(
    conn: &Connection,
    id: i64,
) -> Result<ApiTokenRecord, StoreError> {
    conn.query_row(&format!("{SELECT} WHERE k.id = ?1"), [id], from_row)
        .optional()?
        .ok_or_else(|| StoreError::NotFound(format!("token {id}")))
}

/// Marks token `id` revoked (once; a second revoke keeps the first time).
pub(in crate::store) fn revoke_token(
    conn: &Connection,
    id: i64,
    now: i64,
) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE api_tokens SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL",
        params![id, now],
    )?;
    Ok(())
}

impl Read<'_> {
    /// Every token, newest first.
    pub fn list_tokens(&self) -> Result<Vec<ApiTokenRecord>, StoreError> {
        let mut stmt = self.0.prepare(&format!("{SELECT} ORDER BY k.id DESC"))?;
        let rows = stmt.query_map([], from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The token whose value hashes to `token_sha256`, with its stored hash, if any.
    pub fn token_by_hash(
        &self,
        token_sha256: &str,
    ) -> Result<Option<(ApiTokenRecord, String)>, StoreError> {
        Ok(self
            .0
            .query_row(
                &format!("{SELECT} WHERE k.token_sha256 = ?1"),
                [token_sha256],
                |r| Ok((from_row(r)?, r.get::<_, String>(10)?)),
            )
            .optional()?)
    }
}

impl Tx<'_> {
    /// Notes a use of a token; coarse (one write per minute per token at most).
    pub fn touch_token(&self, id: i64, now: i64) -> Result<(), StoreError> {
        self.tx.execute(
            "UPDATE api_tokens SET last_used_at = ?2
             WHERE id = ?1 AND (last_used_at IS NULL OR last_used_at < ?2 - 60000)",
            params![id, now],
        )?;
        Ok(())
    }
}

impl Tx<'_> {
    pub fn insert_token(
        &self,
        new: &NewApiToken<'_>,
        now: i64,
    ) -> Result<ApiTokenRecord, StoreError> {
        insert_token(self.tx, new, now)
    }

    pub fn revoke_token(&self, id: i64, now: i64) -> Result<(), StoreError> {
        revoke_token(self.tx, id, now)
    }
}

impl Read<'_> {
    pub fn require_token(&self, id: i64) -> Result<ApiTokenRecord, StoreError> {
        require_token(self.0, id)
    }
}
