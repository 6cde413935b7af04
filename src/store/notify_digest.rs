//! What the weekly digest is made of, read in one snapshot: the workloads with their
//! latest cost delta, notices and staleness; the week's applied, rolled-back and blocked
//! events (with the cost delta of the recommendation an applied event names); and each
//! active cluster's readiness. The digest (`notify::digest`) filters and adds up.

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
    /// Monthly cost delta of the recommendation the event names, when known.
    pub cost_delta: Option<f64>,
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
            "SELECT id, cluster, namespace, kind, name, cost_delta, latest_rec_id IS NOT NULL,
                notices, stale
         FROM workloads ORDER BY cluster, namespace, kind, name",
        )?;
        let workloads = stmt
            .query_map([], |r| {
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
                })
            })?
            .collect::<Result<_, _>>()?;
        let mut stmt = conn.prepare(
        "SELECT e.cluster, e.namespace, e.kind, e.name, e.type, e.reason, e.time_ms, r.cost_delta
         FROM audit_events e LEFT JOIN recommendations r ON r.id = e.recommendation_id
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
                    cost_delta: r.get(7)?,
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
