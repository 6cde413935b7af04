//! The `policies` and `policy_versions` tables: RightsizingPolicies with a gap-free
//! version history, optimistic concurrency on every write (the caller names the version
//! it read), soft delete and revert. Writes take a transaction (the API's audited one).

use rusqlite::{params, OptionalExtension};

use super::{is_unique_violation, Read, StoreError, Tx};
use crate::policy::{PolicySpec, StoredPolicy};

/// A policy with its current content.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyRecord {
    pub id: i64,
    pub version: i64,
    pub spec: PolicySpec,
    pub created_at: i64,
    pub updated_at: i64,
    pub deleted_at: Option<i64>,
}

/// One entry of a policy's history.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyVersion {
    pub version: i64,
    pub spec: PolicySpec,
    pub created_at: i64,
    /// The audit actor JSON of whoever wrote it.
    pub actor: String,
    /// `created`, `updated` or `reverted`.
    pub change: String,
    /// The reason typed with the change, if any.
    pub reason: Option<String>,
}

/// Who wrote a version, and why: the audit actor JSON and the reason typed with it.
#[derive(Debug, Clone)]
pub struct Author {
    pub actor: String,
    pub reason: Option<String>,
}

fn spec_of(text: &str) -> rusqlite::Result<PolicySpec> {
    serde_json::from_str(text).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, Box::new(e))
    })
}

fn spec_text(spec: &PolicySpec) -> Result<String, StoreError> {
    serde_json::to_string(spec).map_err(|e| StoreError::Task(e.to_string()))
}

const SELECT: &str = "SELECT p.id, p.version, v.spec, p.created_at, p.updated_at, p.deleted_at
    FROM policies p JOIN policy_versions v ON v.policy_id = p.id AND v.version = p.version";

fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<PolicyRecord> {
    Ok(PolicyRecord {
        id: r.get(0)?,
        version: r.get(1)?,
        spec: spec_of(&r.get::<_, String>(2)?)?,
        created_at: r.get(3)?,
        updated_at: r.get(4)?,
        deleted_at: r.get(5)?,
    })
}

fn name_taken(e: rusqlite::Error, name: &str) -> StoreError {
    if is_unique_violation(&e) {
        StoreError::Conflict(format!("a policy named {name:?}"))
    } else {
        e.into()
    }
}

