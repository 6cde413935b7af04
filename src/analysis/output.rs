//! `resource-analysis-output/v3` (contract §4). Field order is the JSON key order.

use serde::Serialize;

use super::input::{CurrentIdentity, Inventory, Signal, Target};
use super::leak::MemoryLeakAnalysis;
use super::policy::Policy;
use super::reason::Reason;
use super::series::OomKill;
use super::trace::DecisionTrace;

/// The output schema produced.
pub const OUTPUT_SCHEMA_VERSION: &str = "resource-analysis-output/v3";
/// The resource detector version (sizing rules).
pub const DETECTOR_VERSION: &str = "8";

/// The whole analysis result.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Output {
    /// `resource-analysis-output/v3`.
    pub schema_version: String,
    /// `"8"`.
    pub detector_version: String,
    /// Identity of the effective policy.
    pub policy_version: String,
    /// The normalized policy that was applied.
    pub effective_policy: Policy,
    /// Two per container (memory, then cpu), containers sorted by target key.
    pub results: Vec<ResourceAnalysis>,
}

/// Which resource a result is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Resource {
    /// Bytes.
    Memory,
    /// Millicores.
    Cpu,
}

impl Resource {
    /// The contract spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Resource::Memory => "memory",
            Resource::Cpu => "cpu",
        }
    }
}

/// Which setting a recommendation changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Setting {
    /// The request.
    Requests,
    /// The limit.
    Limits,
}

/// The result for one resource of one container.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceAnalysis {
    /// How the values were derived.
    pub decision_trace: DecisionTrace,
    /// The analyzed container.
    pub target: Target,
    /// `memory` or `cpu`.
    pub resource: Resource,
    /// Requests before limits; omitted when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub recommendations: Vec<Recommendation>,
    /// Measured evidence.
    pub evidence: ResourceEvidence,
    /// Quality of the usage evidence and every reason found.
    pub data_quality: DataQuality,
    /// Present exactly when there are no recommendations.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_action_reason: Option<Reason>,
    /// Informational findings, in contract order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notices: Vec<Reason>,
    /// Memory only: how an OOM floor entered the request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oom_adjustment: Option<OomAdjustment>,
    /// Memory only, when leak detection is enabled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_leak: Option<MemoryLeakAnalysis>,
    /// When a previous release supplied the usage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rollout_fallback: Option<RolloutFallback>,
}

/// One suggested setting.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Recommendation {
    /// `requests` or `limits`.
    pub setting: Setting,
    /// The value in force (a 0 placeholder when `currentUnset`).
    pub current_value: f64,
    /// The setting is known to be absent today.
    #[serde(skip_serializing_if = "is_false")]
    pub current_unset: bool,
    /// The suggestion, unrounded.
    pub suggested_value: f64,
    /// 0..=95.
    pub confidence: i64,
}

/// What the recommendation rests on.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceEvidence {
    /// The sizing value and the time of the sample that carried it.
    pub aggregated_usage: Signal,
    /// The request in force (canonicalized).
    pub current_request: Signal,
    /// The limit in force (canonicalized).
    pub current_limit: Signal,
    /// The identity after release-boundary inference.
    pub identity: CurrentIdentity,
    /// The inventory as supplied.
    pub inventory: Inventory,
    /// Memory only: selected OOM kills sorted by (timestamp, id).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub oom_kills: Vec<OomKill>,
}

/// Overall state of the evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum QualityStatus {
    /// No reasons.
    Available,
    /// Usable with reasons.
    Partial,
    /// Sizing blocked.
    Unavailable,
}

/// Measured usage evidence and every reason found.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DataQuality {
    /// `available`, `partial` or `unavailable`.
    pub status: QualityStatus,
    /// Earliest usable sample.
    pub observed_start: i64,
    /// Latest usable sample.
    pub observed_end: i64,
    /// Distinct samples summed over series.
    pub sample_count: i64,
    /// Distinct timestamps across series.
    pub observation_count: i64,
    /// Selected series with at least one usable sample.
    pub series_count: i64,
    /// Release cadence in seconds.
    pub cadence_seconds: f64,
    /// Covered fraction of the release segment, 0..=1.
    pub coverage: f64,
    /// (observedEnd − observedStart) in hours.
    pub observed_interval_hours: f64,
    /// De-duplicated, in detection order.
    pub reasons: Vec<Reason>,
}

impl DataQuality {
    /// Evidence of nothing.
    pub(crate) fn empty() -> DataQuality {
        DataQuality {
            status: QualityStatus::Unavailable,
            observed_start: 0,
            observed_end: 0,
            sample_count: 0,
            observation_count: 0,
            series_count: 0,
            cadence_seconds: 0.0,
            coverage: 0.0,
            observed_interval_hours: 0.0,
            reasons: Vec::new(),
        }
    }

    /// Appends a reason unless it is already listed.
    pub(crate) fn add(&mut self, reason: Reason) {
        if !self.reasons.contains(&reason) {
            self.reasons.push(reason);
        }
    }
}

/// The previous rollout that supplied the usage.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RolloutFallback {
    /// The historical release.
    pub release: String,
    /// Its activation boundary after inference.
    pub release_started_at: i64,
    /// Whether that boundary was inferred.
    pub release_start_inferred: bool,
    /// The historical evaluation time actually used.
    pub evaluation_time: i64,
    /// The current rollout's failed evidence (status forced to unavailable).
    pub current_data_quality: DataQuality,
}

/// How OOM kills raised the memory request.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OomAdjustment {
    /// Usage × headroom (0 when usage is blocked).
    pub baseline_request_bytes: f64,
    /// Maximum over events of sizing base × coefficient.
    pub oom_request_floor_bytes: f64,
    /// An event fell back to the usage baseline as its base.
    pub used_usage_fallback: bool,
    /// An event fell back to the current limit or request as its base.
    #[serde(skip_serializing_if = "is_false")]
    pub used_current_fallback: bool,
}

fn is_false(v: &bool) -> bool {
    !*v
}
