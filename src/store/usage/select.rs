//! Reading series back: the series of one cluster whose metric is in a set and whose
//! labels pass every matcher, with their samples in a window (inclusive at both ends)
//! decoded from the chunks that overlap it (closed or open: one to the reader), or
//! without samples (inventory reads).

use std::collections::BTreeSet;

use rusqlite::types::Value;

use super::chunks::{chunk_id, corrupt, slot_of, Border, LAST_MS};
use super::labels::{self, Labels};
use super::{StoreError, UsageRead, SLOT_MS};
use crate::analysis::Sample;
use crate::xor;

/// Which values a label may have. An absent label has the value "", as in PromQL:
/// `NotEqual("")` asks for the label to be present.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Match {
    Equal(String),
    NotEqual(String),
    In(BTreeSet<String>),
}

/// A condition on one label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelMatcher {
    pub name: String,
    pub matches: Match,
}

impl LabelMatcher {
    /// `name="value"`.
    pub fn equal(name: &str, value: &str) -> LabelMatcher {
        LabelMatcher::new(name, Match::Equal(value.to_string()))
    }

    /// `name!="value"`.
    pub fn not_equal(name: &str, value: &str) -> LabelMatcher {
        LabelMatcher::new(name, Match::NotEqual(value.to_string()))
    }

    /// The label's value is one of `values`.
    pub fn one_of<I, S>(name: &str, values: I) -> LabelMatcher
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        LabelMatcher::new(
            name,
            Match::In(values.into_iter().map(Into::into).collect()),
        )
    }

    fn new(name: &str, matches: Match) -> LabelMatcher {
        LabelMatcher {
            name: name.to_string(),
            matches,
        }
    }

    /// True when `labels` pass.
    pub fn accepts(&self, labels: &Labels) -> bool {
        let value = labels.get(&self.name).map(String::as_str).unwrap_or("");
        match &self.matches {
            Match::Equal(v) => value == v,
            Match::NotEqual(v) => value != v,
            Match::In(set) => set.contains(value),
        }
    }
}

/// Which series to read, and the window of their samples.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeriesQuery {
    pub cluster: String,
    /// Metric names (`__name__`); none selects nothing.
    pub metrics: BTreeSet<String>,
    /// Every one must pass.
    pub matchers: Vec<LabelMatcher>,
    /// Samples with `from_ms <= t <= to_ms`; series without any are left out.
    pub from_ms: i64,
    pub to_ms: i64,
}

impl SeriesQuery {
    /// `cluster`'s series of `metrics`, all labels, all time.
    pub fn new<I, S>(cluster: &str, metrics: I) -> SeriesQuery
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        SeriesQuery {
            cluster: cluster.to_string(),
            metrics: metrics.into_iter().map(Into::into).collect(),
            matchers: Vec::new(),
            from_ms: i64::MIN,
            to_ms: i64::MAX,
        }
    }

    /// Adds a matcher.
    pub fn matching(mut self, matcher: LabelMatcher) -> SeriesQuery {
        self.matchers.push(matcher);
        self
    }

    /// Sets the window (inclusive).
    pub fn between(mut self, from_ms: i64, to_ms: i64) -> SeriesQuery {
        self.from_ms = from_ms;
        self.to_ms = to_ms;
        self
    }
}

/// A series and its samples in the window, in time order.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredSeries {
    pub labels: Labels,
    pub samples: Vec<Sample>,
}

/// A series without its samples: labels and the times of its first and last sample.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeriesInfo {
    pub labels: Labels,
    pub first_ms: i64,
    pub last_ms: i64,
}

/// A series row that passed the query.
struct Found {
    id: i64,
    info: SeriesInfo,
}

