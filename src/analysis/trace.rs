//! The decision trace (version "1"): which series supplied the value, which previous
//! rollouts were tried, and every calculation and guard per setting.

use std::collections::BTreeMap;

use serde::Serialize;

use super::output::Setting;
use super::reason::Reason;

/// Trace format version.
pub const TRACE_VERSION: &str = "1";

/// `decisionTrace` of one resource result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DecisionTrace {
    /// `"1"`.
    pub version: String,
    /// Where the sizing value came from.
    pub source: TraceSource,
    /// Previous rollouts tried, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fallbacks: Vec<TraceFallback>,
    /// Exactly two: requests, then limits.
    pub settings: Vec<SettingTrace>,
}

/// The winning series or event.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceSource {
    /// The release whose evidence was used.
    pub release: String,
    /// The winning series.
    #[serde(rename = "seriesID", skip_serializing_if = "String::is_empty")]
    pub series_id: String,
    /// Its pod.
    #[serde(rename = "podUID", skip_serializing_if = "String::is_empty")]
    pub pod_uid: String,
    /// Time of the sample (or event) that carried the value.
    #[serde(skip_serializing_if = "is_zero_i64")]
    pub timestamp: i64,
    /// Aggregation method.
    pub method: String,
    /// CPU percentile, when used.
    #[serde(skip_serializing_if = "is_zero_f64")]
    pub percentile: f64,
}

/// One previous-rollout attempt.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceFallback {
    /// The historical release.
    pub release: String,
    /// Whether it supplied the usage.
    pub selected: bool,
    /// Why it was rejected.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<Reason>,
}

/// What happened to one setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Disposition {
    /// A recommendation was made.
    Recommended,
    /// The current value stays.
    Retained,
    /// Changes to this setting are disabled by policy.
    Disabled,
    /// Not enough evidence to decide.
    Unavailable,
}

/// Calculations and guards of one setting.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SettingTrace {
    /// `requests` or `limits`.
    pub setting: Setting,
    /// The outcome.
    pub disposition: Disposition,
    /// Why it was not recommended.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<Reason>,
    /// Executed calculations and guards, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<Step>,
}

/// One calculation or guard.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    /// The rule name (contract strings).
    pub rule: &'static str,
    /// Native-unit values, keys sorted.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub values: BTreeMap<&'static str, f64>,
    /// Only for guards.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub passed: Option<bool>,
}

impl Step {
    /// A calculation step.
    pub(crate) fn calc(rule: &'static str, values: &[(&'static str, f64)]) -> Step {
        Step {
            rule,
            values: values.iter().copied().collect(),
            passed: None,
        }
    }

    /// A guard step.
    pub(crate) fn guard(rule: &'static str, values: &[(&'static str, f64)], passed: bool) -> Step {
        Step {
            rule,
            values: values.iter().copied().collect(),
            passed: Some(passed),
        }
    }
}

impl SettingTrace {
    /// A setting with no steps and the given outcome.
    pub(crate) fn bare(setting: Setting, disposition: Disposition, reasons: Vec<Reason>) -> Self {
        SettingTrace {
            setting,
            disposition,
            reasons,
            steps: Vec::new(),
        }
    }
}

/// Rule names, exactly as the contract spells them (`×` is U+00D7).
pub(crate) mod rule {
    pub const USAGE_HEADROOM: &str = "usage × headroom";
    pub const OOM_WITHOUT_USAGE: &str = "OOM sizing without usage history";
    pub const OOM_FLOOR: &str = "OOM floor";
    pub const REQUEST_BOUNDS: &str = "request bounds";
    pub const LIMIT_RATIO: &str = "request × limit ratio";
    pub const LIMIT_BOUNDS: &str = "limit bounds";
    pub const LIMIT_COVERS_REQUEST: &str = "limit covers retained request";
    pub const SAFE_REDUCTION: &str = "safe reduction or introduction of limit";
    pub const REQUEST_FITS_LIMIT: &str = "request fits retained or changing limit";
    pub const INITIALIZE_UNSET: &str = "initialize unset setting";
    pub const MATERIAL_CHANGE: &str = "material change";
}

/// Aggregation method names.
pub(crate) mod method {
    pub const MAXIMUM: &str = "maximum";
    pub const PERCENTILE: &str = "maximum of per-series nearest-rank percentiles";
    pub const OOM_KILL: &str = "OOM kill";
}

fn is_zero_i64(v: &i64) -> bool {
    *v == 0
}

fn is_zero_f64(v: &f64) -> bool {
    *v == 0.0
}
