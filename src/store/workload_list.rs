//! Workload lists: the filters (exact, prefix and glob matches, team scope), the sort
//! orders with keyset pagination, and the latest recommendation's summary beside each
//! row, so a list shows current → recommended values without a second query.

use rusqlite::params_from_iter;
use rusqlite::types::Value;

use super::workloads::{from_row_at, WorkloadRow, COLUMNS, COLUMN_COUNT};
use super::{Page, Read, StoreError};

/// Sort orders of the workload list. Every key sorts in one direction, id last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkloadSort {
    Name,
    /// The signed saving: biggest saving first (descending), extra spend last.
    Savings,
    /// The size of the cost change in either direction.
    Impact,
    /// What a recommendation protects against, then the biggest extra spend.
    Risk,
    Confidence,
}

impl WorkloadSort {
    /// The SQL sort keys (each backed by an index of `workloads`).
    fn keys(self) -> &'static [&'static str] {
        match self {
            WorkloadSort::Name => &["w.name"],
            WorkloadSort::Savings => &["w.monthly_savings"],
            WorkloadSort::Impact => &["abs(w.monthly_savings)"],
            WorkloadSort::Risk => &["w.risk", "-w.monthly_savings"],
            WorkloadSort::Confidence => &["w.confidence"],
        }
    }
}

/// One sort key value of a keyset position.
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

    fn read(v: rusqlite::types::ValueRef<'_>) -> SortValue {
        use rusqlite::types::ValueRef;
        match v {
            ValueRef::Integer(i) => SortValue::Integer(i),
            ValueRef::Real(f) => SortValue::Real(f),
            ValueRef::Text(t) => SortValue::Text(String::from_utf8_lossy(t).into_owned()),
            ValueRef::Null | ValueRef::Blob(_) => SortValue::Integer(0),
        }
    }
}

/// Where the previous page ended: its last item's sort keys and id.
#[derive(Debug, Clone, PartialEq)]
pub struct Position {
    pub keys: Vec<SortValue>,
    pub id: String,
}

impl Position {
    /// After the workload named `name` with id `id` in the name order.
    pub fn by_name(name: &str, id: &str) -> Position {
        Position {
            keys: vec![SortValue::Text(name.to_string())],
            id: id.to_string(),
        }
    }
}

/// A match on a name: `Prefix("sho")` finds `shop` and `shopping`; `Glob("shop-*")`
/// follows `*` (any run) and `?` (one character), anchored at both ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NameMatch {
    Exact(String),
    Prefix(String),
    Glob(String),
}

impl NameMatch {
    /// A filter as people type it: a glob when it has `*` or `?`, else a prefix.
    pub fn typed(text: &str) -> NameMatch {
        if text.contains(['*', '?']) {
            NameMatch::Glob(text.to_string())
        } else {
            NameMatch::Prefix(text.to_string())
        }
    }

    /// The SQLite GLOB pattern: only `*` and `?` stay special (`[` is escaped).
    fn glob(&self) -> String {
        let escape = |s: &str| s.replace('[', "[[]");
        match self {
            NameMatch::Exact(s) => escape(s).replace('*', "[*]").replace('?', "[?]"),
            NameMatch::Prefix(s) => {
                format!("{}*", escape(s).replace('*', "[*]").replace('?', "[?]"))
            }
            NameMatch::Glob(s) => escape(s),
        }
    }
}

/// Filters, sort and keyset position of a workload page. The default is the first 100
/// workloads of every cluster by name.
#[derive(Debug, Clone)]
pub struct WorkloadFilter {
    pub cluster: Option<String>,
    pub namespace: Option<NameMatch>,
    pub name: Option<NameMatch>,
    pub kind: Option<String>,
    /// Substring of the name (case-insensitive).
    pub search: Option<String>,
    pub has_recommendation: Option<bool>,
    pub data_quality: Option<String>,
    pub notice: Option<String>,
    pub stale: Option<bool>,
    /// Only workloads whose recommendation reduces a risk (`risk > 0`), or none of them.
    pub risky: Option<bool>,
    pub sort: WorkloadSort,
    pub descending: bool,
    /// Where the previous page ended.
    pub after: Option<Position>,
    pub limit: usize,
    /// Team scope: only workloads inside these cluster/namespace patterns (`None`: all).
    pub scopes: Option<Vec<super::NamespacePattern>>,
}

impl Default for WorkloadFilter {
    fn default() -> Self {
        WorkloadFilter {
            cluster: None,
            namespace: None,
            name: None,
            kind: None,
            search: None,
            has_recommendation: None,
            data_quality: None,
            notice: None,
            stale: None,
            risky: None,
            sort: WorkloadSort::Name,
            descending: false,
            after: None,
            limit: 100,
            scopes: None,
        }
    }
}

/// A statement's text and its numbered parameters, built together.
#[derive(Default)]
pub(super) struct Sql {
    pub text: String,
    pub args: Vec<Value>,
}

impl Sql {
    /// Appends `clause` with each `?` numbered for `values` in order.
    pub fn push(&mut self, clause: &str, values: impl IntoIterator<Item = Value>) {
        let mut values = values.into_iter();
        for (i, part) in clause.split('?').enumerate() {
            if i > 0 {
                self.args
                    .push(values.next().expect("one value for each placeholder"));
                self.text.push_str(&format!("?{}", self.args.len()));
            }
            self.text.push_str(part);
        }
    }

