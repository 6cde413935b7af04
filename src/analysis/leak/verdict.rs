//! The verdict on one episode: evidence gates (warm-up, samples, freshness, buckets,
//! coverage), then the baseline-growth and recent-trend thresholds of detector "3".

use super::super::gaps::uniform_gap;
use super::super::reason::Reason;
use super::super::series::Sample;
use super::bucket::{complete_buckets, fill, Grid};
use super::episode::{fresh_at, Episode};
use super::evidence::{LeakStatus, MemoryLeakEvidence};
use super::policy::{MemoryLeakPolicy, MIN_BUCKETS};
use super::trend::{median, median_in_place, theil_sen, Point};

/// Minimum number of baselines in the recent-trend check.
const MIN_RECENT_BUCKETS: usize = 6;
/// The recent slope must keep at least this fraction of the whole-episode slope.
const MIN_RECENT_SLOPE_FRACTION: f64 = 0.25;

/// Everything an episode is judged against.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Settings<'p> {
    pub policy: &'p MemoryLeakPolicy,
    /// Start of the leak window, Unix ms.
    pub window_start: i64,
    /// Evaluation time, Unix ms.
    pub evaluation_time: i64,
    /// `evidence.minimumCoverage`.
    pub minimum_coverage: f64,
    /// `evidence.freshnessSeconds` in ms.
    pub freshness_ms: i64,
}

/// Judges one episode of the series `series_id` / `pod_uid`.
pub(crate) fn judge(
    episode: &Episode<'_>,
    series_id: &str,
    pod_uid: &str,
    settings: &Settings<'_>,
) -> MemoryLeakEvidence {
    let mut ev = MemoryLeakEvidence::empty(series_id, pod_uid);
    ev.oom_kill_ids = episode.oom_kill_ids.clone();
    match baselines(episode, settings, &mut ev) {
        Ok(points) => assess(&points, settings.policy, &mut ev),
        Err(reasons) => ev.reasons = reasons,
    }
    ev
}

/// Applies the evidence gates in contract order and returns the usable baselines.
/// Measured fields are recorded in `ev` as far as they were computed.
fn baselines(
    episode: &Episode<'_>,
    settings: &Settings<'_>,
    ev: &mut MemoryLeakEvidence,
) -> Result<Vec<Point>, Vec<Reason>> {
    let now = settings.evaluation_time;
    record_samples(ev, &episode.samples);
    let warm_from = episode
        .lifetime_start
        .saturating_add(settings.policy.warmup_seconds.saturating_mul(1000));
    if warm_from > now {
        return Err(vec![Reason::InsufficientHistory]);
    }
    let start = settings.window_start.max(warm_from);
    let skip = episode.samples.partition_point(|s| s.timestamp < start);
    let samples = episode.samples.get(skip..).unwrap_or_default();
    record_samples(ev, samples);
    let Some(last) = samples.last().filter(|_| samples.len() >= 2) else {
        return Err(vec![Reason::InsufficientSamples]);
    };
    let corroborated = !episode.oom_kill_ids.is_empty();
    if !corroborated && !fresh_at(last.timestamp, now, settings.freshness_ms) {
        return Err(vec![Reason::StaleUsage]);
    }
    bucketize(samples, start, settings, ev)
}

