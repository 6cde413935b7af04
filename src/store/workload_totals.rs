//! Workload totals: counts, data quality, notices and the money of the latest
//! recommendations, for everything a workload filter matches, grouped by cluster,
//! namespace, a label's value or team (one query per team, since a workload may be in
//! several).

use rusqlite::types::Value;
use rusqlite::{params_from_iter, Connection};

use super::workload_list::{push_conditions, Sql, WorkloadFilter};
use super::{NamespacePattern, Read, StoreError};

/// Notices counted per group.
pub const COUNTED_NOTICES: [&str; 3] = [
    "oom-kill-detected",
    "potential-memory-leak",
    "previous-release-usage",
];

/// How workloads are grouped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupBy {
    /// One group for everything.
    Nothing,
    Cluster,
    /// By cluster and namespace (a namespace name means nothing across clusters).
    Namespace,
    /// By the value of one workload label (`None`: without the label).
    Label(String),
    /// By team, from each team's namespace patterns; a workload in no team's namespaces
    /// is in the group without a team.
    Team(Vec<(String, Vec<NamespacePattern>)>),
}

/// The totals of one group.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WorkloadTotals {
    /// The group's key parts (`cluster`, `namespace`, `label` or `team`); `None` for
    /// workloads without the label, or in no team.
    pub key: Vec<(&'static str, Option<String>)>,
    pub workloads: i64,
    /// The latest recommendation suggests a change.
    pub with_changes: i64,
    pub available: i64,
    pub partial: i64,
    pub unavailable: i64,
    /// Seen, never analysed.
    pub without_recommendation: i64,
    pub stale: i64,
    /// The recommendation reduces a risk (OOM kill, leak, requests raised).
    pub risky: i64,
    /// Counts of [`COUNTED_NOTICES`], in that order.
    pub notices: [i64; 3],
    /// Sum of savings (positive).
    pub savings: f64,
    /// Sum of extra spend (positive).
    pub extra_spend: f64,
    /// Analysed workloads without a cost estimate (replicas unknown).
    pub without_estimate: i64,
    /// The monthly savings kerf's live changes realized (`runs::realized`): of changes
    /// applied in the last 7 days, the last 30 days, and all of them.
    pub realized: [f64; 3],
    /// Workloads with a live change.
    pub changed: i64,
}

const AGGREGATES: &str = "COUNT(*), \
    COALESCE(SUM(w.has_changes), 0), \
    COALESCE(SUM(w.data_quality = 'available'), 0), \
    COALESCE(SUM(w.data_quality = 'partial'), 0), \
    COALESCE(SUM(w.data_quality = 'unavailable'), 0), \
    COALESCE(SUM(w.latest_rec_id IS NULL), 0), \
    COALESCE(SUM(w.stale), 0), \
    COALESCE(SUM(w.risk > 0), 0), \
    COALESCE(SUM(w.notices LIKE '%,oom-kill-detected,%'), 0), \
    COALESCE(SUM(w.notices LIKE '%,potential-memory-leak,%'), 0), \
    COALESCE(SUM(w.notices LIKE '%,previous-release-usage,%'), 0), \
    COALESCE(SUM(CASE WHEN w.cost_delta < 0 THEN -w.cost_delta ELSE 0 END), 0.0), \
    COALESCE(SUM(CASE WHEN w.cost_delta > 0 THEN w.cost_delta ELSE 0 END), 0.0), \
    COALESCE(SUM(w.latest_rec_id IS NOT NULL AND w.cost_delta IS NULL), 0), \
    COALESCE(SUM(CASE WHEN l.applied_at >= ? THEN l.realized_monthly ELSE 0 END), 0.0), \
    COALESCE(SUM(CASE WHEN l.applied_at >= ? THEN l.realized_monthly ELSE 0 END), 0.0), \
    COALESCE(SUM(l.realized_monthly), 0.0), \
    COUNT(l.workload_id)";

/// The tables [`AGGREGATES`] reads.
const FROM: &str = "workloads w LEFT JOIN live_changes l ON l.workload_id = w.id";

/// The parameters of [`AGGREGATES`]: where this week and this month start.
fn periods(now_ms: i64) -> [Value; 2] {
    const DAY_MS: i64 = 86_400_000;
    [
        Value::Integer(now_ms - 7 * DAY_MS),
        Value::Integer(now_ms - 30 * DAY_MS),
    ]
}

