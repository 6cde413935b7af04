//! The `cluster_policies` table: each cluster's RightsizingPolicy objects as its agent
//! reported them, one row per name, with the document in force (the last valid
//! generation) apart from the latest generation seen and what is wrong with it.
//! `fleet::cluster_policies` decides what a report changes; this file only stores it.

use rusqlite::{params, OptionalExtension};

use super::{Read, StoreError, Tx};
use crate::policy::{FieldError, PolicySpec, StoredPolicy};

/// One object of one cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterPolicyRecord {
    /// 0 before it is stored.
    pub id: i64,
    pub cluster: String,
    pub name: String,
    pub uid: String,
    /// The latest generation the agent saw.
    pub generation: i64,
    /// The generation of `spec` (`None` while no generation was valid).
    pub accepted_generation: Option<i64>,
    /// The document in force.
    pub spec: Option<PolicySpec>,
    /// What is wrong with `generation` (empty when it is the one in force).
    pub errors: Vec<FieldError>,
    pub created_at: i64,
    pub updated_at: i64,
}

const SELECT: &str = "SELECT id, cluster, name, uid, generation, accepted_generation, spec,
    errors, created_at, updated_at FROM cluster_policies";

fn json_of<T: serde::de::DeserializeOwned>(col: usize, text: &str) -> rusqlite::Result<T> {
    serde_json::from_str(text).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(col, rusqlite::types::Type::Text, Box::new(e))
    })
}

fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ClusterPolicyRecord> {
    let spec: Option<String> = r.get(6)?;
    let errors: Option<String> = r.get(7)?;
    Ok(ClusterPolicyRecord {
        id: r.get(0)?,
        cluster: r.get(1)?,
        name: r.get(2)?,
        uid: r.get(3)?,
        generation: r.get(4)?,
        accepted_generation: r.get(5)?,
        spec: spec.map(|s| json_of(6, &s)).transpose()?,
        errors: errors
            .map(|e| json_of(7, &e))
            .transpose()?
            .unwrap_or_default(),
        created_at: r.get(8)?,
        updated_at: r.get(9)?,
    })
}

fn text<T: serde::Serialize>(v: &T) -> Result<String, StoreError> {
    serde_json::to_string(v).map_err(|e| StoreError::Task(e.to_string()))
}

impl Read<'_> {
    /// The objects of `cluster` (or of every cluster), by cluster and name.
    pub fn cluster_policies(
        &self,
        cluster: Option<&str>,
    ) -> Result<Vec<ClusterPolicyRecord>, StoreError> {
        let mut stmt = self.0.prepare(&format!(
            "{SELECT} WHERE ?1 IS NULL OR cluster = ?1 ORDER BY cluster, name"
        ))?;
        let rows = stmt.query_map([cluster], from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One object by id.
    pub fn cluster_policy(&self, id: i64) -> Result<Option<ClusterPolicyRecord>, StoreError> {
        Ok(self
            .0
            .query_row(&format!("{SELECT} WHERE id = ?1"), [id], from_row)
            .optional()?)
    }

    /// The documents in force of `cluster` (or every cluster), as resolution takes them.
    pub fn cluster_policies_in_force(
        &self,
        cluster: Option<&str>,
    ) -> Result<Vec<StoredPolicy>, StoreError> {
        Ok(self
            .cluster_policies(cluster)?
            .into_iter()
            .filter_map(|p| {
                Some(StoredPolicy {
                    id: p.id,
                    version: p.accepted_generation?,
                    spec: p.spec?,
                    cluster: Some(p.cluster),
                })
            })
            .collect())
    }
}

impl Tx<'_> {
    /// Inserts or replaces (by cluster and name) an object's row; returns its id.
    pub fn put_cluster_policy(&self, p: &ClusterPolicyRecord) -> Result<i64, StoreError> {
        let spec = p.spec.as_ref().map(text).transpose()?;
        let errors = if p.errors.is_empty() {
            None
        } else {
            Some(text(&p.errors)?)
        };
        Ok(self.tx.query_row(
            "INSERT INTO cluster_policies (cluster, name, uid, generation, accepted_generation,
                 spec, errors, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
             ON CONFLICT (cluster, name) DO UPDATE SET uid = excluded.uid,
                 generation = excluded.generation,
                 accepted_generation = excluded.accepted_generation,
                 spec = excluded.spec, errors = excluded.errors,
                 created_at = excluded.created_at, updated_at = excluded.updated_at
             RETURNING id",
            params![
                p.cluster,
                p.name,
                p.uid,
                p.generation,
                p.accepted_generation,
                spec,
                errors,
                p.created_at,
                p.updated_at
            ],
            |r| r.get(0),
        )?)
    }

    /// Removes an object's row.
    pub fn delete_cluster_policy(&self, id: i64) -> Result<(), StoreError> {
        self.tx
            .execute("DELETE FROM cluster_policies WHERE id = ?1", [id])?;
        Ok(())
    }
}
