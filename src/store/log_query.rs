//! The query shape shared by both audit trails over `audit_events`: optional equality
//! filters, an event-time window, and a page of the log newest first below a cursor
//! (`seq`), read one row past the limit to know whether more follow.

use rusqlite::{types::Value as SqlValue, Connection, Row};

use super::{Page, StoreError};

/// A statement under construction: `SELECT … WHERE <first condition>` plus `AND …`.
pub(super) struct LogQuery {
    sql: String,
    args: Vec<SqlValue>,
}

impl LogQuery {
    /// Starts from `select_where` (ending in a condition with one `?`) and its value.
    pub(super) fn new(select_where: &str, first: SqlValue) -> Self {
        LogQuery {
            sql: select_where.to_string(),
            args: vec![first],
        }
    }

    /// Adds `AND cond` (one `?`) when `value` is set.
    pub(super) fn and(&mut self, cond: &str, value: Option<SqlValue>) {
        if let Some(v) = value {
            self.sql.push_str(" AND ");
            self.sql.push_str(cond);
            self.args.push(v);
        }
    }

    /// Adds `AND col = ?` for each set text filter.
    pub(super) fn equal(&mut self, filters: &[(&str, &Option<String>)]) {
        for (col, value) in filters {
            self.and(&format!("{col} = ?"), (*value).clone().map(SqlValue::from));
        }
    }

    /// Event time in `[since, until)` and log position below `before_seq`.
    pub(super) fn window(
        &mut self,
        since: Option<i64>,
        until: Option<i64>,
        before_seq: Option<i64>,
    ) {
        self.and("time_ms >= ?", since.map(SqlValue::from));
        self.and("time_ms < ?", until.map(SqlValue::from));
        self.and("seq < ?", before_seq.map(SqlValue::from));
    }

    /// Adds `AND cond` where `cond` was built by `build`, which records its parameters.
    pub(super) fn and_with(
        &mut self,
        build: impl FnOnce(&mut dyn FnMut(SqlValue) -> String) -> String,
    ) {
        let args = &mut self.args;
        let cond = build(&mut |v| {
            args.push(v);
            "?".to_string()
        });
        self.sql.push_str(" AND ");
        self.sql.push_str(&cond);
    }

    /// Newest first, at most `limit` rows; the cursor of the next page when more follow.
    pub(super) fn page<T>(
        mut self,
        conn: &Connection,
        limit: usize,
        row: impl FnMut(&Row<'_>) -> rusqlite::Result<T>,
        seq_of: impl FnOnce(&T) -> i64,
    ) -> Result<Page<T>, StoreError> {
        self.sql.push_str(" ORDER BY seq DESC LIMIT ?");
        self.args.push(((limit + 1) as i64).into());
        let mut stmt = conn.prepare_cached(&self.sql)?;
        let rows = stmt
            .query_map(rusqlite::params_from_iter(self.args), row)?
            .collect::<Result<Vec<T>, _>>()?;
        Ok(Page::of_probe(rows, limit, seq_of))
    }
}
