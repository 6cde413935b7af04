//! Aggregate statuses, OOM splitting and corroboration, leak windows, ordering and
//! numeric robustness.

use super::*;

#[test]
fn no_selected_series_is_insufficient_data_with_missing_usage() {
    let a = Fixture::new(Vec::new()).run();
    assert_eq!(a.status, LeakStatus::InsufficientData);
    assert_eq!(a.reasons, vec![Reason::MissingUsage]);
    assert!(a.episodes.is_empty());
}

#[test]
fn skipped_reasons_are_united_in_episode_order() {
    let stale = series("a", "pa", T0, EVAL - HOUR, 30, leaking);
    let short = series("b", "pb", EVAL - 5 * HOUR, EVAL, 30, leaking);
    let stale2 = series("c", "pc", T0, EVAL - HOUR, 30, leaking);
    let flat = full_day("d", "pd", |_| MIB);
    let a = Fixture::new(vec![flat, stale2, short, stale]).run();
    assert_eq!(a.status, LeakStatus::InsufficientData);
    assert_eq!(
        a.reasons,
        vec![Reason::StaleUsage, Reason::InsufficientMemoryTrendBuckets]
    );
    assert_eq!(
        (
            a.evaluated_episodes,
            a.suspected_episodes,
            a.skipped_episodes
        ),
        (1, 0, 3)
    );
}

#[test]
fn all_evaluated_replicas_without_growth_give_no_leak_pattern() {
    let a = Fixture::new(vec![
        full_day("s1", "p1", |_| MIB),
        full_day("s2", "p2", |h| leaking(h.min(17.0))),
    ])
    .run();
    assert_eq!(a.status, LeakStatus::NoLeakPattern);
    assert_eq!(a.reasons, vec![Reason::NoSustainedMemoryBaselineGrowth]);
    assert_eq!((a.evaluated_episodes, a.skipped_episodes), (2, 0));
}

#[test]
fn same_pod_oom_splits_the_series_and_corroborates_the_first_episode() {
    let mut fx = Fixture::new(vec![full_day("s1", "p1", |h| {
        leaking(if h <= 12.0 { h } else { h - 12.0 })
    })]);
    fx.kills = vec![kill("oom-1", "p1", T0 + 12 * HOUR + 10_000)];
    let a = fx.run();
    assert_eq!(a.episodes.len(), 2);
    let (first, second) = (&a.episodes[0], &a.episodes[1]);
    assert_eq!(first.observed_end, T0 + 12 * HOUR);
    assert_eq!(first.oom_kill_ids, vec!["oom-1".to_string()]);
    assert_eq!(first.status, LeakStatus::PotentialLeak);
    assert_eq!(
        first.reasons,
        vec![
            Reason::SustainedMemoryBaselineGrowth,
            Reason::OomKillDetected
        ]
    );
    assert_eq!(second.observed_start, T0 + 12 * HOUR + 30 * 60_000 + 30_000);
    assert!(second.oom_kill_ids.is_empty());
    assert_eq!(a.status, LeakStatus::PotentialLeak);
    assert_eq!(a.reasons, vec![Reason::SustainedMemoryBaselineGrowth]);
    assert_eq!(a.suspected_episodes, 2);
}

#[test]
fn oom_kill_fresh_at_termination_exempts_an_ended_episode_from_staleness() {
    let s = series("s1", "p1", T0, T0 + 20 * HOUR, 30, leaking);
    let mut fx = Fixture::new(vec![s.clone()]);
    fx.kills = vec![kill("oom-1", "p1", T0 + 20 * HOUR + 60_000)];
    let a = fx.run();
    assert_eq!(a.status, LeakStatus::PotentialLeak);
    assert_eq!(a.episodes[0].oom_kill_ids, vec!["oom-1".to_string()]);

    // The same kill without pod identity cannot establish the link.
    let mut unknown = Fixture::new(vec![s]);
    unknown.kills = vec![kill("oom-1", "", T0 + 20 * HOUR + 60_000)];
    let b = unknown.run();
    assert_eq!(b.reasons, vec![Reason::StaleUsage]);
}

#[test]
fn oom_after_a_flat_episode_lists_the_kill_but_establishes_no_leak() {
    let s = series("s1", "p1", T0, T0 + 20 * HOUR, 30, |_| MIB);
    let mut fx = Fixture::new(vec![s]);
    fx.kills = vec![kill("oom-1", "p1", T0 + 20 * HOUR + 60_000)];
    let a = fx.run();
    assert_eq!(a.status, LeakStatus::NoLeakPattern);
    assert_eq!(a.episodes[0].oom_kill_ids, vec!["oom-1".to_string()]);
    assert_eq!(
        a.episodes[0].reasons,
        vec![Reason::NoSustainedMemoryBaselineGrowth]
    );
}

#[test]
fn zero_starting_baseline_omits_relative_growth() {
    let from_zero = |h: f64| (h - 6.0).max(0.0) * 20.0 * MIB;
    let a = Fixture::new(vec![full_day("s1", "p1", from_zero)]).run();
    let e = &a.episodes[0];
    assert_eq!(e.baseline_start_bytes, 0.0);
    assert_eq!(e.relative_growth, None);
    assert_eq!(e.status, LeakStatus::PotentialLeak);
    let json = serde_json::to_value(e).expect("json");
    assert!(json.get("relativeGrowth").is_none());
}

#[test]
fn leak_window_is_bounded_by_lookback_and_release_start() {
    let mut fx = Fixture::new(vec![full_day("s1", "p1", leaking)]);
    fx.window_start = T0 - 72 * HOUR;
    fx.release_started_at = T0 - 48 * HOUR;
    assert_eq!(fx.run().window_start, EVAL - 24 * HOUR);
    fx.release_started_at = T0 + HOUR;
    let a = fx.run();
    assert_eq!(a.window_start, T0 + HOUR);
    assert_eq!(a.episodes[0].observed_start, T0 + HOUR + HOUR / 2);
}

