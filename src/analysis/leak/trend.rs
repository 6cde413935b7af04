//! Robust statistics of the leak heuristic: the classic median, the P10 lower
//! baseline and a local Theil–Sen trend (median pairwise slope) with its consistency.

/// One usable bucket baseline: hours since the episode's analysis start and bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Point {
    pub hours: f64,
    pub bytes: f64,
}

/// A Theil–Sen fit: the median pairwise slope and the fraction of rising pairs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Trend {
    /// Bytes per hour.
    pub slope: f64,
    /// Fraction of (earlier, later) pairs whose later baseline is higher.
    pub consistency: f64,
}

/// Classic median: the middle value, or the mean of the two middle values for an
/// even count; 0 for no values. The mean may overflow to infinity for huge inputs,
/// which the caller reports as out of numeric range.
pub(crate) fn median(values: &[f64]) -> f64 {
    median_in_place(&mut values.to_vec())
}

/// [`median`] of values the caller no longer needs in order: selection, not a sort. The
/// selected values are those a `total_cmp` sort would put in the middle, bit for bit.
pub(crate) fn median_in_place(values: &mut [f64]) -> f64 {
    let n = values.len();
    if n == 0 {
        return 0.0;
    }
    let (lower, middle, _) = values.select_nth_unstable_by(n / 2, f64::total_cmp);
    let middle = *middle;
    if n % 2 == 1 {
        return middle;
    }
    let below = lower
        .iter()
        .copied()
        .max_by(f64::total_cmp)
        .unwrap_or(middle);
    (below + middle) / 2.0
}

/// The lower baseline of a bucket: the value at one-based rank ⌈n/10⌉ of the sorted
/// values (P10, nearest rank); `None` for no values. Reorders `values`.
pub(crate) fn p10(values: &mut [f64]) -> Option<f64> {
    let rank = values.len().div_ceil(10).checked_sub(1)?;
    Some(*values.select_nth_unstable_by(rank, f64::total_cmp).1)
}

/// Theil–Sen over every pair of points, using their real elapsed hours so that
/// missing buckets do not compress time. Fewer than two points give a zero trend.
pub(crate) fn theil_sen(points: &[Point]) -> Trend {
    let mut slopes = Vec::with_capacity(points.len() * points.len().saturating_sub(1) / 2);
    let mut rising = 0usize;
    for (i, earlier) in points.iter().enumerate() {
        for later in points.iter().skip(i + 1) {
            let slope = (later.bytes - earlier.bytes) / (later.hours - earlier.hours);
            if slope > 0.0 {
                rising += 1;
            }
            slopes.push(slope);
        }
    }
    if slopes.is_empty() {
        return Trend {
            slope: 0.0,
            consistency: 0.0,
        };
    }
    Trend {
        slope: median_in_place(&mut slopes),
        consistency: rising as f64 / slopes.len() as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pts(data: &[(f64, f64)]) -> Vec<Point> {
        data.iter()
            .map(|&(hours, bytes)| Point { hours, bytes })
            .collect()
    }

    #[test]
    fn median_of_odd_count_is_the_middle_value() {
        assert_eq!(median(&[5.0, 1.0, 3.0]), 3.0);
    }

    #[test]
    fn median_of_even_count_is_the_mean_of_the_middle_values() {
        assert_eq!(median(&[4.0, 1.0, 3.0, 10.0]), 3.5);
        assert_eq!(median(&[2.0, 1.0]), 1.5);
    }

    #[test]
    fn median_of_nothing_is_zero() {
        assert_eq!(median(&[]), 0.0);
    }

    #[test]
    fn median_of_huge_values_overflows_to_infinity_without_panicking() {
        assert!(median(&[f64::MAX, f64::MAX]).is_infinite());
    }

    #[test]
    fn p10_takes_the_value_at_rank_ceil_tenth_of_the_count() {
        let mut ten: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(p10(&mut ten), Some(1.0));
        let mut eleven: Vec<f64> = (1..=11).rev().map(f64::from).collect();
        assert_eq!(p10(&mut eleven), Some(2.0));
        let mut sixty: Vec<f64> = (1..=60).map(f64::from).collect();
        assert_eq!(p10(&mut sixty), Some(6.0));
        assert_eq!(p10(&mut [7.0]), Some(7.0));
        assert_eq!(p10(&mut [9.0, 3.0, 5.0, 4.0, 8.0]), Some(3.0));
        assert_eq!(p10(&mut []), None);
    }

    #[test]
    fn theil_sen_recovers_an_exact_line() {
        let t = theil_sen(&pts(&[(0.0, 10.0), (1.0, 30.0), (2.0, 50.0), (3.0, 70.0)]));
        assert_eq!(t.slope, 20.0);
        assert_eq!(t.consistency, 1.0);
    }

    #[test]
    fn theil_sen_uses_real_elapsed_time_across_missing_buckets() {
        // Buckets at 0, 0.5 and 2.5 hours (three missing buckets between the last two).
        let t = theil_sen(&pts(&[(0.0, 0.0), (0.5, 50.0), (2.5, 250.0)]));
        assert_eq!(t.slope, 100.0);
        assert_eq!(t.consistency, 1.0);
        // Compressing time (pretending adjacency) would have given a slope of 200/0.5.
    }

    #[test]
    fn theil_sen_ignores_a_single_outlier() {
        let t = theil_sen(&pts(&[
            (0.0, 0.0),
            (1.0, 10.0),
            (2.0, 1000.0),
            (3.0, 30.0),
            (4.0, 40.0),
        ]));
        assert_eq!(t.slope, 10.0);
        assert_eq!(t.consistency, 0.8);
    }

    #[test]
    fn theil_sen_counts_flat_pairs_as_not_rising() {
        let t = theil_sen(&pts(&[(0.0, 5.0), (1.0, 5.0), (2.0, 6.0)]));
        assert_eq!(t.slope, 0.5);
        assert_eq!(t.consistency, 2.0 / 3.0);
        let flat = theil_sen(&pts(&[(0.0, 5.0), (1.0, 5.0), (2.0, 5.0)]));
        assert_eq!(flat.slope, 0.0);
        assert_eq!(flat.consistency, 0.0);
    }

    #[test]
    fn theil_sen_of_fewer_than_two_points_is_zero() {
        assert_eq!(theil_sen(&pts(&[(0.0, 1.0)])).slope, 0.0);
        assert_eq!(theil_sen(&[]).consistency, 0.0);
    }
}
