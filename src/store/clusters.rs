//! The `clusters` table: registered clusters, their metadata, the cluster-wide freeze and
//! the hash of each agent token. Retiring is soft: the row stays for the audit trail.

use std::collections::BTreeMap;

use rusqlite::{params, OptionalExtension};

use super::{Read, StoreError, Tx};

/// The cluster-wide freeze as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FreezeRecord {
    pub reason: String,
    pub since: i64,
    pub until: Option<i64>,
}

/// A registered cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterRecord {
    pub id: i64,
    pub name: String,
    pub created_at: i64,
    pub retired_at: Option<i64>,
    pub display_name: String,
    pub description: String,
    pub labels: BTreeMap<String, String>,
    pub updated_at: Option<i64>,
    pub token_rotated_at: Option<i64>,
    pub freeze: Option<FreezeRecord>,
}

/// A cluster to register; the token hash is SHA-256 hex of the agent token.
pub struct NewCluster<'a> {
    pub name: &'a str,
    pub token_sha256: &'a str,
}

/// The metadata a cluster is registered with (empty by default).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClusterMeta {
    pub display_name: String,
    pub description: String,
    pub labels: BTreeMap<String, String>,
}

/// Metadata fields of a PATCH; `None` keeps the stored value.
#[derive(Debug, Clone, Default)]
pub struct ClusterPatch {
    pub display_name: Option<String>,
    pub description: Option<String>,
    pub labels: Option<BTreeMap<String, String>>,
}

const COLUMNS: &str = "id, name, created_at, retired_at, display_name, description, labels, \
    updated_at, token_rotated_at, frozen, freeze_reason, frozen_at, freeze_until";

fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ClusterRecord> {
    let labels: String = r.get(6)?;
    let frozen: bool = r.get(9)?;
    let freeze = if frozen {
        Some(FreezeRecord {
            reason: r.get::<_, Option<String>>(10)?.unwrap_or_default(),
            since: r.get::<_, Option<i64>>(11)?.unwrap_or(0),
            until: r.get(12)?,
        })
    } else {
        None
    };
    Ok(ClusterRecord {
        id: r.get(0)?,
        name: r.get(1)?,
        created_at: r.get(2)?,
        retired_at: r.get(3)?,
        display_name: r.get(4)?,
        description: r.get(5)?,
        labels: serde_json::from_str(&labels).unwrap_or_default(),
        updated_at: r.get(7)?,
        token_rotated_at: r.get(8)?,
        freeze,
    })
}

fn labels_json(labels: &BTreeMap<String, String>) -> String {
    serde_json::to_string(labels).unwrap_or_else(|_| "{}".into())
}

