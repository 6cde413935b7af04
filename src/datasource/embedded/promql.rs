//! The PromQL of kerf's queries (docs/contracts/datasource.md) evaluated on stored raw
//! samples, as Prometheus evaluates it:
//! - a range `x[d]` at `t` holds the samples of `(t − d, t]` (Prometheus 3; 2.x also
//!   takes one exactly at `t − d`), never a staleness marker, with their own times;
//! - an instant selector at `t` takes each series' latest sample of the 5-minute
//!   lookback `(t − 5m, t]`, none when that sample is a marker, stamped `t` (an instant
//!   query stamps its answer with the evaluation time);
//! - `last_over_time` and `max_over_time` take a range's last and largest value;
//! - `max by (…)` keeps the named labels, its groups in the order of their first
//!   series, a NaN losing to any number.
//!
//! Series come in label order, as Prometheus's storage gives them. Long ranges are read
//! slot by slot (the store's 2-hour chunks), so no read holds more than one slot of the
//! series it selects.

use std::collections::{BTreeMap, BTreeSet};

use crate::analysis::Sample;
use crate::datasource::prometheus::samples::STALE_NAN_BITS;
use crate::datasource::raw::{label, Labels, RawSeries};
use crate::store::usage::{slot_of, LabelMatcher, SeriesInfo, SeriesQuery, SLOT_MS};
use crate::store::{StoreError, UsageRead};

/// Prometheus's default lookback delta: how old an instant selector's sample may be.
pub const LOOKBACK_MS: i64 = 5 * 60_000;

/// A staleness marker (only that NaN: any other is a value, as in Prometheus).
pub fn is_marker(s: &Sample) -> bool {
    s.value.to_bits() == STALE_NAN_BITS
}

/// `[from, to]` cut at the store's slot boundaries, oldest first: a chunk is decoded by
/// one piece only.
pub fn pieces(from: i64, to: i64) -> impl Iterator<Item = (i64, i64)> {
    let mut at = from;
    std::iter::from_fn(move || {
        if at > to {
            return None;
        }
        let end = (slot_of(at) + SLOT_MS - 1).min(to);
        let piece = (at, end);
        at = end + 1;
        Some(piece)
    })
}

/// `q[range]` at `t`: every series' raw samples of `(t − range, t]`, markers dropped.
pub fn range_at(
    r: &UsageRead<'_>,
    q: &SeriesQuery,
    t: i64,
    range_ms: i64,
) -> Result<Vec<RawSeries>, StoreError> {
    let mut out = BTreeMap::new();
    for s in r.select(&q.clone().between(t - range_ms + 1, t))? {
        let samples: Vec<Sample> = s.samples.into_iter().filter(|x| !is_marker(x)).collect();
        if !samples.is_empty() {
            out.insert(s.labels, samples);
        }
    }
    Ok(in_order(out))
}

/// The instant selector `q` at `t`: each series' latest sample of the lookback unless
/// it is a marker, stamped `t`.
pub fn instant_at(
    r: &UsageRead<'_>,
    q: &SeriesQuery,
    t: i64,
) -> Result<Vec<RawSeries>, StoreError> {
    let mut out = BTreeMap::new();
    for s in r.select(&q.clone().between(t - LOOKBACK_MS + 1, t))? {
        match s.samples.last() {
            Some(last) if !is_marker(last) => {
                let at_t = Sample {
                    timestamp: t,
                    value: last.value,
                };
                out.insert(s.labels, vec![at_t]);
            }
            _ => {}
        }
    }
    Ok(in_order(out))
}