/// Builds the bucket grid from `start` to the effective end and checks coverage and
/// the usable buckets. `samples` are sorted, distinct, at or after `start`, ≥ 2.
fn bucketize(
    samples: &[Sample],
    start: i64,
    settings: &Settings<'_>,
    ev: &mut MemoryLeakEvidence,
) -> Result<Vec<Point>, Vec<Reason>> {
    let policy = settings.policy;
    let cadence = match uniform_gap(samples.iter().map(|s| s.timestamp)) {
        Some(gap) => gap as f64 / 1000.0,
        None => {
            let mut gaps: Vec<f64> = samples
                .windows(2)
                .map(|p| p[1].timestamp.saturating_sub(p[0].timestamp) as f64 / 1000.0)
                .collect();
            median_in_place(&mut gaps)
        }
    };
    let last = samples.last().map_or(start, |s| s.timestamp);
    let tail = settings.evaluation_time.saturating_sub(last) as f64 / 1000.0;
    let span = last.saturating_sub(start) as f64 / 1000.0 + cadence.min(tail);
    let grid = Grid {
        start,
        bucket_seconds: policy.bucket_duration_seconds,
        count: complete_buckets(span, policy.bucket_duration_seconds),
        cadence_seconds: cadence,
        minimum_samples: policy.minimum_samples_per_bucket,
    };
    ev.bucket_count = grid.count;
    if grid.count < MIN_BUCKETS || span < policy.minimum_history_seconds as f64 {
        return Err(vec![Reason::InsufficientMemoryTrendBuckets]);
    }
    let buckets = fill(&grid, samples);
    ev.coverage = buckets.coverage;
    let mut reasons = Vec::new();
    if buckets.coverage < settings.minimum_coverage {
        reasons.push(Reason::SparseCoverage);
    }
    let usable = buckets.baselines.len() as i64;
    if usable < MIN_BUCKETS
        || usable.saturating_mul(policy.bucket_duration_seconds) < policy.minimum_history_seconds
    {
        reasons.push(Reason::InsufficientMemoryTrendBuckets);
    }
    if reasons.is_empty() {
        Ok(buckets.baselines)
    } else {
        Err(reasons)
    }
}

fn record_samples(ev: &mut MemoryLeakEvidence, samples: &[Sample]) {
    ev.observed_start = samples.first().map_or(0, |s| s.timestamp);
    ev.observed_end = samples.last().map_or(0, |s| s.timestamp);
    ev.sample_count = samples.len() as i64;
}

/// Measures the baseline trend and sets the episode status and reasons.
fn assess(points: &[Point], policy: &MemoryLeakPolicy, ev: &mut MemoryLeakEvidence) {
    let quarter = points.len() / 4;
    let bytes: Vec<f64> = points.iter().map(|p| p.bytes).collect();
    let start = median(bytes.get(..quarter).unwrap_or_default());
    let end = median(bytes.get(bytes.len() - quarter..).unwrap_or_default());
    let growth = end - start;
    let relative = (start > 0.0).then(|| growth / start);
    let overall = theil_sen(points);
    let recent_len = quarter.max(MIN_RECENT_BUCKETS).min(points.len());
    let recent = theil_sen(points.get(points.len() - recent_len..).unwrap_or_default());

    let measured = [start, end, growth, overall.slope, recent.slope];
    if measured
        .iter()
        .chain(relative.iter())
        .any(|v| !v.is_finite())
    {
        ev.reasons = vec![Reason::MemoryTrendOutsideNumericRange];
        return;
    }
    ev.baseline_start_bytes = start;
    ev.baseline_end_bytes = end;
    ev.growth_bytes = growth;
    ev.relative_growth = relative;
    ev.slope_bytes_per_hour = overall.slope;
    ev.recent_slope_bytes_per_hour = recent.slope;
    ev.trend_consistency = overall.consistency;
    ev.recent_trend_consistency = recent.consistency;
    classify(policy, ev);
}

