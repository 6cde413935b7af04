//! Unit tests of usage measurement against the numbers pinned in the contract
//! ("Details pinned by the reference engine").

use super::*;
use crate::analysis::normalize::series_facts;
use crate::analysis::policy::default_policy;

const T0: i64 = 1_800_000_000_000;
const MIN: i64 = 60_000;

fn gauge(id: &str, points: &[(i64, f64)]) -> Series {
    Series {
        id: id.into(),
        pod_uid: String::new(),
        workload_uid: "uid".into(),
        release: "A".into(),
        kind: SampleKind::Gauge,
        samples: points
            .iter()
            .map(|&(timestamp, value)| Sample { timestamp, value })
            .collect(),
    }
}

fn minutes(id: &str, range: impl Iterator<Item = i64>, value: f64) -> Series {
    let points: Vec<(i64, f64)> = range.map(|m| (T0 + m * MIN, value)).collect();
    gauge(id, &points)
}

fn measure_with(
    series: &[Series],
    start: i64,
    end: i64,
    agg: Aggregation,
    ev: &EvidencePolicy,
) -> Usage {
    let facts: Vec<SeriesFacts> = series.iter().map(|s| series_facts(&s.samples)).collect();
    let view = UsageView {
        series,
        facts: &facts,
        workload_uid: "uid",
        release: "A",
        start,
        evaluation_time: end,
        memory: false,
        aggregation: agg,
        evidence: ev,
    };
    measure_usage(&view).expect("valid usage")
}

fn measure(series: &[Series], start: i64, end: i64) -> Usage {
    measure_with(
        series,
        start,
        end,
        Aggregation::Maximum,
        &default_policy().evidence,
    )
}

#[test]
fn one_hour_of_minute_scrapes_passes_the_default_guards_with_confidence_95() {
    let u = measure(&[minutes("a", 0..=60, 5.0)], T0, T0 + 60 * MIN);
    assert!(u.quality.reasons.is_empty(), "{:?}", u.quality.reasons);
    assert_eq!(u.quality.coverage, 1.0);
    assert_eq!(u.confidence, 95);
    assert_eq!(u.quality.observation_count, 61);
}

#[test]
fn three_missing_minutes_in_an_hour_still_qualify_at_coverage_0_967() {
    let s = minutes("a", (0..=60).filter(|m| ![10, 20, 30].contains(m)), 5.0);
    let u = measure(&[s], T0, T0 + 60 * MIN);
    assert!((u.quality.coverage - 3480.0 / 3600.0).abs() < 1e-12);
    assert!(u.quality.reasons.is_empty(), "{:?}", u.quality.reasons);
}

#[test]
fn ten_missing_minutes_in_an_hour_give_sparse_coverage_0_85() {
    let s = minutes("a", (0..=60).filter(|m| m % 6 != 3), 5.0);
    let u = measure(&[s], T0, T0 + 60 * MIN);
    assert!(
        (u.quality.coverage - 0.85).abs() < 1e-12,
        "{}",
        u.quality.coverage
    );
    assert_eq!(u.quality.reasons, vec![Reason::SparseCoverage]);
}

#[test]
fn five_of_twenty_one_samples_at_the_start_of_twenty_minutes_cover_a_quarter() {
    let u = measure(&[minutes("a", 0..5, 1.0)], T0, T0 + 20 * MIN);
    assert_eq!(u.quality.coverage, 0.25);
}

#[test]
fn eleven_samples_with_a_ten_minute_hole_cover_0_55() {
    let s = minutes("a", (0..5).chain(14..=19).chain(std::iter::once(20)), 1.0);
    let s = Series {
        samples: s.samples.into_iter().take(11).collect(),
        ..s
    };
    let u = measure(&[s], T0, T0 + 20 * MIN);
    assert!(
        (u.quality.coverage - 0.55).abs() < 1e-12,
        "{}",
        u.quality.coverage
    );
}

