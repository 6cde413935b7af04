//! The `workload_overrides` table: at most one operator override per workload (mode per
//! resource, excluded containers, optional expiry), and the loading of everything
//! resolution needs for a cluster or one workload ([`Read::policy_set`]).

use std::collections::HashMap;

use rusqlite::{params, Connection, OptionalExtension};

use super::{Read, StoreError, Tx};
use crate::policy::{OverrideSpec, PolicySet, StoredOverride};

/// A stored override.
#[derive(Debug, Clone, PartialEq)]
pub struct OverrideRecord {
    pub workload_id: String,
    pub spec: OverrideSpec,
    pub expires_at: Option<i64>,
    pub created_at: i64,
    /// The audit actor JSON of whoever set it.
    pub actor: String,
}

fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<OverrideRecord> {
    let text: String = r.get(1)?;
    Ok(OverrideRecord {
        workload_id: r.get(0)?,
        spec: serde_json::from_str(&text).map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(1, rusqlite::types::Type::Text, Box::new(e))
        })?,
        expires_at: r.get(2)?,
        created_at: r.get(3)?,
        actor: r.get(4)?,
    })
}

const SELECT: &str =
    "SELECT o.workload_id, o.spec, o.expires_at, o.created_at, o.actor FROM workload_overrides o";

/// The overrides of the workloads of `cluster` (all clusters when `None`).
fn overrides(
    conn: &Connection,
    cluster: Option<&str>,
) -> Result<HashMap<String, StoredOverride>, StoreError> {
    let mut stmt = conn.prepare(&format!(
        "{SELECT} JOIN workloads w ON w.id = o.workload_id WHERE ?1 IS NULL OR w.cluster = ?1"
    ))?;
    let rows = stmt.query_map([cluster], from_row)?;
    let mut out = HashMap::new();
    for r in rows {
        let r = r?;
        out.insert(r.workload_id, (r.spec, r.expires_at));
    }
    Ok(out)
}

impl Read<'_> {
    /// The override of `workload_id`, expired or not.
    pub fn workload_override(
        &self,
        workload_id: &str,
    ) -> Result<Option<OverrideRecord>, StoreError> {
        Ok(self
            .0
            .query_row(
                &format!("{SELECT} WHERE o.workload_id = ?1"),
                [workload_id],
                from_row,
            )
            .optional()?)
    }

    /// Everything resolution needs for the workloads of `cluster` (or all), read in one
    /// snapshot: live policies and overrides. `default_analysis` comes from the
    /// settings.
    pub fn policy_set(
        &self,
        cluster: Option<&str>,
        default_analysis: serde_json::Value,
    ) -> Result<PolicySet, StoreError> {
        // A reader takes its own snapshot; inside a write transaction there is one.
        let snapshot = if self.0.is_autocommit() {
            Some(self.0.unchecked_transaction()?)
        } else {
            None
        };
        let set = PolicySet {
            policies: {
                let mut all = self.cluster_policies_in_force(cluster)?;
                all.extend(self.live_policies()?);
                all
            },
            overrides: overrides(self.0, cluster)?,
            default_analysis,
        };
        if let Some(tx) = snapshot {
            tx.finish()?;
        }
        Ok(set)
    }
}

impl Tx<'_> {
    /// Sets (replaces) the override of a workload; returns the previous one.
    pub fn set_override(&self, rec: &OverrideRecord) -> Result<Option<OverrideRecord>, StoreError> {
        let before = self.workload_override(&rec.workload_id)?;
        let spec = serde_json::to_string(&rec.spec).map_err(|e| StoreError::Task(e.to_string()))?;
        self.tx.execute(
            "INSERT INTO workload_overrides (workload_id, spec, expires_at, created_at, actor)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (workload_id) DO UPDATE SET spec = excluded.spec,
                 expires_at = excluded.expires_at, created_at = excluded.created_at,
                 actor = excluded.actor",
            params![
                rec.workload_id,
                spec,
                rec.expires_at,
                rec.created_at,
                rec.actor
            ],
        )?;
        Ok(before)
    }

    /// Removes the override of a workload; returns it (`None` when there was none).
    pub fn clear_override(&self, workload_id: &str) -> Result<Option<OverrideRecord>, StoreError> {
        let before = self.workload_override(workload_id)?;
        self.tx.execute(
            "DELETE FROM workload_overrides WHERE workload_id = ?1",
            [workload_id],
        )?;
        Ok(before)
    }
}
