//! `memory.leakDetection`: the tunable thresholds of the leak detector, their
//! defaults and their validation (contract §3, "MemoryLeakPolicy").

use serde::{Deserialize, Serialize};

/// Largest duration in seconds that still fits in Unix milliseconds.
const MAX_SECONDS: i64 = i64::MAX / 1000;
/// Upper bound on buckets in the lookback; bounds the pairwise trend computation.
const MAX_BUCKETS: i64 = 256;
/// The minimum history must span at least this many buckets.
pub(crate) const MIN_BUCKETS: i64 = 12;

/// `memory.leakDetection` in the policy. Exact-zero fields select defaults.
/// Field order is the policy-hash order of the contract (§3).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryLeakPolicy {
    /// How far back from the evaluation time episodes are examined (default 24 h).
    #[serde(default)]
    pub lookback_seconds: i64,
    /// Width of one baseline bucket (default 30 min).
    #[serde(default)]
    pub bucket_duration_seconds: i64,
    /// History the usable buckets must supply after warm-up (default 6 h).
    #[serde(default)]
    pub minimum_history_seconds: i64,
    /// Start of each container lifetime that is ignored (default 30 min).
    #[serde(default)]
    pub warmup_seconds: i64,
    /// Distinct samples a bucket needs to supply a baseline (default 5).
    #[serde(default)]
    pub minimum_samples_per_bucket: i64,
    /// Baseline growth in bytes a leak must show (default 64 MiB).
    #[serde(default)]
    pub minimum_growth_bytes: f64,
    /// Baseline growth as a fraction of the starting baseline (default 0.2).
    #[serde(default)]
    pub minimum_relative_growth: f64,
    /// Fraction of increasing bucket pairs a trend needs (default 0.8).
    #[serde(default)]
    pub minimum_trend_consistency: f64,
}

impl MemoryLeakPolicy {
    /// The detector-version-3 defaults, as `{}` normalizes to.
    pub fn defaults() -> MemoryLeakPolicy {
        MemoryLeakPolicy {
            lookback_seconds: 86_400,
            bucket_duration_seconds: 1_800,
            minimum_history_seconds: 21_600,
            warmup_seconds: 1_800,
            minimum_samples_per_bucket: 5,
            minimum_growth_bytes: 67_108_864.0,
            minimum_relative_growth: 0.2,
            minimum_trend_consistency: 0.8,
        }
    }

    /// Defaults filled in and validated; the error names `memory.leakDetection`.
    /// `self` is left untouched.
    pub fn normalized(&self) -> Result<MemoryLeakPolicy, String> {
        let d = MemoryLeakPolicy::defaults();
        let p = MemoryLeakPolicy {
            lookback_seconds: or_default_i64(self.lookback_seconds, d.lookback_seconds),
            bucket_duration_seconds: or_default_i64(
                self.bucket_duration_seconds,
                d.bucket_duration_seconds,
            ),
            minimum_history_seconds: or_default_i64(
                self.minimum_history_seconds,
                d.minimum_history_seconds,
            ),
            warmup_seconds: or_default_i64(self.warmup_seconds, d.warmup_seconds),
            minimum_samples_per_bucket: or_default_i64(
                self.minimum_samples_per_bucket,
                d.minimum_samples_per_bucket,
            ),
            minimum_growth_bytes: or_default_f64(self.minimum_growth_bytes, d.minimum_growth_bytes),
            minimum_relative_growth: or_default_f64(
                self.minimum_relative_growth,
                d.minimum_relative_growth,
            ),
            minimum_trend_consistency: or_default_f64(
                self.minimum_trend_consistency,
                d.minimum_trend_consistency,
            ),
        };
        p.validate()?;
        Ok(p)
    }

