//! One scenario per episode status and episode reason.

use super::*;

#[test]
fn steady_linear_growth_over_a_day_is_a_potential_leak() {
    let a = Fixture::new(vec![full_day("s1", "p1", leaking)]).run();
    assert_eq!(a.status, LeakStatus::PotentialLeak);
    assert!(a.is_potential_leak());
    assert_eq!(a.reasons, vec![Reason::SustainedMemoryBaselineGrowth]);
    assert_eq!(
        (
            a.evaluated_episodes,
            a.suspected_episodes,
            a.skipped_episodes
        ),
        (1, 1, 0)
    );
    assert_eq!((a.window_start, a.window_end), (T0, EVAL));
    let e = &a.episodes[0];
    assert_eq!(e.status, LeakStatus::PotentialLeak);
    assert_eq!(e.observed_start, T0 + HOUR / 2);
    assert_eq!(e.observed_end, EVAL);
    assert_eq!(e.bucket_count, 47);
    assert_eq!(e.sample_count, 47 * 60 + 1);
    assert_eq!(e.coverage, 1.0, "47 × 1/47 is capped at 1");
    assert!((e.slope_bytes_per_hour - 20.0 * MIB).abs() < 1.0);
    assert!((e.recent_slope_bytes_per_hour - 20.0 * MIB).abs() < 1.0);
    assert_eq!(e.trend_consistency, 1.0);
    assert_eq!(e.recent_trend_consistency, 1.0);
    assert!(e.growth_bytes > 64.0 * MIB);
    assert!(e.relative_growth.expect("positive start") > 0.2);
    assert!(e.oom_kill_ids.is_empty());
}

#[test]
fn flat_usage_has_no_sustained_baseline_growth() {
    let a = Fixture::new(vec![full_day("s1", "p1", |_| 300.0 * MIB)]).run();
    assert_eq!(a.status, LeakStatus::NoLeakPattern);
    assert_eq!(a.reasons, vec![Reason::NoSustainedMemoryBaselineGrowth]);
    assert_eq!(
        (
            a.evaluated_episodes,
            a.suspected_episodes,
            a.skipped_episodes
        ),
        (1, 0, 0)
    );
    assert_eq!(
        episode_reasons(&a),
        vec![vec![Reason::NoSustainedMemoryBaselineGrowth]]
    );
    assert_eq!(a.episodes[0].growth_bytes, 0.0);
    assert_eq!(a.episodes[0].relative_growth, Some(0.0));
}

#[test]
fn gc_sawtooth_with_ever_higher_peaks_but_flat_baseline_is_not_a_leak() {
    let peaks = |h: f64| 300.0 * MIB + gc_peaks(h) * (1.0 + h / 4.0);
    let a = Fixture::new(vec![full_day("s1", "p1", peaks)]).run();
    assert_eq!(a.status, LeakStatus::NoLeakPattern);
    assert_eq!(
        episode_reasons(&a),
        vec![vec![Reason::NoSustainedMemoryBaselineGrowth]]
    );
    assert_eq!(a.episodes[0].baseline_start_bytes, 300.0 * MIB);
    assert_eq!(a.episodes[0].baseline_end_bytes, 300.0 * MIB);
}

#[test]
fn growth_that_plateaus_in_the_last_quarter_is_plateau_or_recovery() {
    let plateau = |h: f64| leaking(h.min(17.0));
    let a = Fixture::new(vec![full_day("s1", "p1", plateau)]).run();
    assert_eq!(a.status, LeakStatus::NoLeakPattern);
    assert_eq!(a.reasons, vec![Reason::NoSustainedMemoryBaselineGrowth]);
    assert_eq!(
        episode_reasons(&a),
        vec![vec![Reason::MemoryBaselinePlateauOrRecovery]]
    );
    assert!(a.episodes[0].recent_slope_bytes_per_hour <= 0.0);
}

#[test]
fn recovery_in_the_last_quarter_is_plateau_or_recovery() {
    let recovery = |h: f64| leaking(if h < 19.0 { h } else { 38.0 - h });
    let a = Fixture::new(vec![full_day("s1", "p1", recovery)]).run();
    assert_eq!(
        episode_reasons(&a),
        vec![vec![Reason::MemoryBaselinePlateauOrRecovery]]
    );
}

#[test]
fn a_five_hour_lifetime_has_insufficient_trend_buckets() {
    let s = series("s1", "p1", EVAL - 5 * HOUR, EVAL, 30, leaking);
    let a = Fixture::new(vec![s]).run();
    assert_eq!(a.status, LeakStatus::InsufficientData);
    assert_eq!(a.reasons, vec![Reason::InsufficientMemoryTrendBuckets]);
    assert_eq!(a.episodes[0].bucket_count, 9);
    assert_eq!((a.evaluated_episodes, a.skipped_episodes), (0, 1));
}

