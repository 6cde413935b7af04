//! Raw samples over the HTTP query API, for servers with neither remote read nor the
//! export API (some Thanos and Mimir set-ups): instant queries of a range selector
//! (`selector[span]`) evaluated at successive span ends, each span sized so one query
//! stays inside the load budget. Prometheus 2.x closes a range at both ends and 3.x
//! opens it on the left, so each span reaches 1 ms further back and is cut to its own
//! start: a sample on a boundary comes twice from 2.x and is kept once. The answer is
//! the raw samples as stored, as remote read and the export API give them.

use std::collections::BTreeMap;

use super::client::Client;
use super::samples::{check_order, join_repeats, SeriesFault};
use crate::analysis::Sample;
use crate::datasource::raw::{Labels, RawSeries};
use crate::datasource::DatasourceError;

/// Prometheus refuses range queries above 11,000 points per series; a span holds at
/// most this many steps, so a series at one sample a step stays under it too.
pub const MAX_SPAN_STEPS: u64 = crate::datasource::plan::MAX_POINTS_PER_REQUEST;

/// The spans `(from, to)` (both inclusive, oldest first, each boundary shared by two)
/// covering `[start_ms, end_ms]` in spans of at most `span_ms`.
pub fn spans(start_ms: i64, end_ms: i64, span_ms: i64) -> Vec<(i64, i64)> {
    let span_ms = span_ms.max(1);
    let mut out = Vec::new();
    let mut from = start_ms;
    loop {
        let to = (from + span_ms).min(end_ms);
        out.push((from, to));
        if to >= end_ms {
            return out;
        }
        from = to;
    }
}

/// Steps per span for `series` series of one request under `samples_budget` (one sample
/// per step assumed), between 1 and [`MAX_SPAN_STEPS`].
pub fn span_steps(samples_budget: u64, series: u64) -> u64 {
    (samples_budget / series.max(1)).clamp(1, MAX_SPAN_STEPS)
}

/// One series read whole, or what was wrong with what the server sent of it.
pub type Read = (RawSeries, Option<SeriesFault>);

/// The raw samples of every series `selector` matches in `[start_ms, end_ms]`, read span
/// by span. A span's series must be in strict time order; a conflict where two spans
/// meet is a fault of that series.
pub async fn read(
    client: &Client,
    selector: &str,
    (start_ms, end_ms): (i64, i64),
    span_ms: i64,
) -> Result<Vec<Read>, DatasourceError> {
    let mut joined: BTreeMap<Labels, (Vec<Sample>, Option<SeriesFault>)> = BTreeMap::new();
    for (from, to) in spans(start_ms, end_ms, span_ms) {
        let promql = format!("{selector}[{}ms]", to - from + 1);
        for mut s in client.range_selector(&promql, to).await? {
            let (samples, fault) = joined.entry(s.labels).or_default();
            if let Err(f) = check_order(&s.samples) {
                fault.get_or_insert(f);
            }
            s.samples.retain(|x| x.timestamp >= from);
            samples.append(&mut s.samples);
        }
    }
    Ok(joined
        .into_iter()
        .map(|(labels, (mut samples, mut fault))| {
            if let Err(f) = join_repeats(&mut samples) {
                fault.get_or_insert(f);
            }
            samples.shrink_to_fit();
            (RawSeries { labels, samples }, fault)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_tile_the_window_sharing_each_boundary() {
        assert_eq!(spans(0, 250, 100), vec![(0, 100), (100, 200), (200, 250)]);
        assert_eq!(spans(0, 200, 100), vec![(0, 100), (100, 200)]);
        assert_eq!(spans(5, 5, 100), vec![(5, 5)]);
        assert_eq!(span_steps(500_000, 40), 10_000);
        assert_eq!(span_steps(500_000, 400), 1_250);
        assert_eq!(span_steps(10, 400), 1);
    }
}
