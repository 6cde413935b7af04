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

/// The points of `raw` (time order) on `grid`, as `query_range` computes them.
pub fn at_steps(raw: &[Sample], grid: Grid, lookback: Lookback) -> Vec<Sample> {
    let points = ((grid.end_ms - grid.first_ms) / grid.step_ms + 1).max(0) as usize;
    let mut out = Vec::with_capacity(points.min(raw.len() + 1));
    let mut next = 0; // first raw sample after the current step
    let mut t = grid.first_ms;
    while t <= grid.end_ms {
        while next < raw.len() && raw[next].timestamp <= t {
            next += 1;
        }
        if let Some(latest) = next.checked_sub(1).map(|i| raw[i]) {
            let age = t - latest.timestamp;
            let fresh = age < lookback.ms || (lookback.inclusive && age == lookback.ms);
            if fresh && latest.value.to_bits() != STALE_NAN_BITS {
                out.push(Sample {
                    timestamp: t,
                    value: latest.value,
                });
            }
        }
        t += grid.step_ms;
    }
    out.shrink_to_fit();
    out
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
        let got = at_steps(&raw, grid, Lookback::default());
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
        assert_eq!(at_steps(&edge, grid, Lookback::default()).len(), 2);
        let open = Lookback {
            ms: 300_000,
            inclusive: false,
        };
        assert_eq!(at_steps(&edge, grid, open).len(), 1);
        // A NaN that is not the stale marker is a value like any other.
        let nan = at_steps(&[s(0, f64::NAN)], Grid::new(0, 0, 60), Lookback::default());
        assert!(nan[0].value.is_nan());
        assert!(at_steps(&[], grid, Lookback::default()).is_empty());
    }

    #[test]
    fn the_grid_ends_exactly_at_the_window_end() {
        let g = Grid::new(1_000, 601_500, 60);
        assert_eq!((g.first_ms, g.end_ms), (1_500, 601_500));
        assert_eq!(g.read_from(Lookback::default()), 1_500 - 300_000);
    }
}
