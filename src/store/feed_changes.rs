//! What tells the hub whether a feed it built is still current, and what to rebuild:
//! the rows every write to a feed's inputs adds (triggers of migration 14: the workload
//! touched, or none for a change that may touch them all), and the next moment a
//! cluster's feeds change by the clock alone (a pause that resumes, a freeze that ends,
//! an override that expires).

use rusqlite::{params, OptionalExtension};

use super::{Read, StoreError, Tx};

/// What changed after a revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FeedChanges {
    /// Only these workloads' entries (ids of every cluster).
    Workloads(Vec<String>),
    /// Possibly every entry: a change that is not one workload's, more than the limit,
    /// or rows already pruned past that revision.
    Everything,
}

/// Rows of `feed_changes` the retention job keeps (the newest).
pub const FEED_CHANGES_KEPT: i64 = 200_000;

impl Read<'_> {
    /// The revision of everything the agents' feeds are built from.
    pub fn feed_revision(&self) -> Result<i64, StoreError> {
        Ok(self
            .0
            .query_row("SELECT MAX(revision) FROM feed_changes", [], |r| {
                r.get::<_, Option<i64>>(0)
            })?
            .unwrap_or(0))
    }

    /// What changed after `revision` up to `upto`, at most `limit` workloads.
    pub fn feed_changes(
        &self,
        revision: i64,
        upto: i64,
        limit: usize,
    ) -> Result<FeedChanges, StoreError> {
        let oldest: Option<i64> = self
            .0
            .query_row("SELECT MIN(revision) FROM feed_changes", [], |r| r.get(0))
            .optional()?
            .flatten();
        if oldest.is_some_and(|o| o > revision + 1) {
            return Ok(FeedChanges::Everything);
        }
        let mut stmt = self.0.prepare(
            "SELECT DISTINCT workload_id FROM feed_changes
              WHERE revision > ?1 AND revision <= ?2 LIMIT ?3",
        )?;
        let rows = stmt.query_map(params![revision, upto, limit as i64 + 1], |r| {
            r.get::<_, Option<String>>(0)
        })?;
        let mut ids = Vec::new();
        for id in rows {
            match id? {
                Some(id) => ids.push(id),
                None => return Ok(FeedChanges::Everything),
            }
        }
        if ids.len() > limit {
            return Ok(FeedChanges::Everything);
        }
        Ok(FeedChanges::Workloads(ids))
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
            params![cluster, now],
            |r| r.get(0),
        )?)
    }
}

impl Tx<'_> {
    /// Drops all but the newest [`FEED_CHANGES_KEPT`] change rows; returns how many.
    pub fn prune_feed_changes(&self) -> Result<usize, StoreError> {
        Ok(self.tx.execute(
            "DELETE FROM feed_changes
              WHERE revision <= (SELECT MAX(revision) FROM feed_changes) - ?1",
            [FEED_CHANGES_KEPT],
        )?)
    }
}
