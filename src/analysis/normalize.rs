//! Sample normalization (contract §6, "NormalizeSamples"): the window filter, ordering,
//! duplicate handling and CPU counter conversion shared by sizing and chart consumers.
//! The hot path borrows already-sorted input and allocates nothing for gauges.

use std::borrow::Cow;

use super::error::{go_quote, Error};
use super::series::{Sample, SampleKind, Series};

/// Why a series' samples cannot be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SampleError {
    /// A negative value (JSON cannot carry non-finite ones, callers of the API can).
    Invalid { timestamp: i64 },
    /// Two different values at one source timestamp.
    Conflict { timestamp: i64 },
    /// A counter rate that is not a finite number.
    RateOverflow { timestamp: i64 },
}

impl SampleError {
    /// The contract text plus the offending timestamp.
    pub(crate) fn message(self) -> String {
        match self {
            SampleError::Invalid { timestamp } => {
                format!("sample values must be finite and nonnegative (timestamp {timestamp})")
            }
            SampleError::Conflict { timestamp } => {
                format!("conflicting samples at one source timestamp {timestamp}")
            }
            SampleError::RateOverflow { timestamp } => {
                format!("CPU rate overflow (timestamp {timestamp})")
            }
        }
    }
}

/// The normalized samples of `series` within `[start, end]` (both inclusive): sorted,
/// duplicates removed, counters converted to millicores. Exposed for chart consumers,
/// which must use it before any display-only downsampling.
pub fn normalize_samples(series: &Series, start: i64, end: i64) -> Result<Vec<Sample>, Error> {
    normalize(series, start, end)
        .map(Cow::into_owned)
        .map_err(|e| Error::input(format!("series {}: {}", go_quote(&series.id), e.message())))
}

/// Borrowing form of [`normalize_samples`].
pub(crate) fn normalize(
    series: &Series,
    start: i64,
    end: i64,
) -> Result<Cow<'_, [Sample]>, SampleError> {
    normalize_known(series, series_facts(&series.samples), start, end)
}

/// What one pass over a series' samples learns, so that later steps need not look again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SeriesFacts {
    /// Timestamps strictly increase (the common, fast case): windows are binary searches.
    pub sorted: bool,
    /// Every value is finite and nonnegative.
    pub all_valid: bool,
}

/// One branch-free pass over `samples`.
pub(crate) fn series_facts(samples: &[Sample]) -> SeriesFacts {
    let (mut sorted, mut all_valid) = (true, true);
    for w in samples.windows(2) {
        sorted &= w[0].timestamp < w[1].timestamp;
        all_valid &= valid(w[1].value);
    }
    let first_valid = samples.first().is_none_or(|s| valid(s.value));
    SeriesFacts {
        sorted,
        all_valid: all_valid & first_valid,
    }
}

/// [`normalize`] of a series whose [`series_facts`] are already known.
pub(crate) fn normalize_known(
    series: &Series,
    facts: SeriesFacts,
    start: i64,
    end: i64,
) -> Result<Cow<'_, [Sample]>, SampleError> {
    let samples = &series.samples;
    let window: Cow<'_, [Sample]> = if facts.sorted {
        let lo = samples.partition_point(|s| s.timestamp < start);
        let hi = samples.partition_point(|s| s.timestamp <= end).max(lo);
        Cow::Borrowed(&samples[lo..hi])
    } else {
        Cow::Owned(sort_and_dedupe(samples, start, end)?)
    };
    // Only samples inside the window are validated; a wholly valid series skips that.
    if !(facts.sorted && facts.all_valid) {
        if let Some(bad) = window.iter().find(|s| !valid(s.value)) {
            return Err(SampleError::Invalid {
                timestamp: bad.timestamp,
            });
        }
    }
    match series.kind {
        SampleKind::Gauge => Ok(window),
        SampleKind::CpuCounterSeconds => Ok(Cow::Owned(counter_rates(&window)?)),
    }
}

/// Finite and nonnegative (NaN fails both comparisons).
fn valid(value: f64) -> bool {
    (0.0..f64::INFINITY).contains(&value)
}

fn sort_and_dedupe(samples: &[Sample], start: i64, end: i64) -> Result<Vec<Sample>, SampleError> {
    let mut kept: Vec<Sample> = samples
        .iter()
        .filter(|s| s.timestamp >= start && s.timestamp <= end)
        .copied()
        .collect();
    kept.sort_by_key(|s| s.timestamp);
    let mut out: Vec<Sample> = Vec::with_capacity(kept.len());
    for s in kept {
        match out.last() {
            Some(prev) if prev.timestamp == s.timestamp => {
                // Equal repeats count once; NaN never equals, so it is a conflict too.
                if prev.value != s.value {
                    return Err(SampleError::Conflict {
                        timestamp: s.timestamp,
                    });
                }
            }
            _ => out.push(s),
        }
    }
    Ok(out)
}

