//! The recommendation summary: the small, typed digest of one workload's engine results
//! that lists, the workload page and the agent's recommendation feed serve (values per
//! container × resource × setting, confidence, data quality and coverage). Runs build
//! it (`runs::summary`) and store it as JSON beside the full analysis.

use serde::{Deserialize, Serialize};

use crate::workload::ContainerRole;

/// The data quality of evidence, worst first when summarized.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, utoipa::ToSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum QualityStatus {
    Available,
    Partial,
    Unavailable,
}

impl QualityStatus {
    /// The contract spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            QualityStatus::Available => "available",
            QualityStatus::Partial => "partial",
            QualityStatus::Unavailable => "unavailable",
        }
    }
}

/// One workload's latest results in brief.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecommendationSummary {
    /// By container name.
    pub containers: Vec<ContainerSummary>,
    /// Lowest confidence of any suggested value (0..=95); `null` without suggestions.
    pub confidence: Option<i64>,
    /// Lowest covered fraction (0..=1) of any result; `null` without results.
    pub coverage: Option<f64>,
    /// The worst data quality of any result.
    pub data_quality: QualityStatus,
    /// Every notice of any result, sorted, de-duplicated.
    pub notices: Vec<String>,
    /// The shortest span of usable usage history behind any result, in seconds (the
    /// agent's `LearningPeriod` guardrail compares it). Absent on summaries stored
    /// before kerf recorded it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub covered_seconds: Option<i64>,
    /// The HorizontalPodAutoscaler scaling the workload, when kube-state-metrics shows
    /// one, with the utilization target that keeps today's scaling point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hpa: Option<HpaSummary>,
    /// CPU throttling per container over the recent window, when the datasource
    /// measured it (the agent's `Throttled` guardrail reads it from the feed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub throttling: Vec<ThrottlingEvidence>,
}

/// A workload's HPA and how a CPU request change moves it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct HpaSummary {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_replicas: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_replicas: Option<u32>,
    /// Its target average CPU utilization (percent of the pod's CPU request), when it
    /// scales on one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_target_utilization: Option<f64>,
    /// The target that keeps today's scaling point (the same absolute CPU per pod)
    /// under the recommended requests: target × Σ current requests / Σ recommended,
    /// rounded. `null` when a container's CPU request is not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coordinated_cpu_target: Option<f64>,
    /// Other metrics it scales on (`memory/utilization`, `<name>/average`, …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_metrics: Vec<String>,
}

/// One container's CFS throttling ratio (throttled / all periods) over `window`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThrottlingEvidence {
    pub container: String,
    /// 0..=1.
    pub ratio: f64,
    /// How far back the ratio looks, e.g. `1h`.
    pub window: String,
}

/// One container's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct ContainerSummary {
    pub name: String,
    /// `sidecar` (a native sidecar) or `init` (an init container); absent for an app
    /// container.
    #[serde(default, skip_serializing_if = "ContainerRole::is_app")]
    pub role: ContainerRole,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<ResourceSummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<ResourceSummary>,
}

/// One resource of one container (CPU in millicores, memory in bytes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceSummary {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<SettingValues>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<SettingValues>,
    /// The hub's reading of the engine's status: `partial` only when a reason lowers
    /// quality; reasons that only inform (`runs::summary::INFORMING_REASONS`) leave it
    /// `available`.
    pub data_quality: QualityStatus,
    /// The engine's data-quality reasons that lower quality.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub quality_reasons: Vec<String>,
    /// The engine's data-quality reasons that only inform.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub quality_notes: Vec<String>,
    /// Covered fraction, 0..=1.
    pub coverage: f64,
    /// Why nothing is suggested (`resource-analysis-output/v3` reason), when so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_action_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notices: Vec<String>,
}

/// One suggested setting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SettingValues {
    /// The value in force; `null` when the setting is unset today.
    pub current: Option<f64>,
    pub suggested: f64,
    /// 0..=95.
    pub confidence: i64,
}
