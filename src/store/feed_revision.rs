//! What tells the hub whether a feed it computed is still current: the revision every
//! write to a feed's inputs bumps (triggers of migration 14), and the next moment a
//! cluster's feeds change by the clock alone (a pause that resumes, a freeze that ends,
//! an override that expires).

use rusqlite::OptionalExtension;

use super::{Read, StoreError};

impl Read<'_> {
    /// The revision of everything the agents' feeds are built from.
    pub fn feed_revision(&self) -> Result<i64, StoreError> {
        Ok(self
            .0
            .query_row("SELECT revision FROM feed_revision WHERE id = 1", [], |r| {
                r.get(0)
            })
            .optional()?
            .unwrap_or(0))
    }

    /// The first moment after `now` (Unix ms) at which `cluster`'s feeds change with no
    /// write: the end of a pause (its own or the fleet's), of its freeze, or of an
    /// override of one of its workloads.
    pub fn feed_expiry(&self, cluster: &str, now: i64) -> Result<Option<i64>, StoreError> {
        Ok(self.0.query_row(
            "SELECT MIN(t) FROM (
                 SELECT resume_at AS t FROM automation_pauses
                  WHERE scope IN ('*', ?1) AND resume_at > ?2
                 UNION ALL
                 SELECT freeze_until FROM clusters
                  WHERE name = ?1 AND frozen = 1 AND freeze_until > ?2
                 UNION ALL
                 SELECT o.expires_at FROM workload_overrides o
                   JOIN workloads w ON w.id = o.workload_id
                  WHERE w.cluster = ?1 AND o.expires_at > ?2)",
            rusqlite::params![cluster, now],
            |r| r.get(0),
        )?)
    }
}
