//! Raw samples (remote read) turned into exactly what `query_range` answers for a plain
//! selector: one point per step of the grid, carrying the latest raw sample at or
//! before the step within the server's lookback delta, absent when there is none or it
//! is a stale marker. So both protocols feed the engine the same samples, bit for bit.

use crate::analysis::Sample;

/// Prometheus's stale marker: a NaN with its own bit pattern (`value.StaleNaN`).
pub const STALE_NAN_BITS: u64 = 0x7ff0_0000_0000_0002;

/// How the server's range evaluation looks back from each step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lookback {
    /// `--query.lookback-delta` (5 minutes unless the server says otherwise).
    pub ms: i64,
    /// Whether a sample exactly `ms` old still counts: yes up to Prometheus 2.x, no
    /// from 3.0 (the window became left-open).
    pub inclusive: bool,
}

impl Default for Lookback {
    fn default() -> Self {
        Lookback {
            ms: 5 * 60_000,
            inclusive: true,
        }
    }
}

/// The step grid of a window: `first, first + step, …, end` (what `split_range` tiles).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grid {
    pub first_ms: i64,
    pub end_ms: i64,
    pub step_ms: i64,
}

impl Grid {
    /// The grid ending exactly at `end_ms`, starting at the first step at or after
    /// `start_ms`.
    pub fn new(start_ms: i64, end_ms: i64, step_seconds: u32) -> Grid {
        let step_ms = i64::from(step_seconds.max(1)) * 1000;
        let steps = (end_ms - start_ms).max(0) / step_ms;
        Grid {
            first_ms: end_ms - steps * step_ms,
            end_ms,
            step_ms,
        }
    }

    /// The oldest raw sample time that can supply a point of this grid.
    pub fn read_from(&self, lookback: Lookback) -> i64 {
        self.first_ms - lookback.ms
    }
}

/// The points of `raw` (time order) on `grid`, as `query_range` computes them, written
/// over `raw`'s own buffer: a point only ever goes into a slot whose raw sample has
/// been read already, so a series costs one buffer, not two. A grid finer than the
/// scrapes has more points than samples; the points that would overtake the reading
/// go to a second buffer, appended at the end.
pub fn at_steps(mut raw: Vec<Sample>, grid: Grid, lookback: Lookback) -> Vec<Sample> {
    let (mut written, mut overtaking) = (0, Vec::new());
    let mut next = 0; // first raw sample after the current step
    let mut latest: Option<Sample> = None;
    let mut t = grid.first_ms;
    while t <= grid.end_ms {
        while next < raw.len() && raw[next].timestamp <= t {
            latest = Some(raw[next]);
            next += 1;
        }
        if let Some(latest) = latest {
            let age = t - latest.timestamp;
            let fresh = age < lookback.ms || (lookback.inclusive && age == lookback.ms);
            if fresh && latest.value.to_bits() != STALE_NAN_BITS {
                let point = Sample {
                    timestamp: t,
                    value: latest.value,
                };
                if overtaking.is_empty() && written < next {
                    raw[written] = point;
                    written += 1;
                } else {
                    overtaking.push(point);
                }
            }
        }
        t += grid.step_ms;
    }
    raw.truncate(written);
    raw.extend(overtaking);
    trim(&mut raw);
    raw
}

