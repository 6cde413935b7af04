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

use crate::analysis::Policy;
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