impl UsageRead<'_> {
    /// The series `q` selects with their samples in its window, ordered by their
    /// canonical text (`metric{a="x",…}`).
    pub fn select(&self, q: &SeriesQuery) -> Result<Vec<StoredSeries>, StoreError> {
        let mut out = Vec::new();
        let border = Border::read(self.conn)?;
        for found in self.find(q)? {
            let samples = self.samples(border, &found, q.from_ms, q.to_ms)?;
            if !samples.is_empty() {
                out.push(StoredSeries {
                    labels: found.info.labels,
                    samples,
                });
            }
        }
        Ok(out)
    }

    /// The series `q` selects whose first-to-last span meets its window, without
    /// samples (cheap: no chunk is read), in the order of [`UsageRead::select`].
    pub fn series(&self, q: &SeriesQuery) -> Result<Vec<SeriesInfo>, StoreError> {
        Ok(self.find(q)?.into_iter().map(|f| f.info).collect())
    }

    /// The series rows of `q`: SQL narrows by cluster, metric, window and the
    /// `namespace` and `pod` columns; every matcher is then applied to the labels.
    fn find(&self, q: &SeriesQuery) -> Result<Vec<Found>, StoreError> {
        if q.metrics.is_empty() || q.from_ms > q.to_ms {
            return Ok(Vec::new());
        }
        let mut sql = String::from(
            "SELECT id, labels, first_ms, last_ms FROM series
             WHERE cluster = ? AND first_ms <= ? AND last_ms >= ?",
        );
        let mut args = vec![
            Value::Text(q.cluster.clone()),
            Value::Integer(q.to_ms),
            Value::Integer(q.from_ms),
        ];
        in_list(&mut sql, &mut args, "metric", q.metrics.iter());
        for m in q
            .matchers
            .iter()
            .filter(|m| m.name == "namespace" || m.name == "pod")
        {
            match &m.matches {
                Match::Equal(v) => in_list(&mut sql, &mut args, &m.name, [v]),
                Match::In(set) => in_list(&mut sql, &mut args, &m.name, set.iter()),
                Match::NotEqual(_) => {}
            }
        }
        // No ORDER BY: it would steer SQLite to the (cluster, labels) index, a scan of
        // the cluster's every series, instead of (cluster, metric, namespace, pod).
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(rusqlite::params_from_iter(args), |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get(2)?,
                r.get(3)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (id, text, first_ms, last_ms) = row?;
            let labels = labels::parse(&text).ok_or_else(|| {
                let why = format!("series {id}: unreadable labels {text:?}");
                rusqlite::Error::FromSqlConversionFailure(
                    1,
                    rusqlite::types::Type::Text,
                    why.into(),
                )
            })?;
            if q.matchers.iter().all(|m| m.accepts(&labels)) {
                let info = SeriesInfo {
                    labels,
                    first_ms,
                    last_ms,
                };
                out.push((text, Found { id, info }));
            }
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out.into_iter().map(|(_, found)| found).collect())
    }

    /// `found`'s samples with `from <= t <= to`: its chunk of each slot of the window
    /// that its span meets, from whichever table holds it (`border`, read once for all
    /// the series of a call, so they come from one snapshot).
    fn samples(
        &self,
        border: Border,
        found: &Found,
        from: i64,
        to: i64,
    ) -> Result<Vec<Sample>, StoreError> {
        let first = slot_of(from.max(found.info.first_ms).max(0));
        let last = slot_of(to.min(found.info.last_ms).min(LAST_MS));
        let mut out = Vec::new();
        let mut closed = self
            .conn
            .prepare_cached("SELECT data FROM chunks WHERE id = ?1")?;
        let mut open = self
            .conn
            .prepare_cached("SELECT data FROM open_chunks WHERE id = ?1")?;
        for slot in (first..=last).step_by(SLOT_MS as usize) {
            let id = chunk_id(found.id, slot);
            let stmt = if border.closed(id) {
                &mut closed
            } else {
                &mut open
            };
            let mut rows = stmt.query([id])?;
            if let Some(row) = rows.next()? {
                let data = row.get_ref(0)?.as_blob().map_err(rusqlite::Error::from)?;
                xor::decode(data, from, to, &mut out).map_err(|e| corrupt(found.id, slot, e))?;
            }
        }
        Ok(out)
    }
}

/// Appends ` AND column IN (?, …)` with `values` to a query.
fn in_list<'v>(
    sql: &mut String,
    args: &mut Vec<Value>,
    column: &str,
    values: impl IntoIterator<Item = &'v String>,
) {
    let start = args.len();
    args.extend(values.into_iter().map(|v| Value::Text(v.clone())));
    let marks = vec!["?"; args.len() - start].join(", ");
    sql.push_str(&format!(" AND {column} IN ({marks})"));
}