    /// A placeholder for `v`.
    pub fn param(&mut self, v: Value) -> String {
        self.args.push(v);
        format!("?{}", self.args.len())
    }
}

/// The `WHERE` conditions of `f` (no sort, no position), appended to `sql`.
pub(super) fn push_conditions(sql: &mut Sql, f: &WorkloadFilter) {
    let text = |v: &String| Value::Text(v.clone());
    for (clause, value) in [
        (" AND w.cluster = ?", &f.cluster),
        (" AND w.kind = ?", &f.kind),
        (" AND w.data_quality = ?", &f.data_quality),
    ] {
        if let Some(v) = value {
            sql.push(clause, [text(v)]);
        }
    }
    if let Some(m) = &f.namespace {
        sql.push(" AND w.namespace GLOB ?", [Value::Text(m.glob())]);
    }
    if let Some(m) = &f.name {
        sql.push(" AND w.name GLOB ?", [Value::Text(m.glob())]);
    }
    if let Some(s) = &f.search {
        let pattern = format!("%{}%", s.replace(['%', '_', '\\'], ""));
        sql.push(" AND w.name LIKE ?", [Value::Text(pattern)]);
    }
    if let Some(n) = &f.notice {
        sql.push(" AND w.notices LIKE ?", [Value::Text(format!("%,{n},%"))]);
    }
    for (flag, yes, no) in [
        (
            f.has_recommendation,
            " AND w.has_changes = 1",
            " AND w.has_changes = 0",
        ),
        (f.stale, " AND w.stale = 1", " AND w.stale = 0"),
        (f.risky, " AND w.risk > 0", " AND w.risk = 0"),
    ] {
        if let Some(b) = flag {
            sql.text.push_str(if b { yes } else { no });
        }
    }
    if let Some(scopes) = &f.scopes {
        let cond = super::teams::scope_condition(scopes, "w.cluster", "w.namespace", &mut |v| {
            sql.param(v)
        });
        sql.text.push_str(&format!(" AND {cond}"));
    }
}

/// One listed workload: the row, its latest recommendation's summary (JSON) and its
/// sort keys (for the next page's position).
#[derive(Debug, Clone, PartialEq)]
pub struct ListedWorkload {
    pub row: WorkloadRow,
    pub summary: Option<String>,
    /// When the latest recommendation was made (Unix ms).
    pub made_at: Option<i64>,
    pub keys: Vec<SortValue>,
}

impl Read<'_> {
    /// A page of workloads with summaries; the next page continues after the last
    /// item's position.
    pub fn list_workload_page(
        &self,
        f: &WorkloadFilter,
    ) -> Result<Page<ListedWorkload, Position>, StoreError> {
        let keys = f.sort.keys();
        let mut sql = Sql {
            text: format!(
                "SELECT {COLUMNS}, r.summary, r.created_at, {} FROM workloads w
                 LEFT JOIN recommendations r ON r.id = w.latest_rec_id WHERE 1 = 1",
                keys.join(", ")
            ),
            args: Vec::new(),
        };
        push_conditions(&mut sql, f);
        let (cmp, dir) = if f.descending {
            ("<", "DESC")
        } else {
            (">", "ASC")
        };
        if let Some(p) = &f.after {
            if p.keys.len() == keys.len() {
                let marks = vec!["?"; keys.len() + 1].join(", ");
                let values = p
                    .keys
                    .iter()
                    .map(SortValue::sql)
                    .chain([Value::Text(p.id.clone())]);
                sql.push(
                    &format!(" AND ({}, w.id) {cmp} ({marks})", keys.join(", ")),
                    values,
                );
            }
        }
        let order: Vec<String> = keys
            .iter()
            .chain(&["w.id"])
            .map(|k| format!("{k} {dir}"))
            .collect();
        sql.text.push_str(&format!(
            " ORDER BY {} LIMIT {}",
            order.join(", "),
            f.limit + 1
        ));
        let mut stmt = self.0.prepare(&sql.text)?;
        let rows: Vec<ListedWorkload> = stmt
            .query_map(params_from_iter(sql.args), |r| {
                Ok(ListedWorkload {
                    row: from_row_at(r, 0)?,
                    summary: r.get(COLUMN_COUNT)?,
                    made_at: r.get(COLUMN_COUNT + 1)?,
                    keys: (0..keys.len())
                        .map(|i| r.get_ref(COLUMN_COUNT + 2 + i).map(SortValue::read))
                        .collect::<Result<_, _>>()?,
                })
            })?
            .collect::<Result<_, _>>()?;
        Ok(Page::of_probe(rows, f.limit, |last| Position {
            keys: last.keys.clone(),
            id: last.row.seen.id.clone(),
        }))
    }

    /// A page of workloads; the next page continues after the last one's position.
    pub fn list_workloads(
        &self,
        f: &WorkloadFilter,
    ) -> Result<Page<WorkloadRow, Position>, StoreError> {
        Ok(self.list_workload_page(f)?.map(|i| i.row))
    }
}

#[cfg(test)]
#[path = "workloads_tests.rs"]
mod tests;