impl Read<'_> {
    /// The cluster named `name`, retired or not.
    pub fn get_cluster(&self, name: &str) -> Result<Option<ClusterRecord>, StoreError> {
        Ok(self
            .0
            .query_row(
                &format!("SELECT {COLUMNS} FROM clusters WHERE name = ?1"),
                [name],
                from_row,
            )
            .optional()?)
    }

    /// The active cluster named `name`: `NotFound` when unknown, `Refused` when retired.
    pub fn active_cluster(&self, name: &str) -> Result<ClusterRecord, StoreError> {
        match self.get_cluster(name)? {
            None => Err(StoreError::NotFound(format!("cluster {name:?}"))),
            Some(c) if c.retired_at.is_some() => Err(StoreError::Refused(format!(
                "cluster {name:?} is retired; its record is kept for the audit trail only"
            ))),
            Some(c) => Ok(c),
        }
    }

    /// The active cluster whose agent token hashes to `token_sha256`, with the stored
    /// hash.
    pub fn cluster_by_token(
        &self,
        token_sha256: &str,
    ) -> Result<Option<(ClusterRecord, String)>, StoreError> {
        Ok(self
            .0
            .query_row(
                &format!(
                    "SELECT {COLUMNS}, token_sha256 FROM clusters
                     WHERE token_sha256 = ?1 AND retired_at IS NULL"
                ),
                [token_sha256],
                |r| Ok((from_row(r)?, r.get::<_, String>(13)?)),
            )
            .optional()?)
    }

    /// Every cluster, by name.
    pub fn list_clusters(&self) -> Result<Vec<ClusterRecord>, StoreError> {
        let mut stmt = self
            .0
            .prepare(&format!("SELECT {COLUMNS} FROM clusters ORDER BY name"))?;
        let rows = stmt.query_map([], from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Names of the clusters that are not retired, by name.
    pub fn active_cluster_names(&self) -> Result<Vec<String>, StoreError> {
        Ok(self
            .list_clusters()?
            .into_iter()
            .filter(|c| c.retired_at.is_none())
            .map(|c| c.name)
            .collect())
    }
}

impl Tx<'_> {
    /// Registers a cluster, starting `not-ready` (no heartbeat yet). A taken name,
    /// retired clusters included, is a `Conflict`.
    pub fn insert_cluster(
        &self,
        new: &NewCluster<'_>,
        meta: &ClusterMeta,
        now: i64,
    ) -> Result<ClusterRecord, StoreError> {
        let res = self.tx.execute(
            "INSERT INTO clusters (name, token_sha256, created_at, display_name, description, labels)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                new.name,
                new.token_sha256,
                now,
                meta.display_name,
                meta.description,
                labels_json(&meta.labels)
            ],
        );
        match res {
            Ok(_) => {}
            Err(e) if super::is_unique_violation(&e) => {
                return Err(StoreError::Conflict(format!("cluster {:?}", new.name)))
            }
            Err(e) => return Err(e.into()),
        }
        let id = self.tx.last_insert_rowid();
        self.insert_initial_readiness(id, now)?;
        self.get_cluster(new.name)?
            .ok_or_else(|| StoreError::NotFound(format!("cluster {id}")))
    }

    /// Applies `patch` to an active cluster; returns (before, after).
    pub fn update_cluster(
        &self,
        name: &str,
        patch: &ClusterPatch,
        now: i64,
    ) -> Result<(ClusterRecord, ClusterRecord), StoreError> {
        let before = self.active_cluster(name)?;
        self.tx.execute(
            "UPDATE clusters SET display_name = ?2, description = ?3, labels = ?4, updated_at = ?5
             WHERE id = ?1",
            params![
                before.id,
                patch.display_name.as_ref().unwrap_or(&before.display_name),
                patch.description.as_ref().unwrap_or(&before.description),
                labels_json(patch.labels.as_ref().unwrap_or(&before.labels)),
                now
            ],
        )?;
        let after = self.active_cluster(name)?;
        Ok((before, after))
    }

    /// Retires an active cluster: its agent token stops working, its data stays.
    /// Returns the record before retirement.
    pub fn retire_cluster(&self, name: &str, now: i64) -> Result<ClusterRecord, StoreError> {
        let before = self.active_cluster(name)?;
        self.tx.execute(
            "UPDATE clusters SET retired_at = ?2, updated_at = ?2 WHERE id = ?1",
            params![before.id, now],
        )?;
        Ok(before)
    }

    /// Replaces the agent token hash; the old token is refused from this commit on.
    /// Returns (before, after).
    pub fn rotate_cluster_token(
        &self,
        name: &str,
        token_sha256: &str,
        now: i64,
    ) -> Result<(ClusterRecord, ClusterRecord), StoreError> {
        let before = self.active_cluster(name)?;
        self.tx.execute(
            "UPDATE clusters SET token_sha256 = ?2, token_rotated_at = ?3, updated_at = ?3
             WHERE id = ?1",
            params![before.id, token_sha256, now],
        )?;
        Ok((before, self.active_cluster(name)?))
    }

    /// Turns the cluster-wide freeze on (`Some`) or off (`None`); returns (before,
    /// after).
    pub fn set_cluster_freeze(
        &self,
        name: &str,
        freeze: Option<&FreezeRecord>,
        now: i64,
    ) -> Result<(ClusterRecord, ClusterRecord), StoreError> {
        let before = self.active_cluster(name)?;
        self.tx.execute(
            "UPDATE clusters SET frozen = ?2, freeze_reason = ?3, frozen_at = ?4, freeze_until = ?5,
                    updated_at = ?6
             WHERE id = ?1",
            params![
                before.id,
                freeze.is_some(),
                freeze.map(|f| f.reason.as_str()),
                freeze.map(|f| f.since),
                freeze.and_then(|f| f.until),
                now
            ],
        )?;
        Ok((before, self.active_cluster(name)?))
    }
}
