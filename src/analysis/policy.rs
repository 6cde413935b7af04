//! The effective policy (contract §3): defaults, normalization, validation and its
//! identity `policyVersion`. Field order is the hash order; never reorder fields.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::error::Error;
use super::json;
use super::leak::MemoryLeakPolicy;

/// The whole analysis policy. Zero fields select defaults.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Policy {
    /// CPU sizing rules.
    pub cpu: CpuPolicy,
    /// Memory sizing rules (and optional leak detection).
    pub memory: MemoryPolicy,
    /// Evidence guards shared by both resources.
    pub evidence: EvidencePolicy,
}

/// CPU sizing rules.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct CpuPolicy {
    /// `percentile` or `max`.
    pub strategy: String,
    /// Nearest-rank percentile in (0,100); 0 (omitted) under `max`.
    #[serde(skip_serializing_if = "is_zero")]
    pub percentile: f64,
    /// Multiplier from usage to request.
    pub headroom_coefficient: f64,
    /// Limit = request × this ratio.
    pub limits_to_requests_ratio: f64,
    /// Clamp and material-change thresholds.
    pub bounds: Bounds,
    /// When true, limits are never changed.
    pub requests_only: bool,
}

/// Memory sizing rules.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct MemoryPolicy {
    /// Only `max`.
    pub strategy: String,
    /// Multiplier from peak usage to request.
    pub headroom_coefficient: f64,
    /// Multiplier applied to the limit in force at an OOM kill.
    pub oom_killed_coefficient: f64,
    /// Limit = request × this ratio.
    pub limits_to_requests_ratio: f64,
    /// Clamp and material-change thresholds.
    pub bounds: Bounds,
    /// When true, limits are never changed.
    pub requests_only: bool,
    /// Potential memory-leak detection; `None` disables it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leak_detection: Option<MemoryLeakPolicy>,
}

/// Suggestion clamp and material-change thresholds, in the resource's native unit.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Bounds {
    /// Smallest suggested request.
    pub minimum: f64,
    /// Largest suggested request or limit.
    pub maximum: f64,
    /// A change must be at least this large…
    pub minimum_absolute_change: f64,
    /// …and at least this fraction of the current value.
    pub minimum_relative_change: f64,
}

/// Guards on the usage evidence.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct EvidencePolicy {
    /// Observed history a release needs before it is sized.
    pub minimum_history_seconds: i64,
    /// Distinct observation times a release needs.
    pub minimum_samples: i64,
    /// Fraction of the release segment that observations must cover.
    pub minimum_coverage: f64,
    /// Maximum age of the latest observation and of current signals.
    pub freshness_seconds: i64,
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

/// The defaults of contract §3, already normalized.
pub fn default_policy() -> Policy {
    normalize_policy(&Policy::default()).expect("the zero policy normalizes to the defaults")
}

/// Fills defaults into zero fields, canonicalizes strategies and validates. Never mutates
/// `policy`.
pub fn normalize_policy(policy: &Policy) -> Result<Policy, Error> {
    Ok(Policy {
        cpu: normalize_cpu(&policy.cpu)?,
        memory: normalize_memory(&policy.memory)?,
        evidence: normalize_evidence(&policy.evidence)?,
    })
}

/// `"v2:" + hex(sha256(compact Go JSON of the normalized policy))`.
pub fn policy_version(policy: &Policy) -> Result<String, Error> {
    version_of_normalized(&normalize_policy(policy)?)
}

/// The identity of an already-normalized policy.
pub(crate) fn version_of_normalized(normalized: &Policy) -> Result<String, Error> {
    let bytes = json::to_vec_compact(normalized)?;
    Ok(format!("v2:{}", hex::encode(Sha256::digest(&bytes))))
}

fn or_default(value: f64, default: f64) -> f64 {
    if value == 0.0 {
        default
    } else {
        value
    }
}

fn strategy(raw: &str, default: &str) -> String {
    let s = raw.trim().to_lowercase();
    if s.is_empty() {
        default.to_string()
    } else {
        s
    }
}

