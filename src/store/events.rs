//! The `audit_events` table: workload events from agents (exactly once per id) and the
//! audit query behind `GET /v1/audit`.

use rusqlite::params;

use super::log_query::LogQuery;
use super::{Page, Read, StoreError, Tx};
use crate::events::{wellknown::CONFIG_CHANGED, ValidEvent};

/// An event to store for a cluster (validated already).
pub type NewEvent = ValidEvent;

/// What one batch insert did; `inserted` lists (type, reason) of each newly stored event.
#[derive(Debug, Default)]
pub struct InsertOutcome {
    pub inserted: Vec<(String, String)>,
    /// The batch positions of the events newly stored (not duplicates).
    pub new_events: Vec<usize>,
    pub duplicates: usize,
}

/// Stored events counted by (cluster, type, reason), for `kerf_actions_total`.
pub type EventCounts = Vec<(String, String, String, u64)>;

/// Filters of the audit query; all optional and combined with AND.
#[derive(Debug, Default, Clone)]
pub struct AuditFilter {
    pub cluster: Option<String>,
    pub namespace: Option<String>,
    pub kind: Option<String>,
    pub name: Option<String>,
    pub event_type: Option<String>,
    pub reason: Option<String>,
    pub recommendation_id: Option<String>,
    /// Inclusive lower bound on event time, ms.
    pub since_ms: Option<i64>,
    /// Exclusive upper bound on event time, ms.
    pub until_ms: Option<i64>,
    /// Only rows older than this sequence number (the cursor).
    pub before_seq: Option<i64>,
    /// Only these cluster + namespace glob patterns (a team member's scope); `None` = all.
    pub scopes: Option<Vec<super::NamespacePattern>>,
    pub limit: usize,
}

/// A stored workload event as the audit API returns it.
#[derive(Debug, Clone)]
pub struct StoredEvent {
    pub seq: i64,
    pub cluster: String,
    pub received_at_ms: i64,
    /// The event JSON as sent (with canonical id).
    pub payload: String,
}

impl Tx<'_> {
    /// Stores a batch; ids already stored (or repeated in the batch) are ignored and
    /// counted as duplicates. A new `applied ApprovedOnce` event consumes the approval
    /// it names, in the same transaction. `received` is when the hub got them.
    pub fn insert_events(
        &self,
        cluster: &str,
        events: &[NewEvent],
        received: i64,
    ) -> Result<InsertOutcome, StoreError> {
        let mut out = InsertOutcome::default();
        let mut stmt = self.tx.prepare_cached(
            "INSERT OR IGNORE INTO audit_events
               (id, cluster, type, reason, time_ms, received_at_ms, namespace, kind, name,
                recommendation_id, payload, message)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        )?;
        for (
            i,
            ValidEvent {
                event: e,
                time_ms,
                payload,
            },
        ) in events.iter().enumerate()
        {
            let (event_type, reason) = (e.event_type.as_str(), e.reason.as_str());
            let n = stmt.execute(params![
                e.id,
                cluster,
                event_type,
                reason,
                time_ms,
                received,
                e.workload.namespace,
                e.workload.kind,
                e.workload.name,
                e.recommendation_id,
                payload,
                e.message,
            ])?;
            if n == 1 {
                if let Some(approval) = e.approval_id() {
                    self.consume_approval(cluster, &e.workload, approval, &e.id, received)?;
                }
                out.inserted
                    .push((event_type.to_string(), reason.to_string()));
                out.new_events.push(i);
            } else {
                out.duplicates += 1;
            }
        }
        Ok(out)
    }
}

