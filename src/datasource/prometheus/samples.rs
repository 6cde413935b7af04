//! Raw samples as the TSDB stores them, the only usage kerf hands the engine: their own
//! timestamps, no step grid, nothing carried forward. A Prometheus staleness marker ends
//! a series' run and is never a sample (nor is any NaN: see [`drop_stale`]); a series
//! must come in strictly increasing time order, and what a server sends otherwise is a
//! fault named per workload, never silently repaired.

use crate::analysis::Sample;

/// Prometheus's stale marker: a NaN with its own bit pattern (`value.StaleNaN`).
pub const STALE_NAN_BITS: u64 = 0x7ff0_0000_0000_0002;

/// What is wrong with a series a server sent.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SeriesFault {
    #[error("samples out of time order ({at} ms after {after} ms)")]
    OutOfOrder { at: i64, after: i64 },
    #[error("the timestamp {at} ms twice")]
    Duplicate { at: i64 },
    /// The engine's contract refuses these: one source timestamp, two values.
    #[error("conflicting samples at one timestamp {at} ms ({first} and {second})")]
    Conflict { at: i64, first: f64, second: f64 },
}

/// Checks that `samples` are in strictly increasing time order, as every TSDB sends a
/// series; names the first fault.
pub fn check_order(samples: &[Sample]) -> Result<(), SeriesFault> {
    for pair in samples.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        if b.timestamp > a.timestamp {
            continue;
        }
        return Err(fault(a, b));
    }
    Ok(())
}

fn fault(a: Sample, b: Sample) -> SeriesFault {
    if b.timestamp < a.timestamp {
        SeriesFault::OutOfOrder {
            at: b.timestamp,
            after: a.timestamp,
        }
    } else if a.value.to_bits() == b.value.to_bits() {
        SeriesFault::Duplicate { at: a.timestamp }
    } else {
        SeriesFault::Conflict {
            at: a.timestamp,
            first: a.value,
            second: b.value,
        }
    }
}

/// Joins samples that may repeat across pieces (chunks of overlapping blocks, range
/// selectors meeting at a span boundary): sorted, a sample repeated bit for bit kept
/// once, two values at one timestamp refused.
pub fn join_repeats(samples: &mut Vec<Sample>) -> Result<(), SeriesFault> {
    if !samples.is_sorted_by_key(|s| s.timestamp) {
        samples.sort_by_key(|s| s.timestamp);
    }
    for pair in samples.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        if a.timestamp == b.timestamp && a.value.to_bits() != b.value.to_bits() {
            return Err(fault(a, b));
        }
    }
    samples.dedup_by_key(|s| s.timestamp);
    Ok(())
}

/// Drops staleness markers: a marker ends a run, and the next sample starts another
/// (the engine then sees the gap as missing coverage, not as a value). Every NaN goes:
/// VictoriaMetrics writes its markers as a plain `NaN` (export and query API alike), so
/// the bits cannot tell them apart there, and CPU seconds or bytes that are NaN measure
/// nothing; dropping all keeps the three protocols identical.
pub fn drop_stale(samples: &mut Vec<Sample>) {
    samples.retain(|s| !s.value.is_nan());
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
    fn a_series_must_strictly_increase_and_each_fault_is_named() {
        assert_eq!(check_order(&[s(1, 1.0), s(2, 1.0), s(5, 0.0)]), Ok(()));
        assert_eq!(check_order(&[]), Ok(()));
        assert_eq!(
            check_order(&[s(1, 1.0), s(3, 1.0), s(2, 1.0)]),
            Err(SeriesFault::OutOfOrder { at: 2, after: 3 })
        );
        assert_eq!(
            check_order(&[s(1, 1.0), s(1, 1.0)]),
            Err(SeriesFault::Duplicate { at: 1 })
        );
        let conflict = check_order(&[s(1, 1.0), s(1, 2.0)]).expect_err("conflict");
        assert!(conflict
            .to_string()
            .contains("conflicting samples at one timestamp 1 ms"));
    }

    #[test]
    fn repeats_across_pieces_count_once_and_conflicts_are_refused() {
        let mut joined = vec![s(1, 1.0), s(2, 2.0), s(2, 2.0), s(3, 3.0), s(0, 0.5)];
        assert_eq!(join_repeats(&mut joined), Ok(()));
        assert_eq!(joined, vec![s(0, 0.5), s(1, 1.0), s(2, 2.0), s(3, 3.0)]);
        let mut bad = vec![s(1, 1.0), s(1, 1.5)];
        assert!(matches!(
            join_repeats(&mut bad),
            Err(SeriesFault::Conflict { at: 1, .. })
        ));
    }

    #[test]
    fn staleness_markers_and_plain_nans_are_dropped() {
        let stale = f64::from_bits(STALE_NAN_BITS);
        let mut raw = vec![s(0, 1.0), s(15, stale), s(30, f64::NAN), s(45, 2.0)];
        drop_stale(&mut raw);
        assert_eq!(raw, vec![s(0, 1.0), s(45, 2.0)]);
    }
}