/// `last_over_time(q[range])` at `t`, per series. Series with a sample near `t` are
/// settled by the first slot read; the others (pods gone before `t`) are looked for
/// further back, each slot read only for the series still unsettled.
pub fn last_over_time(
    r: &UsageRead<'_>,
    q: &SeriesQuery,
    t: i64,
    range_ms: i64,
) -> Result<Vec<(Labels, f64)>, StoreError> {
    let lo = t - range_ms; // exclusive
    let mut settled: BTreeMap<Labels, f64> = BTreeMap::new();
    let mut pending: Vec<SeriesInfo> = r.series(&q.clone().between(lo + 1, t))?;
    let everything = pending.len();
    let mut cursor = t;
    while let Some(newest) = pending.iter().map(|s| s.last_ms.min(cursor)).max() {
        if newest <= lo {
            break;
        }
        let from = slot_of(newest).max(lo + 1);
        let mut piece = q.clone().between(from, newest);
        if pending.len() < everything {
            piece = narrowed(piece, &pending);
        }
        let wanted: BTreeSet<&Labels> = pending.iter().map(|s| &s.labels).collect();
        let mut found = Vec::new();
        for s in r.select(&piece)? {
            if !wanted.contains(&s.labels) {
                continue;
            }
            if let Some(last) = s.samples.iter().rev().find(|x| !is_marker(x)) {
                found.push((s.labels, last.value));
            }
        }
        settled.extend(found);
        pending.retain(|s| !settled.contains_key(&s.labels) && s.first_ms < from);
        cursor = from - 1;
    }
    Ok(settled.into_iter().collect())
}

/// `max_over_time(q[range])` at `t`, per series, read slot by slot.
pub fn max_over_time(
    r: &UsageRead<'_>,
    q: &SeriesQuery,
    t: i64,
    range_ms: i64,
) -> Result<Vec<(Labels, f64)>, StoreError> {
    let mut max: BTreeMap<Labels, f64> = BTreeMap::new();
    for (from, to) in pieces(t - range_ms + 1, t) {
        for s in r.select(&q.clone().between(from, to))? {
            for x in s.samples.iter().filter(|x| !is_marker(x)) {
                match max.get_mut(&s.labels) {
                    Some(m) => *m = larger(*m, x.value),
                    None => {
                        max.insert(s.labels.clone(), x.value);
                    }
                }
            }
        }
    }
    Ok(max.into_iter().collect())
}

/// Prometheus's `max`: the larger, and anything over a NaN.
pub fn larger(current: f64, next: f64) -> f64 {
    if current < next || current.is_nan() {
        next
    } else {
        current
    }
}

/// The labels `by` keeps of `labels` (absent ones stay absent).
pub fn grouping(by: &[&str], labels: &Labels) -> Labels {
    by.iter()
        .filter_map(|n| Some((n.to_string(), labels.get(*n)?.clone())))
        .filter(|(_, v)| !v.is_empty())
        .collect()
}

/// `max by (by) (series)` at `t`: groups in the order of their first series.
pub fn max_by(by: &[&str], series: Vec<(Labels, f64)>, t: i64) -> Vec<RawSeries> {
    let mut out: Vec<RawSeries> = Vec::new();
    let mut index: BTreeMap<Labels, usize> = BTreeMap::new();
    for (labels, value) in series {
        let key = grouping(by, &labels);
        match index.get(&key) {
            Some(&i) => {
                let s = &mut out[i].samples[0];
                s.value = larger(s.value, value);
            }
            None => {
                index.insert(key.clone(), out.len());
                out.push(RawSeries {
                    labels: key,
                    samples: vec![Sample {
                        timestamp: t,
                        value,
                    }],
                });
            }
        }
    }
    out
}

/// Series in label order.
pub fn in_order(series: BTreeMap<Labels, Vec<Sample>>) -> Vec<RawSeries> {
    series
        .into_iter()
        .map(|(labels, samples)| RawSeries { labels, samples })
        .collect()
}

/// `q` narrowed to (a superset of) `wanted`: each of their label names but the metric,
/// namespace and pod (those the query already narrows, in SQL) among their values, so
/// the chunks of other series are not read. Matchers on other labels cost no SQL.
fn narrowed(mut q: SeriesQuery, wanted: &[SeriesInfo]) -> SeriesQuery {
    let mut values: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for s in wanted {
        for name in s.labels.keys() {
            values.entry(name.as_str()).or_default();
        }
    }
    let skip = [
        crate::store::usage::METRIC_NAME,
        label::NAMESPACE,
        label::POD,
    ];
    for (name, set) in values.iter_mut() {
        for s in wanted {
            set.insert(s.labels.get(*name).map_or("", String::as_str));
        }
    }
    for (name, set) in values {
        if !skip.contains(&name) {
            q = q.matching(LabelMatcher::one_of(name, set));
        }
    }
    q
}