impl Read<'_> {
    /// One policy by id, deleted or not.
    pub fn policy(&self, id: i64) -> Result<Option<PolicyRecord>, StoreError> {
        Ok(self
            .0
            .query_row(&format!("{SELECT} WHERE p.id = ?1"), [id], from_row)
            .optional()?)
    }

    /// Policies by name (then id); soft-deleted ones only when `deleted`.
    pub fn policies(&self, deleted: bool) -> Result<Vec<PolicyRecord>, StoreError> {
        let filter = if deleted {
            ""
        } else {
            " WHERE p.deleted_at IS NULL"
        };
        let mut stmt = self
            .0
            .prepare(&format!("{SELECT}{filter} ORDER BY p.name, p.id"))?;
        let rows = stmt.query_map([], from_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The live policies as resolution takes them.
    pub fn live_policies(&self) -> Result<Vec<StoredPolicy>, StoreError> {
        Ok(self
            .policies(false)?
            .into_iter()
            .map(|p| StoredPolicy::hub(p.id, p.version, p.spec))
            .collect())
    }

    /// The history of policy `id`, oldest first.
    pub fn policy_versions(&self, id: i64) -> Result<Vec<PolicyVersion>, StoreError> {
        let mut stmt = self.0.prepare(
            "SELECT version, spec, created_at, actor, change, reason FROM policy_versions
             WHERE policy_id = ?1 ORDER BY version",
        )?;
        let rows = stmt.query_map([id], |r| {
            Ok(PolicyVersion {
                version: r.get(0)?,
                spec: spec_of(&r.get::<_, String>(1)?)?,
                created_at: r.get(2)?,
                actor: r.get(3)?,
                change: r.get(4)?,
                reason: r.get(5)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One version of policy `id`.
    pub fn policy_version(
        &self,
        id: i64,
        version: i64,
    ) -> Result<Option<PolicyVersion>, StoreError> {
        Ok(self
            .policy_versions(id)?
            .into_iter()
            .find(|v| v.version == version))
    }
}

impl Tx<'_> {
    /// Creates a policy at version 1; a live policy with the same name is a `Conflict`.
    pub fn create_policy(
        &self,
        spec: &PolicySpec,
        by: &Author,
        now: i64,
    ) -> Result<PolicyRecord, StoreError> {
        self.tx
            .execute(
                "INSERT INTO policies (name, version, created_at, updated_at)
                 VALUES (?1, 1, ?2, ?2)",
                params![spec.name, now],
            )
            .map_err(|e| name_taken(e, &spec.name))?;
        let id = self.tx.last_insert_rowid();
        self.append_policy_version(id, 1, spec, by, "created", now)?;
        self.policy(id)?
            .ok_or_else(|| StoreError::Task("inserted policy vanished".into()))
    }

    /// Replaces the content of policy `id`, which must be at version `expected`;
    /// appends version `expected + 1`. Returns (before, after).
    pub fn update_policy(
        &self,
        id: i64,
        expected: i64,
        spec: &PolicySpec,
        by: &Author,
        change: &str,
        now: i64,
    ) -> Result<(PolicyRecord, PolicyRecord), StoreError> {
        let before = self.current_policy(id, expected)?;
        let next = before.version + 1;
        self.tx
            .execute(
                "UPDATE policies SET name = ?2, version = ?3, updated_at = ?4 WHERE id = ?1",
                params![id, spec.name, next, now],
            )
            .map_err(|e| name_taken(e, &spec.name))?;
        self.append_policy_version(id, next, spec, by, change, now)?;
        let after = self
            .policy(id)?
            .ok_or_else(|| StoreError::NotFound(format!("policy {id}")))?;
        Ok((before, after))
    }

    /// Soft-deletes policy `id` at version `expected`: it stops applying, its history
    /// stays, its name is free again. Returns the policy as it was.
    pub fn delete_policy(
        &self,
        id: i64,
        expected: i64,
        now: i64,
    ) -> Result<PolicyRecord, StoreError> {
        let before = self.current_policy(id, expected)?;
        self.tx.execute(
            "UPDATE policies SET deleted_at = ?2, updated_at = ?2 WHERE id = ?1",
            params![id, now],
        )?;
        Ok(before)
    }

    /// The live policy `id` at exactly `expected` (its current version), or why not.
    fn current_policy(&self, id: i64, expected: i64) -> Result<PolicyRecord, StoreError> {
        let p = self
            .policy(id)?
            .filter(|p| p.deleted_at.is_none())
            .ok_or_else(|| StoreError::NotFound(format!("policy {id}")))?;
        if p.version != expected {
            return Err(StoreError::VersionConflict {
                what: format!("policy {id}"),
                expected,
                current: p.version,
            });
        }
        Ok(p)
    }

    fn append_policy_version(
        &self,
        id: i64,
        version: i64,
        spec: &PolicySpec,
        by: &Author,
        change: &str,
        now: i64,
    ) -> Result<(), StoreError> {
        self.tx.execute(
            "INSERT INTO policy_versions (policy_id, version, spec, created_at, actor, change, reason)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![id, version, spec_text(spec)?, now, by.actor, change, by.reason],
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::Connection;

    fn db() -> (tempfile::TempDir, Connection) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("kerf.db");
        let mut conn = Connection::open(&path).expect("open");
        super::super::migrate::run(&mut conn, &path, 0).expect("migrate");
        (dir, conn)
    }

    fn nobody() -> Author {
        Author {
            actor: "{}".into(),
            reason: None,
        }
    }

    fn spec(name: &str, priority: i32) -> PolicySpec {
        PolicySpec {
            name: name.into(),
            priority,
            ..Default::default()
        }
    }

    #[test]
    fn a_stale_version_is_refused_and_history_has_no_gaps() {
        let (_d, mut conn) = db();
        let raw = conn.transaction().unwrap();
        let tx = Tx::new(&raw);
        let p = tx.create_policy(&spec("a", 1), &nobody(), 1).unwrap();
        tx.update_policy(p.id, 1, &spec("a", 2), &nobody(), "updated", 2)
            .unwrap();
        let err = tx
            .update_policy(p.id, 1, &spec("a", 3), &nobody(), "updated", 3)
            .unwrap_err();
        assert!(
            matches!(err, StoreError::VersionConflict { current: 2, .. }),
            "{err}"
        );
        let versions: Vec<i64> = tx
            .policy_versions(p.id)
            .unwrap()
            .iter()
            .map(|v| v.version)
            .collect();
        assert_eq!(versions, [1, 2]);
    }

    #[test]
    fn a_soft_deleted_policy_keeps_its_history_and_frees_its_name() {
        let (_d, mut conn) = db();
        let raw = conn.transaction().unwrap();
        let tx = Tx::new(&raw);
        let p = tx.create_policy(&spec("a", 1), &nobody(), 1).unwrap();
        assert!(matches!(
            tx.create_policy(&spec("a", 1), &nobody(), 1),
            Err(StoreError::Conflict(_))
        ));
        tx.delete_policy(p.id, 1, 2).unwrap();
        assert!(tx.live_policies().unwrap().is_empty());
        assert_eq!(tx.policy_versions(p.id).unwrap().len(), 1);
        let again = tx.create_policy(&spec("a", 5), &nobody(), 3).unwrap();
        assert_ne!(again.id, p.id);
        assert_eq!(tx.policies(true).unwrap().len(), 2);
        assert!(matches!(
            tx.update_policy(p.id, 1, &spec("a", 1), &nobody(), "updated", 4),
            Err(StoreError::NotFound(_))
        ));
    }

    #[test]
    fn each_version_keeps_the_reason_typed_with_it() {
        let (_d, mut conn) = db();
        let raw = conn.transaction().unwrap();
        let tx = Tx::new(&raw);
        let p = tx.create_policy(&spec("a", 1), &nobody(), 1).unwrap();
        let why = Author {
            actor: "{}".into(),
            reason: Some("ticket OPS-12: batch jobs need more headroom".into()),
        };
        tx.update_policy(p.id, 1, &spec("a", 2), &why, "updated", 2)
            .unwrap();
        let reasons: Vec<Option<String>> = tx
            .policy_versions(p.id)
            .unwrap()
            .into_iter()
            .map(|v| v.reason)
            .collect();
        assert_eq!(
            reasons,
            [
                None,
                Some("ticket OPS-12: batch jobs need more headroom".into())
            ]
        );
    }
}