    fn validate(&self) -> Result<(), String> {
        check_duration("lookbackSeconds", self.lookback_seconds)?;
        check_duration("bucketDurationSeconds", self.bucket_duration_seconds)?;
        check_duration("minimumHistorySeconds", self.minimum_history_seconds)?;
        check_duration("warmupSeconds", self.warmup_seconds)?;
        let (lookback, bucket) = (self.lookback_seconds, self.bucket_duration_seconds);
        if self.minimum_history_seconds > lookback {
            return Err(
                "memory.leakDetection.minimumHistorySeconds must not exceed lookbackSeconds".into(),
            );
        }
        if self.minimum_history_seconds / bucket < MIN_BUCKETS {
            return Err(format!(
                "memory.leakDetection.minimumHistorySeconds must span at least {MIN_BUCKETS} buckets of bucketDurationSeconds"
            ));
        }
        if self.warmup_seconds >= lookback {
            return Err(
                "memory.leakDetection.warmupSeconds must be less than lookbackSeconds".into(),
            );
        }
        let whole = lookback / bucket;
        if whole > MAX_BUCKETS || (whole == MAX_BUCKETS && lookback % bucket != 0) {
            return Err(format!(
                "memory.leakDetection.lookbackSeconds must span at most {MAX_BUCKETS} buckets of bucketDurationSeconds"
            ));
        }
        if self.minimum_samples_per_bucket < 2 {
            return Err("memory.leakDetection.minimumSamplesPerBucket must be at least 2".into());
        }
        check_positive("minimumGrowthBytes", self.minimum_growth_bytes)?;
        check_positive("minimumRelativeGrowth", self.minimum_relative_growth)?;
        let c = self.minimum_trend_consistency;
        if !(c.is_finite() && c > 0.5 && c <= 1.0) {
            return Err(
                "memory.leakDetection.minimumTrendConsistency must be finite and in (0.5,1]".into(),
            );
        }
        Ok(())
    }
}

fn or_default_i64(value: i64, default: i64) -> i64 {
    if value == 0 {
        default
    } else {
        value
    }
}

fn or_default_f64(value: f64, default: f64) -> f64 {
    if value == 0.0 {
        default
    } else {
        value
    }
}

fn check_duration(field: &str, seconds: i64) -> Result<(), String> {
    if (1..=MAX_SECONDS).contains(&seconds) {
        Ok(())
    } else {
        Err(format!(
            "memory.leakDetection.{field} must be between 1 and {MAX_SECONDS} seconds"
        ))
    }
}

