//! A workload's history: its audit events, its recommendations and the configuration
//! changes that concern it (its override, its approvals, the policies that apply to it),
//! merged newest first into one timeline with a keyset cursor over (time, source, seq).

use rusqlite::types::Value as SqlValue;
use rusqlite::{params_from_iter, Connection};

use super::recommendations::RecommendationRow;
use super::{Page, Read, StoreError};
use crate::events::wellknown::CONFIG_CHANGED;

/// What a timeline entry is.
#[derive(Debug, Clone, PartialEq)]
pub enum HistoryItem {
    /// A workload event (its stored JSON).
    Event(String),
    /// A recommendation (without its analysis).
    Recommendation(RecommendationRow),
    /// A `config_changed` record (its stored JSON).
    ConfigChange(String),
}

impl HistoryItem {
    /// Tie-break among entries of the same millisecond (higher first).
    fn source(&self) -> u8 {
        match self {
            HistoryItem::Event(_) => 0,
            HistoryItem::Recommendation(_) => 1,
            HistoryItem::ConfigChange(_) => 2,
        }
    }
}

/// One entry and its position.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryEntry {
    pub time_ms: i64,
    pub seq: i64,
    pub item: HistoryItem,
}

/// A position in the timeline: entries strictly older than it come next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistoryCursor {
    pub time_ms: i64,
    pub source: u8,
    pub seq: i64,
}

/// Which workload, and the policies that apply to it now.
#[derive(Debug, Clone)]
pub struct HistoryQuery {
    pub workload_id: String,
    pub cluster: String,
    pub namespace: String,
    pub kind: String,
    pub name: String,
    pub policy_ids: Vec<i64>,
    /// The cluster's own policies that apply to it now (ids of `cluster_policies`).
    pub cluster_policy_ids: Vec<i64>,
    pub before: Option<HistoryCursor>,
    pub limit: usize,
}

/// The SQL condition "older than the cursor" for rows of `source`, with its arguments.
fn older(c: Option<HistoryCursor>, source: u8, time: &str, seq: &str) -> (String, Vec<SqlValue>) {
    let Some(c) = c else {
        return (String::new(), Vec::new());
    };
    let t = SqlValue::Integer(c.time_ms);
    match source.cmp(&c.source) {
        std::cmp::Ordering::Less => (format!(" AND {time} <= ?"), vec![t]),
        std::cmp::Ordering::Greater => (format!(" AND {time} < ?"), vec![t]),
        std::cmp::Ordering::Equal => (
            format!(" AND ({time} < ? OR ({time} = ? AND {seq} < ?))"),
            vec![t.clone(), t, SqlValue::Integer(c.seq)],
        ),
    }
}

fn events(conn: &Connection, q: &HistoryQuery) -> Result<Vec<HistoryEntry>, StoreError> {
    let (cond, extra) = older(q.before, 0, "time_ms", "seq");
    let sql = format!(
        "SELECT seq, time_ms, payload FROM audit_events
         WHERE type != ? AND cluster = ? AND namespace = ? AND kind = ? AND name = ?{cond}
         ORDER BY time_ms DESC, seq DESC LIMIT ?"
    );
    let mut args: Vec<SqlValue> = [CONFIG_CHANGED, &q.cluster, &q.namespace, &q.kind, &q.name]
        .iter()
        .map(|s| SqlValue::Text(s.to_string()))
        .collect();
    args.extend(extra);
    args.push(SqlValue::Integer(q.limit as i64 + 1));
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(params_from_iter(args), |r| {
        Ok(HistoryEntry {
            seq: r.get(0)?,
            time_ms: r.get(1)?,
            item: HistoryItem::Event(r.get(2)?),
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn config_changes(conn: &Connection, q: &HistoryQuery) -> Result<Vec<HistoryEntry>, StoreError> {
    let (cond, extra) = older(q.before, 2, "time_ms", "seq");
    let sql = format!(
        "SELECT seq, time_ms, payload FROM audit_events
         WHERE type = ? AND (
             (target_type = 'workload-override' AND target_id = ?)
          OR (target_type = 'approval'
              AND target_id IN (SELECT id FROM approvals WHERE workload_id = ?))
          OR (target_type = 'policy' AND target_id IN (SELECT value FROM json_each(?)))
          OR (target_type = 'cluster-policy' AND target_id IN (SELECT value FROM json_each(?))))
         {cond} ORDER BY time_ms DESC, seq DESC LIMIT ?"
    );
    let ids = |ids: &[i64]| {
        let ids: Vec<String> = ids.iter().map(i64::to_string).collect();
        SqlValue::Text(serde_json::to_string(&ids).unwrap_or_else(|_| "[]".into()))
    };
    let mut args: Vec<SqlValue> = vec![
        SqlValue::Text(CONFIG_CHANGED.into()),
        SqlValue::Text(q.workload_id.clone()),
        SqlValue::Text(q.workload_id.clone()),
        ids(&q.policy_ids),
        ids(&q.cluster_policy_ids),
    ];
    args.extend(extra);
    args.push(SqlValue::Integer(q.limit as i64 + 1));
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(params_from_iter(args), |r| {
        Ok(HistoryEntry {
            seq: r.get(0)?,
            time_ms: r.get(1)?,
            item: HistoryItem::ConfigChange(r.get(2)?),
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn recommendations(conn: &Connection, q: &HistoryQuery) -> Result<Vec<HistoryEntry>, StoreError> {
    let (cond, extra) = older(q.before, 1, "created_at", "seq");
    let sql = format!(
        "SELECT seq, id, workload_id, run_id, created_at, policy_version, settings_identity,
             cost_delta, summary
         FROM recommendations WHERE workload_id = ?{cond}
         ORDER BY created_at DESC, seq DESC LIMIT ?"
    );
    let mut args = vec![SqlValue::Text(q.workload_id.clone())];
    args.extend(extra);
    args.push(SqlValue::Integer(q.limit as i64 + 1));
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(params_from_iter(args), |r| {
        let rec = RecommendationRow {
            seq: r.get(0)?,
            id: r.get(1)?,
            workload_id: r.get(2)?,
            run_id: r.get(3)?,
            created_at: r.get(4)?,
            policy_version: r.get(5)?,
            settings_identity: r.get(6)?,
            cost_delta: r.get(7)?,
            summary: r.get(8)?,
            analysis: String::new(),
        };
        Ok(HistoryEntry {
            seq: rec.seq,
            time_ms: rec.created_at,
            item: HistoryItem::Recommendation(rec),
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

impl Read<'_> {
    /// One page of the workload's timeline, newest first; the next page continues
    /// below the last entry's cursor.
    pub fn workload_history(
        &self,
        q: &HistoryQuery,
    ) -> Result<Page<HistoryEntry, HistoryCursor>, StoreError> {
        let mut all = events(self.0, q)?;
        all.extend(recommendations(self.0, q)?);
        all.extend(config_changes(self.0, q)?);
        let key = |e: &HistoryEntry| (e.time_ms, e.item.source(), e.seq);
        all.sort_by_key(|e| std::cmp::Reverse(key(e)));
        Ok(Page::of_probe(all, q.limit, |e| HistoryCursor {
            time_ms: e.time_ms,
            source: e.item.source(),
            seq: e.seq,
        }))
    }
}
