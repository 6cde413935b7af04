//! What the weekly digest is made of, read in one snapshot: the workloads with their
//! latest cost delta (what is left to save), notices, staleness and what their live
//! change applied in the week realized (`runs::realized`, as the overview counts it); the
//! week's applied, rolled-back and blocked events; and each active cluster's readiness. The digest (`notify::digest`) filters and adds up.

use rusqlite::params;

use super::{Read, StoreError};

/// One workload's standing.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadFacts {
    pub id: String,
    pub cluster: String,
    pub namespace: String,
    pub kind: String,
    pub name: String,
    /// Monthly cost delta of the latest recommendation; `None` = unknown or none.
    pub cost_delta: Option<f64>,
    /// Has a latest recommendation (counts in `GET /v1/savings`).
    pub recommended: bool,
    /// `,a,b,` notice list of the latest recommendation.
    pub notices: String,
    pub stale: bool,
    /// The monthly saving of its live change, when that was applied in the week.
    pub realized: Option<f64>,
}

/// One event of the week.
#[derive(Debug, Clone, PartialEq)]
pub struct EventFacts {
    pub cluster: String,
    pub namespace: String,
    pub kind: String,
    pub name: String,
    pub event_type: String,
    pub reason: String,
    pub time_ms: i64,
}

/// Everything a digest needs, read at once.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DigestFacts {
    pub workloads: Vec<WorkloadFacts>,
    pub events: Vec<EventFacts>,
    /// (cluster, readiness state, reasons JSON) of every active cluster.
    pub clusters: Vec<(String, String, String)>,
}

impl Read<'_> {
    /// Reads the facts of the week `[start, end)` (event time).
    pub fn digest_facts(&self, start: i64, end: i64) -> Result<DigestFacts, StoreError> {
        let conn = self.0;
        let mut stmt = conn.prepare(
            "SELECT w.id, w.cluster, w.namespace, w.kind, w.name, w.cost_delta,
                w.latest_rec_id IS NOT NULL, w.notices, w.stale,
                CASE WHEN l.applied_at >= ?1 AND l.applied_at < ?2 THEN l.realized_monthly END
         FROM workloads w LEFT JOIN live_changes l ON l.workload_id = w.id
         ORDER BY w.cluster, w.namespace, w.kind, w.name",
        )?;
        let workloads = stmt
            .query_map(params![start, end], |r| {
                Ok(WorkloadFacts {
                    id: r.get(0)?,
                    cluster: r.get(1)?,
                    namespace: r.get(2)?,
                    kind: r.get(3)?,
                    name: r.get(4)?,
                    cost_delta: r.get(5)?,
                    recommended: r.get(6)?,
                    notices: r.get(7)?,
                    stale: r.get(8)?,
                    realized: r.get(9)?,
                })
            })?
            .collect::<Result<_, _>>()?;
        let mut stmt = conn.prepare(
            "SELECT e.cluster, e.namespace, e.kind, e.name, e.type, e.reason, e.time_ms
         FROM audit_events e
         WHERE e.type IN ('applied', 'rolled_back', 'blocked') AND e.cluster IS NOT NULL
           AND e.time_ms >= ?1 AND e.time_ms < ?2
         ORDER BY e.time_ms, e.seq",
        )?;
        let events = stmt
            .query_map(params![start, end], |r| {
                Ok(EventFacts {
                    cluster: r.get(0)?,
                    namespace: r.get(1)?,
                    kind: r.get(2)?,
                    name: r.get(3)?,
                    event_type: r.get(4)?,
                    reason: r.get(5)?,
                    time_ms: r.get(6)?,
                })
            })?
            .collect::<Result<_, _>>()?;
        let mut stmt = conn.prepare(
            "SELECT c.name, COALESCE(r.state, 'not-ready'), COALESCE(r.reasons, '[]')
         FROM clusters c LEFT JOIN cluster_readiness r ON r.cluster_id = c.id
         WHERE c.retired_at IS NULL ORDER BY c.name",
        )?;
        let clusters = stmt
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<Result<_, _>>()?;
        Ok(DigestFacts {
            workloads,
            events,
            clusters,
        })
    }
}
