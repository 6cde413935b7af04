//! The `workloads` table: every workload seen by a run, stable across runs, with the
//! denormalized columns of its latest recommendation that lists filter and sort on.

use rusqlite::types::Value;
use rusqlite::{params, params_from_iter, Connection, OptionalExtension};

use super::StoreError;

/// A workload as one run saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadSeen {
    pub id: String,
    pub cluster: String,
    pub namespace: String,
    pub kind: String,
    pub name: String,
    pub uid: String,
    pub replicas: Option<i64>,
    /// JSON object.
    pub labels: String,
    /// JSON array: per container requests/limits in force.
    pub current: String,
}

/// A stored workload.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadRow {
    pub seen: WorkloadSeen,
    pub first_seen_at: i64,
    pub last_seen_at: i64,
    pub last_run_id: String,
    pub stale: bool,
    pub stale_reason: Option<String>,
    pub stale_since: Option<i64>,
    pub latest_rec_id: Option<String>,
    pub has_changes: bool,
    pub data_quality: Option<String>,
    /// `,a,b,` (empty when none).
    pub notices: String,
    /// Lowest recommendation confidence; -1 when none.
    pub confidence: i64,
    pub cost_delta: Option<f64>,
    pub monthly_savings: f64,
}

/// Sort orders of the workload list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkloadSort {
    Name,
    Savings,
    Confidence,
}

impl WorkloadSort {
    fn column(self) -> &'static str {
        match self {
            WorkloadSort::Name => "name",
            WorkloadSort::Savings => "monthly_savings",
            WorkloadSort::Confidence => "confidence",
        }
    }
}

/// The sort value of a keyset position (the column's value in the last item).
#[derive(Debug, Clone, PartialEq)]
pub enum SortValue {
    Text(String),
    Real(f64),
    Integer(i64),
}

impl SortValue {
    fn sql(&self) -> Value {
        match self {
            SortValue::Text(s) => Value::Text(s.clone()),
            SortValue::Real(v) => Value::Real(*v),
            SortValue::Integer(v) => Value::Integer(*v),
        }
    }
}

/// Filters, sort and keyset position of a workload page. The default is the first 100
/// workloads of every cluster by name.
#[derive(Debug, Clone)]
pub struct WorkloadFilter {
    pub cluster: Option<String>,
    pub namespace: Option<String>,
    pub kind: Option<String>,
    /// Substring of the name (case-insensitive).
    pub search: Option<String>,
    pub has_recommendation: Option<bool>,
    pub data_quality: Option<String>,
    pub notice: Option<String>,
    pub stale: Option<bool>,
    pub sort: WorkloadSort,
    pub descending: bool,
    /// The (sort value, id) of the last item of the previous page.
    pub after: Option<(SortValue, String)>,
    pub limit: usize,
    /// Team scope: only workloads inside these cluster/namespace patterns (`None`: all).
    pub scopes: Option<Vec<super::NamespacePattern>>,
}

impl Default for WorkloadFilter {
    fn default() -> Self {
        WorkloadFilter {
            cluster: None,
            namespace: None,
            kind: None,
            search: None,
            has_recommendation: None,
            data_quality: None,
            notice: None,
            stale: None,
            sort: WorkloadSort::Name,
            descending: false,
            after: None,
            limit: 100,
            scopes: None,
        }
    }
}

pub(super) const COLUMNS: &str = "w.id, w.cluster, w.namespace, w.kind, w.name, w.uid, \
    w.replicas, w.labels, w.current, w.first_seen_at, w.last_seen_at, w.last_run_id, w.stale, \
    w.stale_reason, w.stale_since, w.latest_rec_id, w.has_changes, w.data_quality, w.notices, \
    w.confidence, w.cost_delta, w.monthly_savings";

/// Reads the 22 [`COLUMNS`] starting at `at`.
pub(super) fn from_row_at(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<WorkloadRow> {
    Ok(WorkloadRow {
        seen: WorkloadSeen {
            id: r.get(at)?,
            cluster: r.get(at + 1)?,
            namespace: r.get(at + 2)?,
            kind: r.get(at + 3)?,
            name: r.get(at + 4)?,
            uid: r.get(at + 5)?,
            replicas: r.get(at + 6)?,
            labels: r.get(at + 7)?,
            current: r.get(at + 8)?,
        },
        first_seen_at: r.get(at + 9)?,
        last_seen_at: r.get(at + 10)?,
        last_run_id: r.get(at + 11)?,
        stale: r.get(at + 12)?,
        stale_reason: r.get(at + 13)?,
        stale_since: r.get(at + 14)?,
        latest_rec_id: r.get(at + 15)?,
        has_changes: r.get(at + 16)?,
        data_quality: r.get(at + 17)?,
        notices: r.get(at + 18)?,
        confidence: r.get(at + 19)?,
        cost_delta: r.get(at + 20)?,
        monthly_savings: r.get(at + 21)?,
    })
}

/// Inserts or refreshes a workload seen by run `run_id` at `now_ms`.
pub fn upsert_seen(
    conn: &Connection,
    w: &WorkloadSeen,
    run_id: &str,
    now_ms: i64,
) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO workloads (id, cluster, namespace, kind, name, uid, replicas, labels,
             current, first_seen_at, last_seen_at, last_run_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10, ?11)
         ON CONFLICT (id) DO UPDATE SET uid = excluded.uid, replicas = excluded.replicas,
             labels = excluded.labels, current = excluded.current,
             last_seen_at = excluded.last_seen_at, last_run_id = excluded.last_run_id",
        params![
            w.id,
            w.cluster,
            w.namespace,
            w.kind,
            w.name,
            w.uid,
            w.replicas,
            w.labels,
            w.current,
            now_ms,
            run_id
        ],
    )?;
    Ok(())
}