fn check_positive(field: &str, value: f64) -> Result<(), String> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(format!(
            "memory.leakDetection.{field} must be positive and finite"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(edit: impl FnOnce(&mut MemoryLeakPolicy)) -> Result<MemoryLeakPolicy, String> {
        let mut p = MemoryLeakPolicy::default();
        edit(&mut p);
        p.normalized()
    }

    fn rejected(edit: impl FnOnce(&mut MemoryLeakPolicy)) -> String {
        let err = with(edit).expect_err("policy should be rejected");
        assert!(err.contains("memory.leakDetection"), "{err}");
        err
    }

    #[test]
    fn empty_policy_normalizes_to_the_documented_defaults() {
        let p = MemoryLeakPolicy::default()
            .normalized()
            .expect("defaults are valid");
        assert_eq!(p, MemoryLeakPolicy::defaults());
        assert_eq!(p.lookback_seconds, 86_400);
        assert_eq!(p.bucket_duration_seconds, 1_800);
        assert_eq!(p.minimum_history_seconds, 21_600);
        assert_eq!(p.warmup_seconds, 1_800);
        assert_eq!(p.minimum_samples_per_bucket, 5);
        assert_eq!(p.minimum_growth_bytes, 64.0 * 1024.0 * 1024.0);
        assert_eq!(p.minimum_relative_growth, 0.2);
        assert_eq!(p.minimum_trend_consistency, 0.8);
    }

    #[test]
    fn enabled_with_empty_object_equals_explicit_defaults() {
        let empty: MemoryLeakPolicy = serde_json::from_str("{}").expect("json");
        let explicit: MemoryLeakPolicy = serde_json::from_str(
            r#"{"lookbackSeconds":86400,"bucketDurationSeconds":1800,"minimumHistorySeconds":21600,
            "warmupSeconds":1800,"minimumSamplesPerBucket":5,"minimumGrowthBytes":67108864,
            "minimumRelativeGrowth":0.2,"minimumTrendConsistency":0.8}"#,
        )
        .expect("json");
        let a = empty.normalized().expect("valid");
        let b = explicit.normalized().expect("valid");
        assert_eq!(a, b);
        assert_eq!(
            serde_json::to_string(&a).expect("json"),
            serde_json::to_string(&b).expect("json")
        );
    }

    #[test]
    fn serialized_keys_follow_policy_hash_order() {
        let json = serde_json::to_string(&MemoryLeakPolicy::defaults()).expect("json");
        assert_eq!(
            json,
            "{\"lookbackSeconds\":86400,\"bucketDurationSeconds\":1800,\"minimumHistorySeconds\":21600,\
\"warmupSeconds\":1800,\"minimumSamplesPerBucket\":5,\"minimumGrowthBytes\":67108864.0,\
\"minimumRelativeGrowth\":0.2,\"minimumTrendConsistency\":0.8}"
        );
    }

    #[test]
    fn normalization_does_not_mutate_the_callers_policy() {
        let original = MemoryLeakPolicy {
            warmup_seconds: 600,
            ..MemoryLeakPolicy::default()
        };
        let copy = original.clone();
        let normalized = original.normalized().expect("valid");
        assert_eq!(original, copy);
        assert_eq!(normalized.warmup_seconds, 600);
        assert_eq!(normalized.lookback_seconds, 86_400);
    }

    #[test]
    fn nonzero_fields_override_defaults() {
        let p = with(|p| {
            p.lookback_seconds = 172_800;
            p.minimum_growth_bytes = 1.0;
            p.minimum_trend_consistency = 1.0;
        })
        .expect("valid");
        assert_eq!(p.lookback_seconds, 172_800);
        assert_eq!(p.minimum_growth_bytes, 1.0);
        assert_eq!(p.minimum_trend_consistency, 1.0);
    }

    #[test]
    fn negative_or_oversized_durations_are_rejected() {
        rejected(|p| p.lookback_seconds = -1);
        rejected(|p| p.bucket_duration_seconds = -5);
        rejected(|p| p.minimum_history_seconds = -1);
        rejected(|p| p.warmup_seconds = -1);
        rejected(|p| p.lookback_seconds = i64::MAX / 1000 + 1);
        rejected(|p| p.warmup_seconds = i64::MAX);
    }

    #[test]
    fn minimum_history_must_fit_in_lookback_and_span_twelve_buckets() {
        rejected(|p| p.minimum_history_seconds = 86_401);
        let err = rejected(|p| p.minimum_history_seconds = 12 * 1800 - 1);
        assert!(err.contains("12 buckets"), "{err}");
        assert!(with(|p| p.minimum_history_seconds = 86_400).is_ok());
        assert!(with(|p| {
            p.bucket_duration_seconds = 600;
            p.minimum_history_seconds = 7_200;
        })
        .is_ok());
    }

    #[test]
    fn warmup_must_be_shorter_than_lookback() {
        rejected(|p| p.warmup_seconds = 86_400);
        assert!(with(|p| p.warmup_seconds = 86_399).is_ok());
    }

    #[test]
    fn lookback_may_hold_at_most_256_buckets() {
        let ok = with(|p| {
            p.bucket_duration_seconds = 600;
            p.lookback_seconds = 256 * 600;
        });
        assert!(ok.is_ok(), "{ok:?}");
        let err = rejected(|p| {
            p.bucket_duration_seconds = 600;
            p.lookback_seconds = 256 * 600 + 1;
        });
        assert!(err.contains("256"), "{err}");
        rejected(|p| {
            p.bucket_duration_seconds = 600;
            p.lookback_seconds = 257 * 600;
        });
    }

    #[test]
    fn samples_per_bucket_must_be_at_least_two() {
        rejected(|p| p.minimum_samples_per_bucket = 1);
        rejected(|p| p.minimum_samples_per_bucket = -3);
        assert!(with(|p| p.minimum_samples_per_bucket = 2).is_ok());
    }

    #[test]
    fn growth_thresholds_must_be_positive_and_finite() {
        rejected(|p| p.minimum_growth_bytes = -1.0);
        rejected(|p| p.minimum_growth_bytes = f64::INFINITY);
        rejected(|p| p.minimum_growth_bytes = f64::NAN);
        rejected(|p| p.minimum_relative_growth = -0.1);
        rejected(|p| p.minimum_relative_growth = f64::NAN);
    }

    #[test]
    fn trend_consistency_must_be_above_half_and_at_most_one() {
        rejected(|p| p.minimum_trend_consistency = 0.5);
        rejected(|p| p.minimum_trend_consistency = 1.0000001);
        rejected(|p| p.minimum_trend_consistency = f64::NAN);
        rejected(|p| p.minimum_trend_consistency = -0.9);
        assert!(with(|p| p.minimum_trend_consistency = 0.5000001).is_ok());
        assert!(with(|p| p.minimum_trend_consistency = 1.0).is_ok());
    }
}
