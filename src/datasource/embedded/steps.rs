//! Range queries on stored samples, as `query_range` answers them: a grid of steps
//! ending exactly at the window end (the datasource step apart, the first at or after
//! the window start), each step evaluating instant selectors (the latest sample of the
//! 5-minute lookback, none after a staleness marker), a series present at the steps
//! where it has a value. The samples are read slot by slot, so a long window holds one
//! slot of them at a time; what carries a series into the next slot is its last sample.

use std::collections::BTreeMap;

use super::promql::{is_marker, pieces, LOOKBACK_MS};
use crate::analysis::Sample;
use crate::datasource::raw::Labels;
use crate::datasource::Window;
use crate::store::usage::SeriesQuery;
use crate::store::{StoreError, UsageRead};

/// The steps of a range query over a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grid {
    pub first: i64,
    pub end: i64,
    pub step: i64,
}

impl Grid {
    /// The grid of `window` at its step, ending at its end.
    pub fn of(window: Window) -> Grid {
        let step = i64::from(window.step_seconds.max(1)) * 1000;
        let steps = (window.end_ms - window.start_ms).max(0) / step;
        Grid {
            first: window.end_ms - steps * step,
            end: window.end_ms,
            step,
        }
    }

    /// The steps in `[from, to]`.
    fn steps_in(&self, from: i64, to: i64) -> Vec<i64> {
        let from = from.max(self.first);
        let skip = (from - self.first + self.step - 1).div_euclid(self.step);
        let first = self.first + skip * self.step;
        (0..)
            .map(|k| first + k * self.step)
            .take_while(|t| *t <= to.min(self.end))
            .collect()
    }
}

/// Some steps, and the value of every series present at one of them (`None` where
/// absent), in label order.
pub struct Piece {
    pub steps: Vec<i64>,
    pub series: Vec<(Labels, Vec<Option<f64>>)>,
}

/// Evaluates the instant selector `q` at every step of `grid`, handing each slot's
/// steps to `each`.
pub fn walk(
    r: &UsageRead<'_>,
    q: &SeriesQuery,
    grid: Grid,
    mut each: impl FnMut(&Piece),
) -> Result<(), StoreError> {
    // Each series' latest sample before the piece read (markers too: they end it).
    let mut carry: BTreeMap<Labels, Sample> = BTreeMap::new();
    for (from, to) in pieces(grid.first - LOOKBACK_MS + 1, grid.end) {
        let mut read: BTreeMap<Labels, Vec<Sample>> =
            carry.iter().map(|(l, s)| (l.clone(), vec![*s])).collect();
        for s in r.select(&q.clone().between(from, to))? {
            read.entry(s.labels).or_default().extend(s.samples);
        }
        let steps = grid.steps_in(from, to);
        let mut piece = Piece {
            steps,
            series: Vec::new(),
        };
        carry.clear();
        for (labels, samples) in read {
            let values = at_steps(&samples, &piece.steps);
            if let Some(last) = samples.last().filter(|s| s.timestamp > to - LOOKBACK_MS) {
                carry.insert(labels.clone(), *last);
            }
            if values.iter().any(Option::is_some) {
                piece.series.push((labels, values));
            }
        }
        if !piece.steps.is_empty() {
            each(&piece);
        }
    }
    Ok(())
}

/// The instant value of time-ordered `samples` at each of `steps` (increasing).
fn at_steps(samples: &[Sample], steps: &[i64]) -> Vec<Option<f64>> {
    let mut at = 0; // samples[..at] are at or before the step
    steps
        .iter()
        .map(|&t| {
            while at < samples.len() && samples[at].timestamp <= t {
                at += 1;
            }
            let latest = samples[..at].last()?;
            (latest.timestamp > t - LOOKBACK_MS && !is_marker(latest)).then_some(latest.value)
        })
        .collect()
}

/// A range query's answer being built: each series' points in time order.
#[derive(Default)]
pub struct Answer {
    series: BTreeMap<Labels, Vec<Sample>>,
}