impl Read<'_> {
    /// Counts of workload events ever stored, by (cluster, type, reason): those in the
    /// log plus those retention pruned from it.
    pub fn event_counts(&self) -> Result<EventCounts, StoreError> {
        let mut stmt = self.0.prepare(
            "SELECT cluster, type, reason, SUM(n) FROM (
                 SELECT cluster, type, reason, COUNT(*) AS n FROM audit_events
                 WHERE type != ?1 AND cluster IS NOT NULL GROUP BY cluster, type, reason
                 UNION ALL
                 SELECT cluster, type, reason, n FROM audit_pruned_counts)
             GROUP BY cluster, type, reason",
        )?;
        let rows = stmt.query_map([CONFIG_CHANGED], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get::<_, i64>(3)? as u64))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Workload events matching `f`, newest first; the next page continues below the
    /// last `seq`. `config_changed` rows never appear.
    pub fn query_audit(&self, f: &AuditFilter) -> Result<Page<StoredEvent>, StoreError> {
        let mut q = LogQuery::new(
            "SELECT seq, cluster, received_at_ms, payload FROM audit_events WHERE type != ?",
            CONFIG_CHANGED.to_string().into(),
        );
        q.equal(&[
            ("cluster", &f.cluster),
            ("namespace", &f.namespace),
            ("kind", &f.kind),
            ("name", &f.name),
            ("type", &f.event_type),
            ("reason", &f.reason),
            ("recommendation_id", &f.recommendation_id),
        ]);
        q.window(f.since_ms, f.until_ms, f.before_seq);
        if let Some(scopes) = &f.scopes {
            q.and_with(|param| {
                super::teams::scope_condition(scopes, "cluster", "namespace", param)
            });
        }
        let row = |r: &rusqlite::Row<'_>| {
            Ok(StoredEvent {
                seq: r.get(0)?,
                cluster: r.get(1)?,
                received_at_ms: r.get(2)?,
                payload: r.get(3)?,
            })
        };
        q.page(self.0, f.limit, row, |e| e.seq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::Connection;

    fn event(id: &str) -> NewEvent {
        use crate::wire::event::{AgentEvent, EventType, Reason, WorkloadKey};
        NewEvent {
            event: AgentEvent {
                id: id.into(),
                event_type: EventType::Skipped,
                time: "1970-01-01T00:00:00.001Z".into(),
                workload: WorkloadKey {
                    namespace: "ns".into(),
                    kind: "Deployment".into(),
                    name: "api".into(),
                },
                reason: Reason::ModeOff,
                recommendation_id: None,
                strategy: None,
                resources: Vec::new(),
                containers: Vec::new(),
                message: None,
                details: Default::default(),
            },
            time_ms: 1,
            payload: "{}".into(),
        }
    }

    fn db() -> (tempfile::TempDir, Connection) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("kerf.db");
        let mut conn = Connection::open(&path).expect("open");
        super::super::migrate::run(&mut conn, &path, 0).expect("migrate");
        (dir, conn)
    }

    /// Inserts `events` in one transaction, as `Store::writing` does.
    fn insert(conn: &mut Connection, events: &[NewEvent]) -> Result<InsertOutcome, StoreError> {
        let tx = conn.transaction()?;
        let out = Tx::new(&tx).insert_events("c1", events, 1)?;
        tx.commit()?;
        Ok(out)
    }

    #[test]
    fn an_id_repeated_inside_one_batch_is_stored_once() {
        let (_d, mut conn) = db();
        let out = insert(&mut conn, &[event("a"), event("a"), event("b")]).unwrap();
        assert_eq!((out.inserted.len(), out.duplicates), (2, 1));
        let out = insert(&mut conn, &[event("b")]).unwrap();
        assert_eq!((out.inserted.len(), out.duplicates), (0, 1));
        assert_eq!(
            Read(&conn).event_counts().unwrap(),
            vec![("c1".into(), "skipped".into(), "ModeOff".into(), 2)]
        );
    }

    #[test]
    fn pages_walk_newest_first_without_overlap() {
        let (_d, mut conn) = db();
        let evs: Vec<NewEvent> = (0..7).map(|i| event(&format!("e{i}"))).collect();
        insert(&mut conn, &evs).unwrap();
        let mut f = AuditFilter {
            limit: 3,
            ..Default::default()
        };
        let mut seen = Vec::new();
        loop {
            let page = Read(&conn).query_audit(&f).unwrap();
            seen.extend(page.items.iter().map(|e| e.seq));
            match page.next {
                Some(n) => f.before_seq = Some(n),
                None => break,
            }
        }
        assert_eq!(seen, vec![7, 6, 5, 4, 3, 2, 1]);
    }
}
