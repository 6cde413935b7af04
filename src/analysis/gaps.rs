//! Shortcuts over the gaps between sorted, distinct timestamps that give the same f64
//! results, bit for bit, as the contract's plain loops: a uniform cadence needs no
//! median selection, and whole-second gaps sum exactly in integers. Scrapes on a fixed
//! whole-second interval, the usual input, take both.

/// The one gap shared by every pair of consecutive timestamps; `None` when there is no
/// pair or the gaps differ. The median of equal values is that value.
pub(crate) fn uniform_gap(mut timestamps: impl Iterator<Item = i64>) -> Option<i64> {
    let mut prev = timestamps.next()?;
    let (mut lo, mut hi) = (i64::MAX, i64::MIN);
    for ts in timestamps {
        let gap = ts.saturating_sub(prev);
        prev = ts;
        lo = lo.min(gap);
        hi = hi.max(gap);
    }
    (lo == hi).then_some(lo)
}

/// Σ min(gap seconds, `cap`) over consecutive sorted timestamps, when every gap is a
/// whole number of seconds and `cap` is a whole number too; `None` otherwise (and for
/// fewer than two timestamps). Every term and partial sum is then an integer far below
/// 2^53, so this equals the float loop in any order, without its chain of dependent
/// additions.
pub(crate) fn whole_second_capped_sum(
    mut timestamps: impl Iterator<Item = i64>,
    cap: f64,
) -> Option<f64> {
    const EXACT_MS: u128 = (1 << 53) * 1000 / 1024;
    if !(cap >= 0.0 && cap.fract() == 0.0 && cap < 1e12) {
        return None;
    }
    let cap_ms = cap as u64 * 1000;
    let mut prev = timestamps.next()?;
    let (mut total, mut whole, mut pairs) = (0u64, true, 0u64);
    for ts in timestamps {
        // A gap past i64::MAX wraps negative and fails `whole`, as any unsorted pair does.
        let gap = ts.wrapping_sub(prev);
        prev = ts;
        whole &= (gap >= 0) & (gap as u64).is_multiple_of(1000);
        total = total.wrapping_add((gap as u64).min(cap_ms));
        pairs += 1;
    }
    // Nothing wrapped when even `pairs` full caps stay exact.
    let exact = u128::from(pairs) * u128::from(cap_ms) < EXACT_MS;
    (whole && pairs > 0 && exact).then_some((total / 1000) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn float_sum(ts: &[i64], cap: f64) -> f64 {
        ts.windows(2)
            .map(|w| ((w[1] - w[0]) as f64 / 1000.0).min(cap))
            .sum()
    }

    #[test]
    fn whole_second_sums_match_the_float_loop_bit_for_bit() {
        let ts: Vec<i64> = (0..50_000).map(|i| i * 30_000 + (i % 3) * 1_000).collect();
        for cap in [1.0, 15.0, 30.0, 31.0, 45.0] {
            let got = whole_second_capped_sum(ts.iter().copied(), cap).expect("whole");
            assert_eq!(got.to_bits(), float_sum(&ts, cap).to_bits(), "cap {cap}");
        }
    }

    #[test]
    fn fractional_gaps_or_caps_and_single_points_take_the_float_loop() {
        assert_eq!(
            whole_second_capped_sum([0, 1_500, 3_000].into_iter(), 2.0),
            None
        );
        assert_eq!(whole_second_capped_sum([0, 1_000].into_iter(), 1.5), None);
        assert_eq!(whole_second_capped_sum([5].into_iter(), 1.0), None);
        assert_eq!(
            whole_second_capped_sum([0, 1_000].into_iter(), f64::NAN),
            None
        );
    }

    #[test]
    fn uniform_gap_needs_two_points_and_equal_gaps() {
        assert_eq!(uniform_gap([0, 30, 60, 90].into_iter()), Some(30));
        assert_eq!(uniform_gap([0, 30, 61].into_iter()), None);
        assert_eq!(uniform_gap([7].into_iter()), None);
    }
}