/// Marks a workload stale (keeping its latest recommendation); `stale_since` keeps the
/// first time it went stale.
pub fn mark_stale(
    conn: &Connection,
    workload_id: &str,
    reason: &str,
    now_ms: i64,
) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE workloads SET stale = 1, stale_reason = ?2,
             stale_since = COALESCE(stale_since, ?3) WHERE id = ?1",
        params![workload_id, reason, now_ms],
    )?;
    Ok(())
}

/// Marks stale every workload of `cluster` that run `run_id` did not see; returns how
/// many went stale now.
pub fn mark_absent_stale(
    conn: &Connection,
    cluster: &str,
    run_id: &str,
    reason: &str,
    now_ms: i64,
) -> Result<usize, StoreError> {
    Ok(conn.execute(
        "UPDATE workloads SET stale = 1, stale_reason = ?3, stale_since = ?4
         WHERE cluster = ?1 AND last_run_id != ?2 AND stale = 0",
        params![cluster, run_id, reason, now_ms],
    )?)
}

/// One workload by id.
pub fn get_workload(conn: &Connection, id: &str) -> Result<Option<WorkloadRow>, StoreError> {
    Ok(conn
        .query_row(
            &format!("SELECT {COLUMNS} FROM workloads w WHERE w.id = ?1"),
            [id],
            |r| from_row_at(r, 0),
        )
        .optional()?)
}

/// A page of workloads and whether more follow.
pub fn list_workloads(
    conn: &Connection,
    f: &WorkloadFilter,
) -> Result<(Vec<WorkloadRow>, bool), StoreError> {
    let mut sql = format!("SELECT {COLUMNS} FROM workloads w WHERE 1 = 1");
    let mut args: Vec<Value> = Vec::new();
    let mut push = |sql: &mut String, clause: &str, v: Value| {
        args.push(v);
        sql.push_str(&clause.replace("?", &format!("?{}", args.len())));
    };
    for (clause, value) in [
        (" AND w.cluster = ?", &f.cluster),
        (" AND w.namespace = ?", &f.namespace),
        (" AND w.kind = ?", &f.kind),
        (" AND w.data_quality = ?", &f.data_quality),
    ] {
        if let Some(v) = value {
            push(&mut sql, clause, Value::Text(v.clone()));
        }
    }
    if let Some(s) = &f.search {
        let pattern = format!("%{}%", s.replace(['%', '_', '\\'], ""));
        push(&mut sql, " AND w.name LIKE ?", Value::Text(pattern));
    }
    if let Some(n) = &f.notice {
        push(
            &mut sql,
            " AND w.notices LIKE ?",
            Value::Text(format!("%,{n},%")),
        );
    }
    if let Some(b) = f.has_recommendation {
        sql.push_str(if b {
            " AND w.has_changes = 1"
        } else {
            " AND w.has_changes = 0"
        });
    }
    if let Some(b) = f.stale {
        sql.push_str(if b {
            " AND w.stale = 1"
        } else {
            " AND w.stale = 0"
        });
    }
    let col = f.sort.column();
    let (cmp, dir) = if f.descending {
        ("<", "DESC")
    } else {
        (">", "ASC")
    };
    if let Some((value, id)) = &f.after {
        push(&mut sql, &format!(" AND (w.{col} {cmp} ?"), value.sql());
        push(&mut sql, &format!(" OR (w.{col} = ?"), value.sql());
        push(
            &mut sql,
            &format!(" AND w.id {cmp} ?))"),
            Value::Text(id.clone()),
        );
    }
    if let Some(scopes) = &f.scopes {
        let cond = super::teams::scope_condition(scopes, "w.cluster", "w.namespace", &mut |v| {
            args.push(v);
            format!("?{}", args.len())
        });
        sql.push_str(&format!(" AND {cond}"));
    }
    sql.push_str(&format!(
        " ORDER BY w.{col} {dir}, w.id {dir} LIMIT {}",
        f.limit + 1
    ));
    let mut stmt = conn.prepare(&sql)?;
    let mut items: Vec<WorkloadRow> = stmt
        .query_map(params_from_iter(args), |r| from_row_at(r, 0))?
        .collect::<Result<_, _>>()?;
    let more = items.len() > f.limit;
    items.truncate(f.limit);
    Ok((items, more))
}

impl super::Store {
    /// See [`get_workload`].
    pub async fn workload(&self, id: String) -> Result<Option<WorkloadRow>, StoreError> {
        self.read(move |c| get_workload(c, &id)).await
    }

    /// See [`list_workloads`].
    pub async fn list_workloads(
        &self,
        filter: WorkloadFilter,
    ) -> Result<(Vec<WorkloadRow>, bool), StoreError> {
        self.read(move |c| list_workloads(c, &filter)).await
    }
}

#[cfg(test)]
#[path = "workloads_tests.rs"]
mod tests;
