//! Division of one episode into complete, fixed-width buckets: per-bucket coverage
//! and the P10 lower baselines of the buckets that hold enough samples.

use super::super::gaps::whole_second_capped_sum;
use super::super::series::Sample;
use super::trend::{p10, Point};

/// The bucket grid of one episode.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Grid {
    /// Analysis start of the episode (after warm-up), Unix ms.
    pub start: i64,
    /// Bucket width in seconds (validated: 1 … MaxInt64/1000).
    pub bucket_seconds: i64,
    /// Number of complete buckets.
    pub count: i64,
    /// Episode cadence in seconds (classic median of gaps).
    pub cadence_seconds: f64,
    /// Samples a bucket needs to supply a baseline.
    pub minimum_samples: i64,
}

/// What the buckets of one episode yield.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Buckets {
    /// Covered fraction of the bucketed time, capped at 1.
    pub coverage: f64,
    /// Baselines of usable buckets, in time order.
    pub baselines: Vec<Point>,
}

/// Number of complete buckets between `start` and the effective end
/// `last + min(cadence, evaluationTime − last)`.
pub(crate) fn complete_buckets(span_seconds: f64, bucket_seconds: i64) -> i64 {
    let count = (span_seconds / bucket_seconds as f64).floor();
    if count.is_finite() && count > 0.0 {
        // `as` saturates; the lookback bounds real counts to 256.
        count as i64
    } else {
        0
    }
}

/// Sorts `samples` (sorted by time, distinct timestamps, all ≥ `grid.start`) into the
/// grid; samples past the last complete bucket are ignored.
pub(crate) fn fill(grid: &Grid, samples: &[Sample]) -> Buckets {
    let bucket_ms = grid.bucket_seconds.saturating_mul(1000).max(1);
    let mut coverage = 0.0;
    let mut baselines = Vec::new();
    let mut rest = samples;
    let mut values = Vec::new();
    for index in 0..grid.count.clamp(0, i64::from(u16::MAX)) {
        let end = grid
            .start
            .saturating_add(bucket_ms.saturating_mul(index.saturating_add(1)));
        let split = rest.partition_point(|s| s.timestamp < end);
        let (inside, after) = rest.split_at(split);
        rest = after;
        if inside.is_empty() {
            continue;
        }
        coverage += bucket_coverage(grid, inside) / grid.count as f64;
        if inside.len() as i64 >= grid.minimum_samples {
            values.clear();
            values.extend(inside.iter().map(|s| s.value));
            if let Some(bytes) = p10(&mut values) {
                let hours = index as f64 * grid.bucket_seconds as f64 / 3600.0;
                baselines.push(Point { hours, bytes });
            }
        }
    }
    Buckets {
        coverage: coverage.min(1.0),
        baselines,
    }
}

/// `min(1, (min(cadence, bucket) + Σ min(cadence, in-bucket gap)) / bucket)`.
fn bucket_coverage(grid: &Grid, inside: &[Sample]) -> f64 {
    let bucket = grid.bucket_seconds as f64;
    let cadence = grid.cadence_seconds;
    let mut covered = cadence.min(bucket);
    let timestamps = inside.iter().map(|s| s.timestamp);
    if let Some(sum) = whole_second_capped_sum(timestamps, cadence) {
        return ((covered + sum) / bucket).min(1.0);
    }
    for pair in inside.windows(2) {
        let gap = pair[1].timestamp.saturating_sub(pair[0].timestamp) as f64 / 1000.0;
        covered += cadence.min(gap);
    }
    (covered / bucket).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples(start: i64, step_s: i64, values: &[f64]) -> Vec<Sample> {
        values
            .iter()
            .enumerate()
            .map(|(i, &value)| Sample {
                timestamp: start + i as i64 * step_s * 1000,
                value,
            })
            .collect()
    }

    fn grid(count: i64, cadence: f64) -> Grid {
        Grid {
            start: 1_000_000,
            bucket_seconds: 600,
            count,
            cadence_seconds: cadence,
            minimum_samples: 5,
        }
    }

    #[test]
    fn complete_buckets_floors_the_span() {
        assert_eq!(complete_buckets(84_600.0, 1800), 47);
        assert_eq!(complete_buckets(1799.9, 1800), 0);
        assert_eq!(complete_buckets(-5.0, 1800), 0);
        assert_eq!(complete_buckets(f64::NAN, 1800), 0);
    }

    #[test]
    fn full_buckets_have_coverage_one_and_p10_baselines_at_bucket_hours() {
        let values: Vec<f64> = (0..60).map(|i| 100.0 + f64::from(i % 10)).collect();
        let b = fill(&grid(3, 30.0), &samples(1_000_000, 30, &values));
        assert_eq!(b.coverage, 1.0);
        assert_eq!(b.baselines.len(), 3);
        assert_eq!(b.baselines[1].hours, 600.0 / 3600.0);
        assert_eq!(b.baselines[2].bytes, 100.0);
    }

    #[test]
    fn coverage_summed_over_47_full_buckets_is_capped_at_one() {
        let mut sum = 0.0;
        for _ in 0..47 {
            sum += 1.0 / 47.0;
        }
        assert_eq!(sum, 1.0000000000000004);
        let values = vec![1.0; 47 * 20];
        let b = fill(&grid(47, 30.0), &samples(1_000_000, 30, &values));
        assert_eq!(b.coverage, 1.0);
        assert_eq!(b.baselines.len(), 47);
    }

    #[test]
    fn empty_and_undersampled_buckets_are_skipped_not_zeroed() {
        // Bucket 0: 4 samples (undersampled); bucket 1: empty; bucket 2: 20 samples.
        let mut s = samples(1_000_000, 30, &[7.0; 4]);
        s.extend(samples(1_000_000 + 1_200_000, 30, &[9.0; 20]));
        let b = fill(&grid(3, 30.0), &s);
        assert_eq!(b.baselines.len(), 1);
        assert_eq!(b.baselines[0].hours, 1200.0 / 3600.0);
        assert_eq!(b.baselines[0].bytes, 9.0);
        let expected = (30.0 + 3.0 * 30.0) / 600.0 / 3.0 + 1.0 / 3.0;
        assert_eq!(b.coverage, expected);
    }

    #[test]
    fn samples_after_the_last_complete_bucket_are_ignored() {
        let values = vec![1.0; 40];
        let b = fill(&grid(1, 30.0), &samples(1_000_000, 30, &values));
        assert_eq!(b.baselines.len(), 1);
        assert_eq!(b.coverage, 1.0);
    }

    #[test]
    fn gaps_longer_than_the_cadence_count_only_one_cadence() {
        // Two samples 300 s apart with a 30 s cadence cover 60 s of 600.
        let s = samples(1_000_000, 300, &[1.0, 1.0]);
        let b = fill(&grid(1, 30.0), &s);
        assert_eq!(b.coverage, 60.0 / 600.0);
        assert!(b.baselines.is_empty());
    }
}