/// Gives a series' spare capacity back when it is worth a reallocation (over 1/8).
pub fn trim(samples: &mut Vec<Sample>) {
    if samples.capacity() - samples.len() > samples.len() / 8 {
        samples.shrink_to_fit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(t: i64, value: f64) -> Sample {
        Sample {
            timestamp: t,
            value,
        }
    }

    #[test]
    fn each_step_takes_the_latest_fresh_sample_and_stale_markers_end_a_series() {
        let grid = Grid::new(0, 600_000, 60);
        assert_eq!((grid.first_ms, grid.step_ms), (0, 60_000));
        let stale = f64::from_bits(STALE_NAN_BITS);
        let raw = [
            s(0, 1.0),
            s(30_000, 2.0),
            s(125_000, 3.0),
            s(200_000, stale),
            s(500_000, 4.0),
        ];
        let got = at_steps(raw.to_vec(), grid, Lookback::default());
        let pairs: Vec<(i64, f64)> = got.iter().map(|x| (x.timestamp / 1000, x.value)).collect();
        // 180 s: 125 s is the latest; 240 s: the stale marker hides it; 540 and 600: 500 s.
        assert_eq!(
            pairs,
            [
                (0, 1.0),
                (60, 2.0),
                (120, 2.0),
                (180, 3.0),
                (540, 4.0),
                (600, 4.0)
            ]
        );
        // A sample exactly one lookback old counts in 2.x, not in 3.x.
        let edge = [s(0, 1.0)];
        let grid = Grid::new(240_000, 300_000, 60);
        assert_eq!(at_steps(edge.to_vec(), grid, Lookback::default()).len(), 2);
        let open = Lookback {
            ms: 300_000,
            inclusive: false,
        };
        assert_eq!(at_steps(edge.to_vec(), grid, open).len(), 1);
        // A NaN that is not the stale marker is a value like any other.
        let nan = at_steps(
            vec![s(0, f64::NAN)],
            Grid::new(0, 0, 60),
            Lookback::default(),
        );
        assert!(nan[0].value.is_nan());
        assert!(at_steps(Vec::new(), grid, Lookback::default()).is_empty());
    }

    /// The grid as `query_range` evaluates it, in a second buffer: what the in-place
    /// form must equal.
    fn reference(raw: &[Sample], grid: Grid, lookback: Lookback) -> Vec<Sample> {
        let mut out = Vec::new();
        let mut t = grid.first_ms;
        while t <= grid.end_ms {
            if let Some(latest) = raw.iter().rev().find(|s| s.timestamp <= t) {
                let age = t - latest.timestamp;
                let fresh = age < lookback.ms || (lookback.inclusive && age == lookback.ms);
                if fresh && latest.value.to_bits() != STALE_NAN_BITS {
                    out.push(s(t, latest.value));
                }
            }
            t += grid.step_ms;
        }
        out
    }

    proptest::proptest! {
        #[test]
        fn in_place_points_equal_a_second_buffers_whatever_the_scrapes_and_step(
            gaps in proptest::collection::vec((1i64..400, 0u8..20), 0..120),
            step_s in 1u32..200,
            span_steps in 0i64..150,
            inclusive in proptest::bool::ANY,
        ) {
            // Scrapes 1–400 s apart (finer and coarser than the step), 1 in 20 a stale
            // marker; the grid starts somewhere inside them.
            let stale = f64::from_bits(STALE_NAN_BITS);
            let mut t = 0;
            let raw: Vec<Sample> = gaps
                .iter()
                .map(|&(gap, kind)| {
                    t += gap * 1000;
                    s(t, if kind == 0 { stale } else { f64::from(kind) })
                })
                .collect();
            let step_ms = i64::from(step_s) * 1000;
            let grid = Grid::new(90_000, 90_000 + span_steps * step_ms, step_s);
            let lookback = Lookback { ms: 300_000, inclusive };
            let want = reference(&raw, grid, lookback);
            let got = at_steps(raw, grid, lookback);
            proptest::prop_assert_eq!(
                got.iter().map(|x| (x.timestamp, x.value.to_bits())).collect::<Vec<_>>(),
                want.iter().map(|x| (x.timestamp, x.value.to_bits())).collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn the_grid_ends_exactly_at_the_window_end() {
        let g = Grid::new(1_000, 601_500, 60);
        assert_eq!((g.first_ms, g.end_ms), (1_500, 601_500));
        assert_eq!(g.read_from(Lookback::default()), 1_500 - 300_000);
    }
}