/// The thresholds of detector "3" on the measured fields of `ev`.
fn classify(policy: &MemoryLeakPolicy, ev: &mut MemoryLeakEvidence) {
    let min_consistency = policy.minimum_trend_consistency;
    let slope = ev.slope_bytes_per_hour;
    let recent = ev.recent_slope_bytes_per_hour;
    let grew = ev.growth_bytes >= policy.minimum_growth_bytes
        && ev
            .relative_growth
            .is_none_or(|r| r >= policy.minimum_relative_growth)
        && slope > 0.0
        && ev.trend_consistency >= min_consistency;
    let continues = recent > 0.0
        && recent >= MIN_RECENT_SLOPE_FRACTION * slope
        && ev.recent_trend_consistency >= min_consistency;
    let (status, reason) = if !grew {
        (
            LeakStatus::NoLeakPattern,
            Reason::NoSustainedMemoryBaselineGrowth,
        )
    } else if !continues {
        (
            LeakStatus::NoLeakPattern,
            Reason::MemoryBaselinePlateauOrRecovery,
        )
    } else {
        (
            LeakStatus::PotentialLeak,
            Reason::SustainedMemoryBaselineGrowth,
        )
    };
    ev.status = status;
    ev.reasons = vec![reason];
    if status == LeakStatus::PotentialLeak && !ev.oom_kill_ids.is_empty() {
        ev.reasons.push(Reason::OomKillDetected);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: f64 = 1024.0 * 1024.0;

    /// 24 half-hour baselines: `f` of the bucket index.
    fn points(f: impl Fn(f64) -> f64) -> Vec<Point> {
        (0..24)
            .map(|i| Point {
                hours: f64::from(i) / 2.0,
                bytes: f(f64::from(i)),
            })
            .collect()
    }

    fn verdict(points: &[Point]) -> MemoryLeakEvidence {
        let mut ev = MemoryLeakEvidence::empty("s", "");
        assess(points, &MemoryLeakPolicy::defaults(), &mut ev);
        ev
    }

    #[test]
    fn quarter_medians_and_slopes_are_measured_in_hours() {
        let ev = verdict(&points(|i| 100.0 * MIB + i * 10.0 * MIB));
        // Quarter = 6 buckets: medians of indices 0..6 and 18..24.
        assert_eq!(ev.baseline_start_bytes, 125.0 * MIB);
        assert_eq!(ev.baseline_end_bytes, 305.0 * MIB);
        assert_eq!(ev.growth_bytes, 180.0 * MIB);
        assert_eq!(ev.relative_growth, Some(180.0 / 125.0));
        assert_eq!(ev.slope_bytes_per_hour, 20.0 * MIB);
        assert_eq!(ev.status, LeakStatus::PotentialLeak);
    }

    #[test]
    fn large_absolute_but_small_relative_growth_is_not_sustained() {
        let ev = verdict(&points(|i| 10_000.0 * MIB + i * 10.0 * MIB));
        assert!(ev.growth_bytes >= 64.0 * MIB);
        assert_eq!(ev.reasons, vec![Reason::NoSustainedMemoryBaselineGrowth]);
    }

    #[test]
    fn growth_below_64_mib_is_not_sustained_even_when_relative_growth_is_large() {
        let ev = verdict(&points(|i| MIB + i * 2.0 * MIB));
        assert!(ev.relative_growth.expect("positive start") > 0.2);
        assert_eq!(ev.reasons, vec![Reason::NoSustainedMemoryBaselineGrowth]);
    }

    #[test]
    fn noisy_growth_below_the_consistency_threshold_is_not_sustained() {
        let ev = verdict(&points(|i| {
            100.0 * MIB + i * 10.0 * MIB + if i as i64 % 2 == 0 { 300.0 * MIB } else { 0.0 }
        }));
        assert!(ev.slope_bytes_per_hour > 0.0);
        assert!(ev.trend_consistency < 0.8, "{}", ev.trend_consistency);
        assert_eq!(ev.reasons, vec![Reason::NoSustainedMemoryBaselineGrowth]);
    }

    #[test]
    fn recent_slope_below_a_quarter_of_the_overall_slope_is_a_plateau() {
        // Last 6 buckets grow at 1/5 of the earlier rate.
        let ev = verdict(&points(|i| {
            let rate = 20.0 * MIB;
            100.0 * MIB + rate * i.min(18.0) + rate / 5.0 * (i - 18.0).max(0.0)
        }));
        assert!(ev.recent_slope_bytes_per_hour > 0.0);
        assert!(ev.recent_slope_bytes_per_hour < 0.25 * ev.slope_bytes_per_hour);
        assert_eq!(ev.reasons, vec![Reason::MemoryBaselinePlateauOrRecovery]);
    }

    #[test]
    fn recent_trend_uses_at_least_six_buckets() {
        let ev = verdict(&points(|i| 100.0 * MIB + i * 10.0 * MIB));
        // 24 buckets: quarter is 6, and 6 consecutive baselines span 2.5 hours.
        assert_eq!(ev.recent_slope_bytes_per_hour, 20.0 * MIB);
        assert_eq!(ev.recent_trend_consistency, 1.0);
    }
}
