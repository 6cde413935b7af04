//! `GET /v1/clusters/{cluster}/recommendations`: the latest recommendation of every
//! workload of the cluster, with its id and values, its confidence and data coverage,
//! the settings identity it was made under beside the workload's current effective mode
//! and policy identity (a mismatch is `RecommendationStale`, served as
//! `recommendationStale` so no client recomputes the rule), and its pending approval,
//! if any (applied as `ApprovedOnce` with `details.approvalId`), the hub's flags about
//! the workload (`jvm-fixed-heap`) and its throttling evidence, when collected. Fields
//! added after the first release default when absent, so an agent reads an older hub.

use serde::{Deserialize, Serialize};

pub use super::summary::ThrottlingEvidence;
use super::summary::{ContainerSummary, QualityStatus};
use crate::policy::EffectiveMode;

/// One page of the feed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecommendationFeed {
    pub cluster: String,
    /// The identity of the recommender settings now in force.
    pub settings_identity: String,
    /// The engine's identity of the default analysis policy now in force.
    pub policy_version: String,
    pub items: Vec<RecommendationItem>,
    /// Cursor of the next page (`?next=`), `null` on the last.
    pub next: Option<String>,
    /// The feed's version: send it back as `since` to get only what changes after it
    /// (docs/contracts/agent.md, "Feeds by change"). Absent from hubs before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Set when this answer holds only what changed since that version (the one the
    /// agent sent); absent on a whole feed, which replaces what the agent holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// Workload ids whose entry left the feed since `since` (on a change answer only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deleted: Vec<String>,
}

/// A workload as the feed names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct FeedWorkload {
    pub namespace: String,
    pub kind: String,
    pub name: String,
    /// The Kubernetes UID last seen (empty when the datasource did not report one).
    pub uid: String,
}

/// How much usage history stands behind the recommendation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DataCoverage {
    /// The shortest usable history behind any value, in seconds (`null` on
    /// recommendations made before kerf recorded it); compare with
    /// `guardrails.learningPeriod`. Each sample stands for the cadence before it, with
    /// one cadence of tolerance at the window's edges, so a gapless window covers all
    /// of it (a week of 60 s scrapes covers 604800, not 604740).
    pub covered_seconds: Option<i64>,
    /// The same as a duration (`8d 2h`), `null` when unknown: `LearningPeriod` holds
    /// while it is below `guardrails.learningPeriod`.
    #[serde(default)]
    pub covered: Option<String>,
    /// The lowest covered fraction (0..=1) of any result.
    pub fraction: Option<f64>,
}

/// An operator's approval of this recommendation, not yet applied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PendingApproval {
    /// Send it back as `details.approvalId` of the `applied ApprovedOnce` event.
    pub id: String,
    /// The approver's name; send it back as `details.approvedBy`.
    pub approved_by: String,
    pub approved_at: String,
}

/// One workload's latest recommendation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecommendationItem {
    pub recommendation_id: String,
    pub workload_id: String,
    pub workload: FeedWorkload,
    pub created_at: String,
    pub run_id: String,
    /// The analysis policy version the values were computed with.
    pub policy_version: String,
    /// The effective-policy identity the recommendation was made under.
    pub settings_identity: String,
    /// The workload's effective-policy identity now.
    pub policy_identity: String,
    /// `settingsIdentity != policyIdentity`: skip as `RecommendationStale`.
    pub recommendation_stale: bool,
    /// The workload's effective mode now.
    pub mode: EffectiveMode,
    pub approval: Option<PendingApproval>,
    /// The datasource stopped reporting the workload (it keeps its last values).
    pub stale: bool,
    /// Some value differs from what is in force.
    pub has_changes: bool,
    /// Lowest confidence of any suggested value, 0..=95.
    pub confidence: Option<i64>,
    /// Lowest covered fraction, 0..=1 (also `dataCoverage.fraction`).
    pub coverage: Option<f64>,
    pub data_coverage: DataCoverage,
    pub data_quality: QualityStatus,
    pub notices: Vec<String>,
    pub containers: Vec<ContainerSummary>,
    pub estimated_monthly_cost_delta: Option<f64>,
    /// What the hub knows about the workload that the agent may not see: `jvm-fixed-heap`
    /// (its JVM heap is fixed, so memory is audit-only, `JVMFixedHeap`).
    #[serde(default)]
    pub flags: Vec<String>,
    /// CPU throttling the hub's datasource measured per container over the recent
    /// window (the `Throttled` guardrail reads it beside the agent's own readings).
    #[serde(default)]
    pub throttling: Vec<ThrottlingEvidence>,
}
