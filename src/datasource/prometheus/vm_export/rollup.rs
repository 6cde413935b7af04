//! Raw samples (the export API) turned into exactly what VictoriaMetrics's `query_range`
//! answers for a plain selector (its `default_rollup`), so the export path feeds the
//! engine the same samples as `query_range` on the same server. Unlike Prometheus's
//! fixed lookback delta, VictoriaMetrics looks back over a window it sizes per series
//! and per request from the series' own scrape interval:
//!
//! - each request reads raw samples from `start − 5 min − step` to `end`;
//! - the scrape interval is the 0.6 quantile (linear interpolation) of the first 20
//!   intervals between those samples (5 minutes with fewer than 2 samples);
//! - the window is the step, widened to the scrape interval plus a margin (×5 up to
//!   2 s, ×3 up to 4 s, ×2 up to 8 s, ×1.5 up to 16 s, ×1.25 up to 32 s, else ×1.125),
//!   capped by `-search.maxStalenessInterval` / `-search.maxLookback` and raised to
//!   `-search.minStalenessInterval` when those are set;
//! - a step carries the last raw sample in `(step − window, step]`, none when there is
//!   none or it is a staleness marker (NaN).
//!
//! kerf splits a long range into requests of at most 10,000 points (`split_range`), so
//! the estimate is made per piece, as the server makes it per request.

use crate::analysis::Sample;
use crate::datasource::prometheus::queries::split_range;
use crate::datasource::prometheus::resample::Grid;

/// VictoriaMetrics reads this far before a request's first step (`maxSilenceInterval`).
pub const SILENCE_MS: i64 = 5 * 60_000;

/// The server settings that change the rollup window (0 = not set, the default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct VmRollup {
    /// `-search.maxLookback`, else `-search.maxStalenessInterval`.
    pub max_lookback_ms: i64,
    /// `-search.minStalenessInterval`.
    pub min_staleness_ms: i64,
}

impl VmRollup {
    /// The oldest raw sample any step of `grid` can use.
    pub fn read_from(&self, grid: Grid) -> i64 {
        grid.first_ms - SILENCE_MS - grid.step_ms
    }
}

/// The 0.6 quantile of the first 20 intervals between `times`, as the server estimates
/// a series' scrape interval.
fn scrape_interval(times: &[i64]) -> i64 {
    if times.len() < 2 {
        return SILENCE_MS;
    }
    let mut gaps: Vec<f64> = times
        .windows(2)
        .take(20)
        .map(|w| (w[1] - w[0]) as f64)
        .collect();
    gaps.sort_by(f64::total_cmp);
    let n = gaps.len() as f64;
    let rank = 0.6 * (n - 1.0);
    let lower = rank.floor().max(0.0);
    let upper = (lower + 1.0).min(n - 1.0);
    let weight = rank - rank.floor();
    let q = gaps[lower as usize] * (1.0 - weight) + gaps[upper as usize] * weight;
    match q as i64 {
        i if i <= 0 => SILENCE_MS,
        i => i,
    }
}

/// The scrape interval with the server's margin for jitter.
fn max_prev_interval(scrape: i64) -> i64 {
    let margin = match scrape {
        s if s <= 2_000 => 4 * s,
        s if s <= 4_000 => 2 * s,
        s if s <= 8_000 => s,
        s if s <= 16_000 => s / 2,
        s if s <= 32_000 => s / 4,
        s => s / 8,
    };
    scrape + margin
}

/// The look-back window of one request over `fetched` (the raw samples it reads).
fn window(fetched: &[Sample], step_ms: i64, rule: VmRollup) -> i64 {
    let times: Vec<i64> = fetched.iter().take(21).map(|s| s.timestamp).collect();
    let mut max_prev = max_prev_interval(scrape_interval(&times));
    if rule.max_lookback_ms > 0 && max_prev > rule.max_lookback_ms {
        max_prev = rule.max_lookback_ms;
    }
    if rule.min_staleness_ms > 0 && max_prev < rule.min_staleness_ms {
        max_prev = rule.min_staleness_ms;
    }
    let mut window = step_ms;
    if rule.max_lookback_ms > 0 && window > rule.max_lookback_ms {
        window = rule.max_lookback_ms;
    }
    window.max(max_prev)
}