fn totals_at(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<WorkloadTotals> {
    Ok(WorkloadTotals {
        key: Vec::new(),
        workloads: r.get(at)?,
        with_changes: r.get(at + 1)?,
        available: r.get(at + 2)?,
        partial: r.get(at + 3)?,
        unavailable: r.get(at + 4)?,
        without_recommendation: r.get(at + 5)?,
        stale: r.get(at + 6)?,
        risky: r.get(at + 7)?,
        notices: [r.get(at + 8)?, r.get(at + 9)?, r.get(at + 10)?],
        savings: r.get(at + 11)?,
        extra_spend: r.get(at + 12)?,
        without_estimate: r.get(at + 13)?,
        realized: [r.get(at + 14)?, r.get(at + 15)?, r.get(at + 16)?],
        changed: r.get(at + 17)?,
    })
}

impl Read<'_> {
    /// The totals of what `f` matches (its sort, position and limit are ignored),
    /// grouped by `by`; groups in key order, empty groups left out. `now_ms` places
    /// this week and this month for the realized savings.
    pub fn workload_totals(
        &self,
        f: &WorkloadFilter,
        by: &GroupBy,
        now_ms: i64,
    ) -> Result<Vec<WorkloadTotals>, StoreError> {
        let conn = self.0;
        let (key_exprs, names): (Vec<String>, Vec<&'static str>) = match by {
            GroupBy::Nothing | GroupBy::Team(_) => (vec![], vec![]),
            GroupBy::Cluster => (vec!["w.cluster".into()], vec!["cluster"]),
            GroupBy::Namespace => (
                vec!["w.cluster".into(), "w.namespace".into()],
                vec!["cluster", "namespace"],
            ),
            GroupBy::Label(_) => (vec!["json_extract(w.labels, ?)".into()], vec!["label"]),
        };
        if let GroupBy::Team(teams) = by {
            return team_totals(conn, f, teams, now_ms);
        }
        let mut sql = Sql::default();
        let select: Vec<String> = key_exprs.iter().map(|k| format!("{k}, ")).collect();
        let label_path = match by {
            GroupBy::Label(key) => Some(Value::Text(format!("$.\"{}\"", key.replace('"', "")))),
            _ => None,
        };
        sql.push(
            &format!(
                "SELECT {}{AGGREGATES} FROM {FROM} WHERE 1 = 1",
                select.concat()
            ),
            label_path.into_iter().chain(periods(now_ms)),
        );
        push_conditions(&mut sql, f);
        if !names.is_empty() {
            let positions: Vec<String> = (1..=names.len()).map(|i| i.to_string()).collect();
            sql.text
                .push_str(&format!(" GROUP BY {0} ORDER BY {0}", positions.join(", ")));
        }
        let mut stmt = conn.prepare(&sql.text)?;
        let rows = stmt.query_map(params_from_iter(sql.args), |r| {
            let mut t = totals_at(r, names.len())?;
            for (i, name) in names.iter().enumerate() {
                t.key.push((name, r.get::<_, Option<String>>(i)?));
            }
            Ok(t)
        })?;
        let all: Vec<WorkloadTotals> = rows.collect::<Result<_, _>>()?;
        Ok(all.into_iter().filter(|t| t.workloads > 0).collect())
    }
}

fn team_totals(
    conn: &Connection,
    f: &WorkloadFilter,
    teams: &[(String, Vec<NamespacePattern>)],
    now_ms: i64,
) -> Result<Vec<WorkloadTotals>, StoreError> {
    let mut out = Vec::new();
    let one = |extra: &dyn Fn(&mut Sql)| -> Result<WorkloadTotals, StoreError> {
        let mut sql = Sql::default();
        sql.push(
            &format!("SELECT {AGGREGATES} FROM {FROM} WHERE 1 = 1"),
            periods(now_ms),
        );
        push_conditions(&mut sql, f);
        extra(&mut sql);
        Ok(conn.query_row(&sql.text, params_from_iter(sql.args), |r| totals_at(r, 0))?)
    };
    for (name, patterns) in teams {
        let mut t = one(&|sql: &mut Sql| {
            let cond =
                super::teams::scope_condition(patterns, "w.cluster", "w.namespace", &mut |v| {
                    sql.param(v)
                });
            sql.text.push_str(&format!(" AND {cond}"));
        })?;
        t.key.push(("team", Some(name.clone())));
        out.push(t);
    }
    let all: Vec<NamespacePattern> = teams.iter().flat_map(|(_, p)| p.clone()).collect();
    let mut rest = one(&|sql: &mut Sql| {
        let cond =
            super::teams::scope_condition(&all, "w.cluster", "w.namespace", &mut |v| sql.param(v));
        sql.text.push_str(&format!(" AND NOT {cond}"));
    })?;
    rest.key.push(("team", None));
    out.push(rest);
    Ok(out.into_iter().filter(|t| t.workloads > 0).collect())
}
