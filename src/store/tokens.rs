//! The `api_tokens` table: named API tokens with a role, stored as SHA-256 only.

use rusqlite::{params, Connection, OptionalExtension};

use super::{now_ms, StoreError};

/// An API token as stored (never the value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiTokenRecord {
    pub id: i64,
    pub name: String,
    pub role: String,
    pub created_at: i64,
    pub expires_at: Option<i64>,
    pub last_used_at: Option<i64>,
    pub revoked_at: Option<i64>,
}

/// A token to record.
pub struct NewApiToken<'a> {
    pub name: &'a str,
    pub role: &'a str,
    pub token_sha256: &'a str,
    pub expires_at: Option<i64>,
}

/// Records a new token.
pub fn insert_token(
    conn: &Connection,
    new: &NewApiToken<'_>,
) -> Result<ApiTokenRecord, StoreError> {
    let now = now_ms();
    conn.execute(
        "INSERT INTO api_tokens (name, role, token_sha256, created_at, expires_at)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![new.name, new.role, new.token_sha256, now, new.expires_at],
    )?;
    Ok(ApiTokenRecord {
        id: conn.last_insert_rowid(),
        name: new.name.to_string(),
        role: new.role.to_string(),
        created_at: now,
        expires_at: new.expires_at,
        last_used_at: None,
        revoked_at: None,
    })
}

/// The token whose value hashes to `token_sha256`, with its stored hash, if any.
pub fn token_by_hash(
    conn: &Connection,
    token_sha256: &str,
) -> Result<Option<(ApiTokenRecord, String)>, StoreError> {
    Ok(conn
        .query_row(
            "SELECT id, name, role, created_at, expires_at, last_used_at, revoked_at, token_sha256
             FROM api_tokens WHERE token_sha256 = ?1",
            [token_sha256],
            |r| {
                Ok((
                    ApiTokenRecord {
                        id: r.get(0)?,
                        name: r.get(1)?,
                        role: r.get(2)?,
                        created_at: r.get(3)?,
                        expires_at: r.get(4)?,
                        last_used_at: r.get(5)?,
                        revoked_at: r.get(6)?,
                    },
                    r.get::<_, String>(7)?,
                ))
            },
        )
        .optional()?)
}

/// Notes a use of a token; coarse (one write per minute per token at most).
pub fn touch_token(conn: &Connection, id: i64, now: i64) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE api_tokens SET last_used_at = ?2
         WHERE id = ?1 AND (last_used_at IS NULL OR last_used_at < ?2 - 60000)",
        params![id, now],
    )?;
    Ok(())
}

impl super::Store {
    /// See [`token_by_hash`].
    pub async fn token_by_hash(
        &self,
        token_sha256: String,
    ) -> Result<Option<(ApiTokenRecord, String)>, StoreError> {
        self.read(move |c| token_by_hash(c, &token_sha256)).await
    }

    /// See [`touch_token`].
    pub async fn touch_token(&self, id: i64) -> Result<(), StoreError> {
        self.write(move |c| touch_token(c, id, now_ms())).await
    }
}