#[test]
fn alternating_hour_outages_give_sparse_coverage() {
    let mut s = full_day("s1", "p1", leaking);
    s.samples
        .retain(|x| ((x.timestamp - T0) / HOUR) % 2 == 0 || x.timestamp == EVAL);
    let a = Fixture::new(vec![s]).run();
    assert_eq!(a.status, LeakStatus::InsufficientData);
    assert_eq!(a.reasons, vec![Reason::SparseCoverage]);
    let e = &a.episodes[0];
    assert!(e.coverage > 0.4 && e.coverage < 0.6, "{}", e.coverage);
    assert_eq!(e.bucket_count, 47);
}

#[test]
fn short_bursts_give_both_sparse_coverage_and_insufficient_buckets() {
    // Four samples 30 s apart at the start of each half hour: 4 < 5 per bucket and
    // each bucket covers 120 of 1800 seconds.
    let mut s = full_day("s1", "p1", leaking);
    s.samples
        .retain(|x| (x.timestamp - T0) % (HOUR / 2) < 120_000);
    let a = Fixture::new(vec![s]).run();
    assert_eq!(
        a.reasons,
        vec![
            Reason::SparseCoverage,
            Reason::InsufficientMemoryTrendBuckets
        ]
    );
    assert_eq!(a.episodes[0].bucket_count, 47);
    assert!((a.episodes[0].coverage - 120.0 / 1800.0).abs() < 1e-12);
}

#[test]
fn ten_minute_scrapes_cover_buckets_but_cannot_supply_baselines() {
    let s = series("s1", "p1", T0, EVAL, 600, leaking);
    let a = Fixture::new(vec![s]).run();
    assert_eq!(a.reasons, vec![Reason::InsufficientMemoryTrendBuckets]);
    assert_eq!(a.episodes[0].coverage, 1.0);
}

#[test]
fn series_that_stopped_an_hour_ago_is_stale_usage() {
    let s = series("s1", "p1", T0, EVAL - HOUR, 30, leaking);
    let a = Fixture::new(vec![s]).run();
    assert_eq!(a.status, LeakStatus::InsufficientData);
    assert_eq!(a.reasons, vec![Reason::StaleUsage]);
    assert_eq!(a.episodes[0].observed_end, EVAL - HOUR);
}

#[test]
fn series_without_samples_in_the_release_is_missing_usage_and_before_window_is_stale() {
    let before_release = series("s1", "p1", T0 - 3 * HOUR, T0 - HOUR, 30, leaking);
    let mut fx = Fixture::new(vec![before_release, full_day("s2", "p2", leaking)]);
    fx.window_start = T0 - 48 * HOUR;
    let mut old = series("s3", "p3", T0, T0 + 2 * HOUR, 30, leaking);
    old.id = "s0".into();
    fx.series.push(old);
    let a = fx.run();
    let ids: Vec<&str> = a.episodes.iter().map(|e| e.series_id.as_str()).collect();
    assert_eq!(ids, vec!["s0", "s1", "s2"]);
    assert_eq!(episode_reasons(&a)[0], vec![Reason::StaleUsage]);
    assert_eq!(episode_reasons(&a)[1], vec![Reason::MissingUsage]);
    assert_eq!(a.episodes[1].sample_count, 0);
    assert_eq!(
        a.status,
        LeakStatus::PotentialLeak,
        "a finding coexists with skips"
    );
    assert_eq!(
        (
            a.evaluated_episodes,
            a.suspected_episodes,
            a.skipped_episodes
        ),
        (1, 1, 2)
    );
}

#[test]
fn lifetime_younger_than_warmup_has_insufficient_history() {
    let s = series("s1", "p1", EVAL - 10 * 60_000, EVAL, 30, leaking);
    let a = Fixture::new(vec![s]).run();
    assert_eq!(a.reasons, vec![Reason::InsufficientHistory]);
    assert_eq!(a.episodes[0].sample_count, 21);
}

#[test]
fn one_sample_after_warmup_is_insufficient_samples() {
    let mut s = series(
        "s1",
        "p1",
        EVAL - 40 * 60_000,
        EVAL - 40 * 60_000,
        30,
        leaking,
    );
    s.samples.push(Sample {
        timestamp: EVAL,
        value: MIB,
    });
    let a = Fixture::new(vec![s]).run();
    assert_eq!(a.reasons, vec![Reason::InsufficientSamples]);
    assert_eq!(a.episodes[0].sample_count, 1);
}