fn normalize_cpu(cpu: &CpuPolicy) -> Result<CpuPolicy, Error> {
    let strategy = strategy(&cpu.strategy, "percentile");
    let percentile = match strategy.as_str() {
        "max" => 0.0,
        "percentile" => {
            let p = or_default(cpu.percentile, 95.0);
            if !(p > 0.0 && p < 100.0) {
                return Err(Error::policy(
                    "cpu.percentile must be in (0,100); use max for p100",
                ));
            }
            p
        }
        other => {
            return Err(Error::policy(format!(
                "unsupported cpu.strategy {}",
                super::error::go_quote(other)
            )))
        }
    };
    let headroom = or_default(cpu.headroom_coefficient, 3.0);
    let ratio = or_default(cpu.limits_to_requests_ratio, 5.0);
    check_headroom_and_ratio("cpu", headroom, ratio)?;
    Ok(CpuPolicy {
        strategy,
        percentile,
        headroom_coefficient: headroom,
        limits_to_requests_ratio: ratio,
        bounds: normalize_bounds("cpu.bounds", &cpu.bounds, [20.0, 64000.0, 50.0, 0.1])?,
        requests_only: cpu.requests_only,
    })
}

fn normalize_memory(memory: &MemoryPolicy) -> Result<MemoryPolicy, Error> {
    let strategy = strategy(&memory.strategy, "max");
    if strategy != "max" {
        return Err(Error::policy(format!(
            "unsupported memory.strategy {}",
            super::error::go_quote(&strategy)
        )));
    }
    let headroom = or_default(memory.headroom_coefficient, 1.2);
    let ratio = or_default(memory.limits_to_requests_ratio, 3.0);
    check_headroom_and_ratio("memory", headroom, ratio)?;
    let oom = or_default(memory.oom_killed_coefficient, 1.5);
    if !(oom.is_finite() && oom >= 1.0) {
        return Err(Error::policy(
            "memory.oomKilledCoefficient must be finite and at least one",
        ));
    }
    let defaults = [10485760.0, 1099511627776.0, 8388608.0, 0.1];
    let leak_detection = match &memory.leak_detection {
        None => None,
        Some(leak) => Some(leak.normalized().map_err(Error::policy)?),
    };
    Ok(MemoryPolicy {
        strategy,
        headroom_coefficient: headroom,
        oom_killed_coefficient: oom,
        limits_to_requests_ratio: ratio,
        bounds: normalize_bounds("memory.bounds", &memory.bounds, defaults)?,
        requests_only: memory.requests_only,
        leak_detection,
    })
}

fn check_headroom_and_ratio(resource: &str, headroom: f64, ratio: f64) -> Result<(), Error> {
    if headroom.is_finite() && headroom > 0.0 && ratio.is_finite() && ratio >= 1.0 {
        Ok(())
    } else {
        Err(Error::policy(format!(
            "{resource}: headroom must be positive and limit ratio must be at least one"
        )))
    }
}

fn normalize_bounds(name: &str, b: &Bounds, defaults: [f64; 4]) -> Result<Bounds, Error> {
    let out = Bounds {
        minimum: or_default(b.minimum, defaults[0]),
        maximum: or_default(b.maximum, defaults[1]),
        minimum_absolute_change: or_default(b.minimum_absolute_change, defaults[2]),
        minimum_relative_change: or_default(b.minimum_relative_change, defaults[3]),
    };
    let values = [
        out.minimum,
        out.maximum,
        out.minimum_absolute_change,
        out.minimum_relative_change,
    ];
    if values.iter().all(|v| v.is_finite() && *v > 0.0) && out.maximum >= out.minimum {
        Ok(out)
    } else {
        Err(Error::policy(format!(
            "{name}: bounds must be finite, positive, and maximum >= minimum"
        )))
    }
}

fn normalize_evidence(e: &EvidencePolicy) -> Result<EvidencePolicy, Error> {
    let int_default = |v: i64, d: i64| if v == 0 { d } else { v };
    let out = EvidencePolicy {
        minimum_history_seconds: int_default(e.minimum_history_seconds, 3600),
        minimum_samples: int_default(e.minimum_samples, 30),
        minimum_coverage: or_default(e.minimum_coverage, 0.9),
        freshness_seconds: int_default(e.freshness_seconds, 300),
    };
    let problem = if out.minimum_history_seconds < 1 {
        Some("minimumHistorySeconds must be at least 1")
    } else if out.minimum_samples < 2 {
        Some("minimumSamples must be at least 2")
    } else if !(out.minimum_coverage > 0.0 && out.minimum_coverage <= 1.0) {
        Some("minimumCoverage must be in (0,1]")
    } else if out.freshness_seconds < 1 {
        Some("freshnessSeconds must be at least 1")
    } else {
        None
    };
    match problem {
        Some(detail) => Err(Error::policy(format!("invalid evidence policy: {detail}"))),
        None => Ok(out),
    }
}