/// The points of `raw` (time order, one sample per timestamp) on `grid`, as
/// VictoriaMetrics's `query_range` computes them request by request.
pub fn at_steps(raw: &[Sample], grid: Grid, rule: VmRollup) -> Vec<Sample> {
    let mut out = Vec::new();
    let step = grid.step_ms;
    for (from, to) in split_range(grid.first_ms, grid.end_ms, (step / 1000) as u32) {
        let lo = raw.partition_point(|s| s.timestamp < from - SILENCE_MS - step);
        let hi = raw.partition_point(|s| s.timestamp <= to);
        let fetched = &raw[lo..hi];
        let window = window(fetched, step, rule);
        let mut next = 0; // first fetched sample after the current step
        let mut t = from;
        while t <= to {
            while next < fetched.len() && fetched[next].timestamp <= t {
                next += 1;
            }
            if let Some(last) = next.checked_sub(1).map(|i| fetched[i]) {
                if last.timestamp > t - window && !last.value.is_nan() {
                    out.push(Sample {
                        timestamp: t,
                        value: last.value,
                    });
                }
            }
            t += step;
        }
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
    fn the_scrape_interval_is_the_sixtieth_percentile_of_the_first_twenty_gaps() {
        assert_eq!(scrape_interval(&[0]), SILENCE_MS);
        assert_eq!(scrape_interval(&[0, 15_000, 30_000]), 15_000);
        // Gaps 10, 10, 20, 40 s: rank 1.8 between 10 and 20 s → 18 s.
        assert_eq!(
            scrape_interval(&[0, 10_000, 20_000, 40_000, 80_000]),
            18_000
        );
        // Only the first 20 gaps count: 20 gaps of 15 s, then many of 60 s.
        let mut times: Vec<i64> = (0..21).map(|i| i * 15_000).collect();
        times.extend((1..50).map(|i| 300_000 + i * 60_000));
        assert_eq!(scrape_interval(&times[..21]), 15_000);
        assert_eq!(max_prev_interval(15_000), 22_500);
        assert_eq!(max_prev_interval(30_000), 37_500);
        assert_eq!(max_prev_interval(60_000), 67_500);
        assert_eq!(max_prev_interval(1_000), 5_000);
    }

    #[test]
    fn a_step_takes_the_last_sample_of_its_window_and_nan_ends_a_series() {
        // Scraped every 30 s: the margin gives 37.5 s, less than the step (60 s).
        let raw: Vec<Sample> = (0..10).map(|i| s(i * 30_000, i as f64)).collect();
        let grid = Grid::new(0, 600_000, 60);
        let got: Vec<(i64, f64)> = at_steps(&raw, grid, VmRollup::default())
            .iter()
            .map(|x| (x.timestamp / 1000, x.value))
            .collect();
        // 270 s is the last sample; 300 s still sees it (within 60 s), 360 s does not.
        assert_eq!(
            got,
            [
                (0, 0.0),
                (60, 2.0),
                (120, 4.0),
                (180, 6.0),
                (240, 8.0),
                (300, 9.0)
            ]
        );
        // A 15 s step over 30 s scrapes: the window is 37.5 s, not 5 minutes.
        let fine = Grid::new(0, 360_000, 15);
        let got = at_steps(&raw, fine, VmRollup::default());
        assert_eq!(got.last().map(|x| x.timestamp), Some(300_000));
        // A staleness marker as the last sample of a window leaves the step empty.
        let stale = [s(0, 1.0), s(30_000, f64::NAN)];
        assert_eq!(
            at_steps(&stale, Grid::new(0, 60_000, 60), VmRollup::default()).len(),
            1
        );
        // Settings cap and raise the window.
        let capped = VmRollup {
            max_lookback_ms: 10_000,
            min_staleness_ms: 0,
        };
        // A 10 s window: only the steps with a sample at most 10 s old (0 to 240 s).
        assert_eq!(at_steps(&raw, Grid::new(0, 600_000, 60), capped).len(), 5);
        let raised = VmRollup {
            max_lookback_ms: 0,
            min_staleness_ms: 240_000,
        };
        assert_eq!(at_steps(&raw, Grid::new(0, 600_000, 60), raised).len(), 9);
        assert!(at_steps(&[], grid, VmRollup::default()).is_empty());
    }

    #[test]
    fn each_request_of_a_long_range_estimates_from_its_own_samples() {
        // 1 s steps over 6 h: three requests of at most 10,000 points. Scrapes every 10 s
        // until 3 h, then every 100 s: the requests after 3 h use a wider window.
        let mut raw: Vec<Sample> = (0..1_080).map(|i| s(i * 10_000, 1.0)).collect();
        raw.extend((0..108).map(|i| s(10_800_000 + i * 100_000, 2.0)));
        let grid = Grid::new(0, 21_600_000, 1);
        let got = at_steps(&raw, grid, VmRollup::default());
        let at = |t: i64| got.iter().any(|x| x.timestamp == t);
        // The second request starts among 10 s scrapes (window 15 s): 20 s after a
        // 100 s scrape its steps are empty; the third sees only 100 s scrapes (window
        // 112.5 s) and fills a step 90 s after one.
        assert!(at(5_009_000));
        assert!(!at(15_020_000));
        assert!(at(20_090_000));
    }
}
