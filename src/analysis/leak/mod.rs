//! Optional potential memory-leak detection (leak detector version "3", contract §10).
//!
//! Looks for a persistently rising lower memory baseline per container lifetime
//! ("episode") in the latest lookback window: P10 baselines of complete buckets, a
//! local Theil–Sen trend and a recent-quarter continuation check. Advisory only: it
//! never changes sizing. Pure: no IO, clock or randomness; inputs are never mutated.
//!
//! Files: `policy` (settings and validation), `episode` (lifetimes and OOM splits),
//! `bucket` (grid, coverage, baselines), `trend` (median, P10, Theil–Sen), `verdict`
//! (per-episode gates and thresholds), `evidence` (the output types).

mod bucket;
mod episode;
mod evidence;
mod policy;
mod trend;
mod verdict;

#[cfg(test)]
mod scenarios;

use super::reason::Reason;
use super::series::{OomKill, Series};
use episode::Ranges;
use verdict::Settings;

pub use evidence::{LeakStatus, MemoryLeakAnalysis, MemoryLeakEvidence};
pub use policy::MemoryLeakPolicy;

/// Leak detector version reported in `memoryLeak.detectorVersion`.
pub const DETECTOR_VERSION: &str = "3";

/// Everything the detector needs from the current analysis, already selected by sizing.
pub struct LeakContext<'a> {
    /// `windowStart` of the input, Unix ms.
    pub window_start: i64,
    /// After boundary inference (may be 0 when unknown).
    pub release_started_at: i64,
    /// `evaluationTime` of the input, Unix ms.
    pub evaluation_time: i64,
    /// Memory series whose workloadUID and release equal the target's, any order.
    pub series: &'a [&'a Series],
    /// The OOM kills selected for this container (§8), sorted by (timestamp, id).
    pub oom_kills: &'a [&'a OomKill],
    /// `evidence.minimumCoverage` of the normalized policy.
    pub minimum_coverage: f64,
    /// `evidence.freshnessSeconds` of the normalized policy.
    pub freshness_seconds: i64,
}

/// Runs the detector. `policy` is already normalized.
pub fn detect(ctx: &LeakContext<'_>, policy: &MemoryLeakPolicy) -> MemoryLeakAnalysis {
    let window_start = leak_window_start(ctx, policy);
    let freshness_ms = ctx.freshness_seconds.saturating_mul(1000);
    let ranges = Ranges {
        release_start: ctx.window_start.max(ctx.release_started_at),
        window_start,
        end: ctx.evaluation_time,
        freshness_ms,
    };
    let settings = Settings {
        policy,
        window_start,
        evaluation_time: ctx.evaluation_time,
        minimum_coverage: ctx.minimum_coverage,
        freshness_ms,
    };
    let mut kills: Vec<&OomKill> = ctx.oom_kills.to_vec();
    kills.sort_by(|a, b| (a.timestamp, &a.id).cmp(&(b.timestamp, &b.id)));
    let mut series: Vec<&Series> = ctx.series.to_vec();
    series.sort_by(|a, b| (&a.id, &a.pod_uid).cmp(&(&b.id, &b.pod_uid)));

    let mut episodes = Vec::new();
    for s in series {
        match episode::split(s, &kills, &ranges) {
            Ok(found) => episodes.extend(
                found
                    .iter()
                    .map(|e| verdict::judge(e, &s.id, &s.pod_uid, &settings)),
            ),
            Err(reason) => {
                let mut skipped = MemoryLeakEvidence::empty(&s.id, &s.pod_uid);
                skipped.reasons.push(reason);
                episodes.push(skipped);
            }
        }
    }
    aggregate(window_start, ctx.evaluation_time, episodes)
}

/// The result when identity problems prevent the detector from running: status
/// `insufficient-data`, no episodes, and `reasons` as given.
pub fn not_run(
    ctx: &LeakContext<'_>,
    policy: &MemoryLeakPolicy,
    reasons: Vec<Reason>,
) -> MemoryLeakAnalysis {
    MemoryLeakAnalysis {
        detector_version: DETECTOR_VERSION.to_string(),
        status: LeakStatus::InsufficientData,
        window_start: leak_window_start(ctx, policy),
        window_end: ctx.evaluation_time,
        evaluated_episodes: 0,
        suspected_episodes: 0,
        skipped_episodes: 0,
        reasons,
        episodes: Vec::new(),
    }
}

/// `max(windowStart, releaseStartedAt, evaluationTime − lookback)`.
fn leak_window_start(ctx: &LeakContext<'_>, policy: &MemoryLeakPolicy) -> i64 {
    let lookback_ms = policy.lookback_seconds.saturating_mul(1000);
    ctx.window_start
        .max(ctx.release_started_at)
        .max(ctx.evaluation_time.saturating_sub(lookback_ms))
}

/// Counts episodes and derives the aggregate status and reasons.
fn aggregate(
    window_start: i64,
    window_end: i64,
    episodes: Vec<MemoryLeakEvidence>,
) -> MemoryLeakAnalysis {
    let count = |status: LeakStatus| episodes.iter().filter(|e| e.status == status).count();
    let suspected = count(LeakStatus::PotentialLeak);
    let skipped = count(LeakStatus::InsufficientData);
    let evaluated = episodes.len() - skipped;
    let (status, reasons) = if suspected > 0 {
        (
            LeakStatus::PotentialLeak,
            vec![Reason::SustainedMemoryBaselineGrowth],
        )
    } else if episodes.is_empty() {
        (LeakStatus::InsufficientData, vec![Reason::MissingUsage])
    } else if skipped == 0 {
        (
            LeakStatus::NoLeakPattern,
            vec![Reason::NoSustainedMemoryBaselineGrowth],
        )
    } else {
        let mut union = Vec::new();
        for e in episodes
            .iter()
            .filter(|e| e.status == LeakStatus::InsufficientData)
        {
            for r in &e.reasons {
                if !union.contains(r) {
                    union.push(*r);
                }
            }
        }
        (LeakStatus::InsufficientData, union)
    };
    MemoryLeakAnalysis {
        detector_version: DETECTOR_VERSION.to_string(),
        status,
        window_start,
        window_end,
        evaluated_episodes: evaluated as i64,
        suspected_episodes: suspected as i64,
        skipped_episodes: skipped as i64,
        reasons,
        episodes,
    }
}