impl Answer {
    pub fn push(&mut self, labels: Labels, timestamp: i64, value: f64) {
        self.series
            .entry(labels)
            .or_default()
            .push(Sample { timestamp, value });
    }

    /// The answer as Prometheus sorts a range query's matrix: by labels.
    pub fn into_series(self) -> Vec<crate::datasource::raw::RawSeries> {
        super::promql::in_order(self.series)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(timestamp: i64, value: f64) -> Sample {
        Sample { timestamp, value }
    }

    #[test]
    fn the_grid_ends_at_the_window_end_and_starts_at_or_after_its_start() {
        let grid = Grid::of(Window {
            start_ms: 1_000,
            end_ms: 181_500,
            step_seconds: 60,
        });
        assert_eq!((grid.first, grid.step), (1_500, 60_000));
        assert_eq!(
            grid.steps_in(0, 200_000),
            vec![1_500, 61_500, 121_500, 181_500]
        );
        assert_eq!(grid.steps_in(61_501, 181_499), vec![121_500]);
        assert!(grid.steps_in(121_501, 181_499).is_empty());
    }

    #[test]
    fn a_step_takes_the_latest_sample_of_its_lookback_and_a_marker_ends_the_series() {
        let marker = f64::from_bits(crate::datasource::prometheus::samples::STALE_NAN_BITS);
        let samples = [
            s(0, 1.0),
            s(60_000, 2.0),
            s(120_000, marker),
            s(500_000, 3.0),
        ];
        let steps = [
            0, 59_999, 60_000, 90_000, 120_000, 360_000, 420_000, 500_000,
        ];
        assert_eq!(
            at_steps(&samples, &steps),
            vec![
                Some(1.0),
                Some(1.0),
                Some(2.0),
                Some(2.0),
                None,
                None,
                None,
                Some(3.0)
            ]
        );
        // Exactly one lookback later the sample is gone (the left end is open).
        assert_eq!(
            at_steps(&[s(0, 1.0)], &[LOOKBACK_MS - 1, LOOKBACK_MS]),
            vec![Some(1.0), None]
        );
    }

    #[tokio::test]
    async fn walking_slot_by_slot_gives_each_step_what_the_whole_series_gives() {
        use super::super::fixture::{marker, open, series, END, MIN, WINDOW};
        // Every 4 minutes (a step can only see the previous sample), a marker and a
        // 20-minute gap across a slot boundary, from before the window's lookback.
        let mut samples: Vec<(i64, f64)> = (0..)
            .map(|k| (WINDOW.start_ms - 30 * MIN + 1_500 + k * 4 * MIN, k as f64))
            .take_while(|(t, _)| *t <= END)
            .filter(|(t, _)| !(END - 5 * 60 * MIN..END - 280 * MIN).contains(t))
            .collect();
        samples[40].1 = marker();
        let (_dir, store) = open();
        let batch = vec![series("m", &[("pod", "a")], samples.clone())];
        store.append("c1", batch, END).await.expect("append");
        let grid = Grid::of(WINDOW);
        let q = SeriesQuery::new("c1", ["m"]);
        let walked = store
            .reading(move |r| {
                let mut got = Vec::new();
                walk(r, &q, grid, |piece| {
                    for (i, t) in piece.steps.iter().enumerate() {
                        got.push((*t, piece.series.first().and_then(|(_, v)| v[i])));
                    }
                })?;
                Ok(got)
            })
            .await
            .expect("walk");
        let all: Vec<Sample> = samples.iter().map(|&(t, v)| s(t, v)).collect();
        let steps = grid.steps_in(i64::MIN, i64::MAX);
        let whole: Vec<(i64, Option<f64>)> =
            steps.iter().copied().zip(at_steps(&all, &steps)).collect();
        assert_eq!(walked.len(), 361);
        let bits = |v: &[(i64, Option<f64>)]| -> Vec<(i64, Option<u64>)> {
            v.iter().map(|(t, x)| (*t, x.map(f64::to_bits))).collect()
        };
        assert_eq!(bits(&walked), bits(&whole));
        assert!(
            whole.iter().any(|(_, v)| v.is_none()),
            "the gap and the marker"
        );
    }
}
