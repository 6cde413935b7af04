//! The `datasources` and `cluster_datasources` tables: datasource settings (secrets only
//! as a sealed blob) and which datasource each cluster points at.

use rusqlite::{params, OptionalExtension};

use super::{Read, StoreError, Tx};

/// A stored datasource: settings JSON without secrets, and the sealed secrets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatasourceRecord {
    pub id: i64,
    pub name: String,
    pub kind: String,
    pub settings_json: String,
    pub secrets_sealed: Vec<u8>,
    pub created_at: i64,
    pub updated_at: i64,
    /// Names of the clusters pointing at it.
    pub clusters: Vec<String>,
}

const SELECT: &str = "SELECT id, name, type, settings_json, secrets_sealed, created_at, updated_at
                      FROM datasources";

fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<DatasourceRecord> {
    Ok(DatasourceRecord {
        id: r.get(0)?,
        name: r.get(1)?,
        kind: r.get(2)?,
        settings_json: r.get(3)?,
        secrets_sealed: r.get(4)?,
        created_at: r.get(5)?,
        updated_at: r.get(6)?,
        clusters: Vec::new(),
    })
}

fn conflict(e: rusqlite::Error, name: &str) -> StoreError {
    match e {
        rusqlite::Error::SqliteFailure(f, _)
            if f.code == rusqlite::ErrorCode::ConstraintViolation =>
        {
            StoreError::Conflict(format!("datasource {name:?}"))
        }
        e => e.into(),
    }
}

impl Read<'_> {
    /// One datasource by id, with the clusters pointing at it.
    pub fn datasource(&self, id: i64) -> Result<Option<DatasourceRecord>, StoreError> {
        let rec = self
            .0
            .query_row(&format!("{SELECT} WHERE id = ?1"), [id], from_row)
            .optional()?;
        rec.map(|r| self.with_clusters(r)).transpose()
    }

    /// Every datasource, by name.
    pub fn datasources(&self) -> Result<Vec<DatasourceRecord>, StoreError> {
        let mut stmt = self.0.prepare(&format!("{SELECT} ORDER BY name"))?;
        let rows: Vec<DatasourceRecord> =
            stmt.query_map([], from_row)?.collect::<Result<_, _>>()?;
        rows.into_iter().map(|r| self.with_clusters(r)).collect()
    }

    /// The datasource cluster `cluster` points at, if any (for runs).
    pub fn cluster_datasource(
        &self,
        cluster: &str,
    ) -> Result<Option<DatasourceRecord>, StoreError> {
        let id: Option<i64> = self
            .0
            .query_row(
                "SELECT d.datasource_id FROM cluster_datasources d
                 JOIN clusters c ON c.id = d.cluster_id WHERE c.name = ?1",
                [cluster],
                |r| r.get(0),
            )
            .optional()?;
        id.map(|id| self.datasource(id))
            .transpose()
            .map(Option::flatten)
    }

    fn with_clusters(&self, mut rec: DatasourceRecord) -> Result<DatasourceRecord, StoreError> {
        let mut stmt = self.0.prepare(
            "SELECT c.name FROM cluster_datasources d JOIN clusters c ON c.id = d.cluster_id
             WHERE d.datasource_id = ?1 ORDER BY c.name",
        )?;
        rec.clusters = stmt
            .query_map([rec.id], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        Ok(rec)
    }
}

impl Tx<'_> {
    /// Inserts a datasource; a taken name is a `Conflict`.
    pub fn insert_datasource(
        &self,
        name: &str,
        kind: &str,
        settings_json: &str,
        sealed: &[u8],
        now: i64,
    ) -> Result<DatasourceRecord, StoreError> {
        self.tx
            .execute(
                "INSERT INTO datasources
                   (name, type, settings_json, secrets_sealed, created_at, updated_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
                params![name, kind, settings_json, sealed, now],
            )
            .map_err(|e| conflict(e, name))?;
        self.datasource(self.tx.last_insert_rowid())?
            .ok_or_else(|| StoreError::Task("inserted row vanished".into()))
    }

    /// Replaces a datasource's settings; `None` when it does not exist.
    pub fn update_datasource(
        &self,
        id: i64,
        name: &str,
        kind: &str,
        settings_json: &str,
        sealed: &[u8],
        now: i64,
    ) -> Result<Option<DatasourceRecord>, StoreError> {
        let n = self
            .tx
            .execute(
                "UPDATE datasources SET name = ?2, type = ?3, settings_json = ?4,
                 secrets_sealed = ?5, updated_at = ?6 WHERE id = ?1",
                params![id, name, kind, settings_json, sealed, now],
            )
            .map_err(|e| conflict(e, name))?;
        if n == 0 {
            return Ok(None);
        }
        self.datasource(id)
    }

    /// Deletes an unused datasource: `Ok(false)` when absent, `Conflict` while clusters
    /// use it.
    pub fn delete_datasource(&self, id: i64) -> Result<bool, StoreError> {
        let users: i64 = self.tx.query_row(
            "SELECT COUNT(*) FROM cluster_datasources WHERE datasource_id = ?1",
            [id],
            |r| r.get(0),
        )?;
        if users > 0 {
            return Err(StoreError::Conflict(format!(
                "datasource {id} is used by {users} cluster(s);"
            )));
        }
        Ok(self
            .tx
            .execute("DELETE FROM datasources WHERE id = ?1", [id])?
            > 0)
    }

    /// Points `cluster` at datasource `datasource_id`. `Ok(false)` when either is
    /// unknown.
    pub fn set_cluster_datasource(
        &self,
        cluster: &str,
        datasource_id: i64,
        now: i64,
    ) -> Result<bool, StoreError> {
        let cluster_id: Option<i64> = self
            .tx
            .query_row(
                "SELECT id FROM clusters WHERE name = ?1 AND retired_at IS NULL",
                [cluster],
                |r| r.get(0),
            )
            .optional()?;
        let exists: bool = self
            .tx
            .query_row(
                "SELECT 1 FROM datasources WHERE id = ?1",
                [datasource_id],
                |_| Ok(()),
            )
            .optional()?
            .is_some();
        let Some(cluster_id) = cluster_id.filter(|_| exists) else {
            return Ok(false);
        };
        self.tx.execute(
            "INSERT INTO cluster_datasources (cluster_id, datasource_id, updated_at)
             VALUES (?1, ?2, ?3)
             ON CONFLICT (cluster_id) DO UPDATE SET datasource_id = ?2, updated_at = ?3",
            params![cluster_id, datasource_id, now],
        )?;
        Ok(true)
    }
}