#[test]
fn a_single_point_release_has_coverage_exactly_zero() {
    let u = measure(&[minutes("a", 0..1, 1.0)], T0, T0 + 20 * MIN);
    assert_eq!(u.quality.coverage, 0.0);
    assert_eq!(u.quality.cadence_seconds, 0.0);
    assert_eq!(u.confidence, 0);
}

#[test]
fn thirty_minutes_at_ten_seconds_fail_the_history_guard() {
    let points: Vec<(i64, f64)> = (0..=180).map(|i| (T0 + i * 10_000, 1.0)).collect();
    let u = measure(&[gauge("a", &points)], T0, T0 + 1_800_000);
    assert_eq!(u.quality.reasons, vec![Reason::InsufficientHistory]);
}

#[test]
fn eight_daily_samples_over_a_week_fail_the_sample_guard() {
    let day = 86_400_000;
    let points: Vec<(i64, f64)> = (0..8).map(|d| (T0 + d * day, 1.0)).collect();
    let mut ev = default_policy().evidence;
    ev.minimum_coverage = 0.01;
    let u = measure_with(
        &[gauge("a", &points)],
        T0,
        T0 + 7 * day,
        Aggregation::Maximum,
        &ev,
    );
    assert_eq!(u.quality.reasons, vec![Reason::InsufficientSamples]);
}

#[test]
fn identical_replicas_count_samples_twice_but_observations_once() {
    let a = minutes("a", 0..=60, 1.0);
    let b = Series {
        id: "b".into(),
        ..a.clone()
    };
    let mut ev = default_policy().evidence;
    ev.minimum_samples = 100;
    let u = measure_with(&[a, b], T0, T0 + 60 * MIN, Aggregation::Maximum, &ev);
    assert_eq!(u.quality.sample_count, 122);
    assert_eq!(u.quality.observation_count, 61);
    assert_eq!(u.quality.series_count, 2);
    assert_eq!(u.quality.reasons, vec![Reason::InsufficientSamples]);
}

#[test]
fn p50_of_zero_to_one_hundred_is_fifty_at_five_minutes() {
    let s = gauge(
        "a",
        &(0..=10)
            .map(|i| (T0 + i * MIN, i as f64 * 10.0))
            .collect::<Vec<_>>(),
    );
    let u = measure_with(
        &[s],
        T0,
        T0 + 10 * MIN,
        Aggregation::Percentile(50.0),
        &default_policy().evidence,
    );
    let w = u.winner.expect("usage");
    assert_eq!((w.value, w.timestamp), (50.0, T0 + 5 * MIN));
}

#[test]
fn p50_of_counter_rates_one_to_ten_is_five_at_five_minutes() {
    let mut total = 0.0;
    let mut points = vec![(T0, 0.0)];
    for i in 1..=10 {
        total += i as f64 * 60.0 / 1000.0;
        points.push((T0 + i * MIN, total));
    }
    let s = Series {
        kind: SampleKind::CpuCounterSeconds,
        ..gauge("a", &points)
    };
    let u = measure_with(
        &[s],
        T0,
        T0 + 10 * MIN,
        Aggregation::Percentile(50.0),
        &default_policy().evidence,
    );
    let w = u.winner.expect("usage");
    assert!((w.value - 5.0).abs() < 1e-9, "{}", w.value);
    assert_eq!(w.timestamp, T0 + 5 * MIN);
    assert_eq!(u.quality.sample_count, 10);
}

#[test]
fn the_aggregate_timestamp_is_the_latest_sample_carrying_the_value() {
    let s = gauge("a", &[(T0, 7.0), (T0 + MIN, 7.0), (T0 + 2 * MIN, 3.0)]);
    let w = measure(&[s], T0, T0 + 2 * MIN).winner.expect("usage");
    assert_eq!((w.value, w.timestamp), (7.0, T0 + MIN));
}

#[test]
fn a_busy_replica_beats_an_idle_one_and_replicas_are_never_summed() {
    let idle = minutes("idle", 0..=60, 10.0);
    let busy = minutes("busy", 0..=60, 200.0);
    let w = measure(&[idle, busy], T0, T0 + 60 * MIN)
        .winner
        .expect("usage");
    assert_eq!((w.series_id.as_str(), w.value), ("busy", 200.0));
}

