//! Batch work (a CronJob, a bare Job) is sized from its runs, which leave the cluster
//! idle between them: the engine's evidence guards, made for workloads that run all the
//! time, would refuse every one. Under the workload's own policy, two guards change:
//!
//! - freshness spans the analysis window: a run anywhere in it is current evidence (the
//!   latest run's usage and settings are as old as the time since it finished);
//! - coverage is not a guard ([`BATCH_MINIMUM_COVERAGE`], the engine needs a positive
//!   value): over a window, a nightly job covers its duty cycle, a few percent, however
//!   well it was scraped.
//!
//! History (first to last run observed ≥ `minimumHistorySeconds`) and the distinct
//! observation times (≥ `minimumSamples`, counted across runs) still guard, and memory
//! is sized for the peak of every run, as the engine sizes memory.
//!
//! The engine's confidence multiplies by coverage and is capped by the sizing series'
//! own span, so a nightly job's would read a few percent however many runs were seen.
//! The recommendation's confidence (what the list shows and `minConfidence` is checked
//! against) is therefore [`confidence`]: the engine's formula over history and samples
//! alone. The engine's own figures stay in the stored analysis.

use crate::analysis::{EvidencePolicy, Policy, ResourceAnalysis};
use crate::datasource::mapping::pods::is_batch;
use crate::datasource::Window;

/// The coverage batch work needs: any.
pub const BATCH_MINIMUM_COVERAGE: f64 = 0.000001;

/// `policy` (normalized) as workloads of `kind` are analyzed under over `window`.
pub fn evidence_for(kind: &str, mut policy: Policy, window: Window) -> Policy {
    if is_batch(kind) {
        let window_s = (window.end_ms - window.start_ms).max(0) / 1000;
        let e = &mut policy.evidence;
        e.freshness_seconds = e.freshness_seconds.max(window_s);
        e.minimum_coverage = BATCH_MINIMUM_COVERAGE;
    }
    policy
}

/// The confidence of a recommendation for batch work of `kind` (`None` for other kinds,
/// or when nothing is recommended): the lowest over the resources with a recommendation
/// of ⌊95 × min(1, observed span / minimumHistory) × min(1, observations /
/// minimumSamples)⌋.
pub fn confidence(
    kind: &str,
    results: &[&ResourceAnalysis],
    evidence: &EvidencePolicy,
) -> Option<i64> {
    if !is_batch(kind) {
        return None;
    }
    results
        .iter()
        .filter(|r| !r.recommendations.is_empty())
        .map(|r| {
            let q = &r.data_quality;
            let span_s = (q.observed_end - q.observed_start).max(0) as f64 / 1000.0;
            let history = (span_s / evidence.minimum_history_seconds.max(1) as f64).min(1.0);
            let samples =
                (q.observation_count as f64 / evidence.minimum_samples.max(1) as f64).min(1.0);
            (95.0 * history * samples).floor() as i64
        })
        .min()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_batch_work_drops_the_coverage_guard_and_is_fresh_for_the_window() {
        let policy = crate::analysis::normalize_policy(&Policy::default()).expect("defaults");
        let window = Window {
            start_ms: 0,
            end_ms: 7 * 86_400_000,
            step_seconds: 60,
        };
        let batch = evidence_for("CronJob", policy.clone(), window);
        assert_eq!(batch.evidence.freshness_seconds, 7 * 86_400);
        assert_eq!(batch.evidence.minimum_coverage, BATCH_MINIMUM_COVERAGE);
        assert_eq!(
            batch.evidence.minimum_history_seconds,
            policy.evidence.minimum_history_seconds
        );
        assert_eq!(evidence_for("Deployment", policy.clone(), window), policy);
        assert!(
            crate::analysis::normalize_policy(&batch).is_ok(),
            "the engine takes it"
        );
    }
}