/// Adjacent counter pairs become interval-average millicores at the later timestamp; a
/// decrease is a reset, so the new value is the increase.
fn counter_rates(samples: &[Sample]) -> Result<Vec<Sample>, SampleError> {
    let mut rates = Vec::with_capacity(samples.len().saturating_sub(1));
    for pair in samples.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        let mut delta = b.value - a.value;
        if delta < 0.0 {
            delta = b.value;
        }
        let seconds = (b.timestamp - a.timestamp) as f64 / 1000.0;
        let rate = delta / seconds * 1000.0;
        if !rate.is_finite() {
            return Err(SampleError::RateOverflow {
                timestamp: b.timestamp,
            });
        }
        rates.push(Sample {
            timestamp: b.timestamp,
            value: rate,
        });
    }
    Ok(rates)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(kind: SampleKind, points: &[(i64, f64)]) -> Series {
        Series {
            id: "s".into(),
            pod_uid: String::new(),
            workload_uid: "uid".into(),
            release: "A".into(),
            kind,
            samples: points
                .iter()
                .map(|&(timestamp, value)| Sample { timestamp, value })
                .collect(),
        }
    }

    #[test]
    fn unsorted_samples_are_sorted_and_equal_duplicates_count_once() {
        let s = series(
            SampleKind::Gauge,
            &[(3, 1.0), (1, 2.0), (3, 1.0), (3, 1.0), (2, 5.0)],
        );
        let out = normalize_samples(&s, 0, 10).expect("valid");
        let ts: Vec<i64> = out.iter().map(|s| s.timestamp).collect();
        assert_eq!(ts, vec![1, 2, 3]);
    }

    #[test]
    fn four_copies_of_one_sample_normalize_to_one() {
        let s = series(SampleKind::Gauge, &[(5, 1.0); 4]);
        assert_eq!(normalize_samples(&s, 0, 10).expect("valid").len(), 1);
    }

    #[test]
    fn conflicting_values_at_one_timestamp_are_rejected() {
        let s = series(SampleKind::Gauge, &[(1, 1.0), (1, 2.0)]);
        let err = normalize_samples(&s, 0, 10).expect_err("conflict");
        assert!(err
            .to_string()
            .contains("conflicting samples at one source timestamp"));
    }

    #[test]
    fn samples_outside_the_window_are_dropped_before_validation() {
        let s = series(
            SampleKind::Gauge,
            &[(0, -1.0), (5, 1.0), (5, 1.0), (20, -3.0)],
        );
        assert_eq!(normalize_samples(&s, 1, 10).expect("valid").len(), 1);
        let bad = series(SampleKind::Gauge, &[(5, -1.0)]);
        assert!(normalize_samples(&bad, 1, 10).is_err());
    }

    #[test]
    fn window_bounds_are_inclusive() {
        let s = series(SampleKind::Gauge, &[(1, 1.0), (5, 1.0), (10, 1.0)]);
        assert_eq!(normalize_samples(&s, 1, 10).expect("valid").len(), 3);
    }

    #[test]
    fn counters_lose_their_first_sample_and_resets_use_the_new_value() {
        let s = series(
            SampleKind::CpuCounterSeconds,
            &[(0, 10.0), (60_000, 16.0), (120_000, 3.0)],
        );
        let out = normalize_samples(&s, 0, 200_000).expect("valid");
        assert_eq!(out.len(), 2);
        assert_eq!(
            out[0],
            Sample {
                timestamp: 60_000,
                value: 100.0
            }
        );
        assert_eq!(
            out[1],
            Sample {
                timestamp: 120_000,
                value: 50.0
            }
        );
    }

    #[test]
    fn sixty_one_counter_samples_become_sixty_rates() {
        let points: Vec<(i64, f64)> = (0..61).map(|i| (i * 60_000, i as f64)).collect();
        let s = series(SampleKind::CpuCounterSeconds, &points);
        let out = normalize_samples(&s, 0, 3_600_000).expect("valid");
        assert_eq!(out.len(), 60);
        assert!(out.iter().all(|s| (s.value - 1000.0 / 60.0).abs() < 1e-9));
    }
}