#[test]
fn a_new_busy_replica_cannot_borrow_the_old_replicas_confidence() {
    let mut ev = default_policy().evidence;
    ev.minimum_history_seconds = 7 * 86_400;
    let week = 7 * 24 * 60;
    let old = minutes("old", 0..=week, 10.0);
    let new = minutes("new", (week - 30)..=week, 50.0);
    let u = measure_with(&[old, new], T0, T0 + week * MIN, Aggregation::Maximum, &ev);
    assert_eq!(u.winner.as_ref().map(|w| w.value), Some(50.0));
    assert_eq!(u.confidence, 0);
    assert_eq!(u.quality.coverage, 1.0);
}

#[test]
fn a_pod_thirty_minutes_short_of_a_week_gives_confidence_94() {
    let mut ev = default_policy().evidence;
    ev.minimum_history_seconds = 7 * 86_400;
    let week = 7 * 24 * 60;
    // Old pod ran 30 minutes short of the week; its replacement covers the rest.
    let old = minutes("old", 0..=(week - 30), 100.0);
    let u_old = measure_with(
        std::slice::from_ref(&old),
        T0,
        T0 + week * MIN,
        Aggregation::Maximum,
        &ev,
    );
    let w = u_old.winner.expect("usage");
    assert!((w.confidence - 95.0 * 603_060.0 / 604_800.0).abs() < 1e-9);
    let replacement = minutes("new", (week - 29)..=week, 10.0);
    let u = measure_with(
        &[old, replacement],
        T0,
        T0 + week * MIN,
        Aggregation::Maximum,
        &ev,
    );
    assert_eq!(u.confidence, 94);
    assert_eq!(u.quality.coverage, 1.0);
}

#[test]
fn exact_ties_prefer_the_stronger_series_independent_of_order() {
    let strong = minutes("z-strong", 0..=60, 9.0);
    let weak = minutes("a-weak", 50..=60, 9.0);
    let one = measure(&[strong.clone(), weak.clone()], T0, T0 + 60 * MIN);
    let two = measure(&[weak, strong], T0, T0 + 60 * MIN);
    assert_eq!(one, two);
    assert_eq!(one.winner.expect("usage").series_id, "z-strong");
}

#[test]
fn a_fifteen_minute_hole_in_a_day_keeps_coverage_high_without_reasons() {
    let day = 24 * 60;
    let s = minutes("a", (0..=day).filter(|m| !(600..615).contains(m)), 1.0);
    let u = measure(&[s], T0, T0 + day * MIN);
    assert!(u.quality.coverage >= 0.98 && u.quality.coverage < 1.0);
    assert!(u.quality.reasons.is_empty());
}

#[test]
fn series_without_identity_are_ignored_and_reported() {
    let mut s = minutes("a", 0..=60, 1.0);
    s.release.clear();
    let u = measure(&[s], T0, T0 + 60 * MIN);
    assert_eq!(
        u.quality.reasons,
        vec![Reason::UnknownSeriesIdentity, Reason::MissingUsage]
    );
}

#[test]
fn selected_series_need_distinct_ids() {
    let a = minutes("a", 0..=1, 1.0);
    let series = [a.clone(), a];
    let facts: Vec<SeriesFacts> = series.iter().map(|s| series_facts(&s.samples)).collect();
    let view = UsageView {
        series: &series,
        facts: &facts,
        workload_uid: "uid",
        release: "A",
        start: T0,
        evaluation_time: T0 + MIN,
        memory: false,
        aggregation: Aggregation::Maximum,
        evidence: &default_policy().evidence,
    };
    assert_eq!(measure_usage(&view), Err(UsageError::DuplicateIds));
}

#[test]
fn moving_evaluation_time_by_fifteen_seconds_keeps_the_aggregate() {
    let s = [minutes("a", 0..=60, 3.0)];
    let a = measure(&s, T0, T0 + 60 * MIN);
    let b = measure(&s, T0, T0 + 60 * MIN + 15_000);
    assert_eq!(a.winner, b.winner);
}
