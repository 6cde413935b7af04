//! The `clusters` table: registered clusters and the hash of each agent token.

use rusqlite::{params, Connection, OptionalExtension};

use super::{now_ms, StoreError};

/// A registered cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterRecord {
    pub id: i64,
    pub name: String,
    pub created_at: i64,
    pub retired_at: Option<i64>,
}

/// A cluster to register; the token hash is SHA-256 hex of the agent token.
pub struct NewCluster<'a> {
    pub name: &'a str,
    pub token_sha256: &'a str,
}

fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ClusterRecord> {
    Ok(ClusterRecord {
        id: r.get(0)?,
        name: r.get(1)?,
        created_at: r.get(2)?,
        retired_at: r.get(3)?,
    })
}

/// Registers a cluster. A taken name is a `Conflict`.
pub fn insert_cluster(
    conn: &Connection,
    new: &NewCluster<'_>,
) -> Result<ClusterRecord, StoreError> {
    let now = now_ms();
    let res = conn.execute(
        "INSERT INTO clusters (name, token_sha256, created_at) VALUES (?1, ?2, ?3)",
        params![new.name, new.token_sha256, now],
    );
    match res {
        Ok(_) => Ok(ClusterRecord {
            id: conn.last_insert_rowid(),
            name: new.name.to_string(),
            created_at: now,
            retired_at: None,
        }),
        Err(rusqlite::Error::SqliteFailure(e, _))
            if e.code == rusqlite::ErrorCode::ConstraintViolation =>
        {
            Err(StoreError::Conflict(format!("cluster {:?}", new.name)))
        }
        Err(e) => Err(e.into()),
    }
}

/// The active cluster whose agent token hashes to `token_sha256`, with the stored hash.
pub fn cluster_by_token(
    conn: &Connection,
    token_sha256: &str,
) -> Result<Option<(ClusterRecord, String)>, StoreError> {
    Ok(conn
        .query_row(
            "SELECT id, name, created_at, retired_at, token_sha256 FROM clusters
             WHERE token_sha256 = ?1 AND retired_at IS NULL",
            [token_sha256],
            |r| Ok((from_row(r)?, r.get::<_, String>(4)?)),
        )
        .optional()?)
}

/// Every cluster, by name.
pub fn list_clusters(conn: &Connection) -> Result<Vec<ClusterRecord>, StoreError> {
    let mut stmt =
        conn.prepare("SELECT id, name, created_at, retired_at FROM clusters ORDER BY name")?;
    let rows = stmt.query_map([], from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

impl super::Store {
    /// See [`cluster_by_token`].
    pub async fn cluster_by_token(
        &self,
        token_sha256: String,
    ) -> Result<Option<(ClusterRecord, String)>, StoreError> {
        self.read(move |c| cluster_by_token(c, &token_sha256)).await
    }
}