#[test]
fn not_run_reports_the_identity_reasons_over_the_leak_window() {
    let fx = Fixture::new(vec![full_day("s1", "p1", leaking)]);
    let policy = MemoryLeakPolicy::defaults();
    let series: Vec<&Series> = fx.series.iter().collect();
    let ctx = LeakContext {
        window_start: T0 - 72 * HOUR,
        release_started_at: 0,
        evaluation_time: EVAL,
        series: &series,
        oom_kills: &[],
        minimum_coverage: 0.9,
        freshness_seconds: 300,
    };
    let a = not_run(&ctx, &policy, vec![Reason::UnknownReleaseStart]);
    assert_eq!(a.status, LeakStatus::InsufficientData);
    assert_eq!(a.reasons, vec![Reason::UnknownReleaseStart]);
    assert_eq!((a.window_start, a.window_end), (EVAL - 24 * HOUR, EVAL));
    assert!(a.episodes.is_empty());
}

#[test]
fn output_is_independent_of_series_sample_and_kill_order() {
    let mut fx = Fixture::new(vec![
        full_day("s2", "p2", leaking),
        full_day("s1", "p1", |h| leaking(h % 12.0)),
    ]);
    fx.kills = vec![
        kill("k2", "p1", T0 + 12 * HOUR),
        kill("k1", "p1", T0 + 12 * HOUR),
    ];
    let a = fx.run();
    fx.series.reverse();
    fx.kills.reverse();
    for s in &mut fx.series {
        s.samples.reverse();
        let dup = s.samples[3];
        s.samples.push(dup);
    }
    assert_eq!(fx.run(), a);
    assert_eq!(
        a.episodes[0].oom_kill_ids,
        vec!["k1".to_string(), "k2".to_string()]
    );
}

#[test]
fn huge_values_report_numeric_range_instead_of_panicking() {
    // A 4 h warm-up leaves 40 buckets, so the quarter medians average two values.
    let policy = MemoryLeakPolicy {
        warmup_seconds: 4 * 3600,
        ..MemoryLeakPolicy::default()
    }
    .normalized()
    .expect("valid");
    let a = Fixture::new(vec![full_day("s1", "p1", |_| f64::MAX)]).run_with(&policy);
    assert_eq!(a.episodes[0].bucket_count, 40);
    assert_eq!(a.reasons, vec![Reason::MemoryTrendOutsideNumericRange]);
    assert_eq!(a.episodes[0].status, LeakStatus::InsufficientData);
    serde_json::to_string(&a).expect("all numbers stay finite");
}

#[test]
fn extreme_timestamps_and_settings_never_panic() {
    let mut s = full_day("s1", "p1", leaking);
    s.samples.push(Sample {
        timestamp: i64::MIN,
        value: 0.0,
    });
    s.samples.push(Sample {
        timestamp: i64::MAX,
        value: 0.0,
    });
    let mut fx = Fixture::new(vec![s, series("s2", "", T0, T0, 30, |_| 0.0)]);
    fx.kills = vec![kill("k", "p1", i64::MAX), kill("k0", "p1", i64::MIN)];
    for (ws, rs, ev) in [
        (i64::MIN, i64::MIN, i64::MIN),
        (i64::MAX, i64::MAX, i64::MAX),
        (i64::MIN, 0, i64::MAX),
        (EVAL, EVAL, T0),
    ] {
        fx.window_start = ws;
        fx.release_started_at = rs;
        fx.evaluation_time = ev;
        let a = fx.run();
        serde_json::to_string(&a).expect("serializable");
    }
}

#[test]
fn seeded_random_inputs_never_panic_and_always_serialize() {
    let mut state: u64 = 0x5eed_1eaf;
    let mut next = move |bound: u64| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) % bound.max(1)
    };
    for _ in 0..150 {
        let mut all = Vec::new();
        for s in 0..next(4) {
            let pod = if next(3) == 0 {
                String::new()
            } else {
                format!("p{s}")
            };
            let step = 1 + next(900) as i64;
            let from = T0 - HOUR + next(26) as i64 * HOUR;
            let mut x = series(&format!("s{s}"), &pod, from, EVAL + HOUR, step, |h| h * MIB);
            x.samples.retain(|_| next(10) != 0);
            for sample in &mut x.samples {
                sample.value = match next(20) {
                    0 => 0.0,
                    1 => f64::MAX,
                    _ => sample.value,
                };
            }
            all.push(x);
        }
        let mut fx = Fixture::new(all);
        for k in 0..next(4) {
            let t = T0 + next(25 * 3600) as i64 * 1000;
            fx.kills
                .push(kill(&format!("k{k}"), &format!("p{}", next(4)), t));
        }
        let policy = MemoryLeakPolicy {
            bucket_duration_seconds: [0, 600, 1800][next(3) as usize],
            minimum_history_seconds: [0, 7200, 21600][next(3) as usize],
            warmup_seconds: next(7200) as i64,
            minimum_samples_per_bucket: 2 + next(6) as i64,
            ..MemoryLeakPolicy::default()
        };
        let Ok(policy) = policy.normalized() else {
            continue;
        };
        let a = fx.run_with(&policy);
        serde_json::to_string(&a).expect("finite, serializable output");
        let counted = a.evaluated_episodes + a.skipped_episodes;
        assert_eq!(counted, a.episodes.len() as i64);
        assert!(a.episodes.iter().all(|e| e.coverage <= 1.0));
    }
}
