//! A workload's live change as the API shows it (`store::live_changes`, folded from
//! the agent's events by `fleet::applied`): what kerf applied, when, how and on whose
//! word, what of it is live and what it saves.

use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::error::ApiError;
use super::query::stored_json;
use crate::store::live_changes::LiveChange;
use crate::timestamp::format_ms;

/// kerf's change on a workload that is still live.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AppliedView {
    /// When the last change was applied in the cluster.
    pub at: String,
    /// `policy` (the agent applied it as the workload's policy allows) or `approval`
    /// (a person approved it once).
    pub by: &'static str,
    /// `RecommendationApplied` or `ApprovedOnce`.
    pub reason: String,
    /// Who approved it (`approval` only).
    pub approved_by: Option<String>,
    /// `in-place`, `rollout` or `deferred`.
    pub strategy: String,
    pub recommendation_id: Option<String>,
    /// The `applied` event in the audit log.
    pub event_id: String,
    /// The last change's containers, `[{name, from, to}]` as the agent sent them.
    pub containers: Value,
    /// Per container and resource, the request before kerf's first change (`baseline`)
    /// and the one in force (`inForce`): CPU millicores, memory bytes; rolled-back
    /// requests are not listed.
    pub chain: Value,
    /// What the live change saves a month (negative: what raising requests costs).
    pub realized_monthly: f64,
    /// Applied after the latest recommendation was made: until the next run reads the
    /// cluster again, that recommendation's "current" values are the ones before.
    pub after_recommendation: bool,
    /// When the last event about it (an applied or rolled-back change) happened.
    pub updated_at: String,
}

/// The API form of `c`; `recommended_at` is when the workload's latest recommendation
/// was made.
pub fn applied_view(c: &LiveChange, recommended_at: Option<i64>) -> Result<AppliedView, ApiError> {
    Ok(AppliedView {
        at: format_ms(c.applied_at),
        by: if c.reason == "ApprovedOnce" {
            "approval"
        } else {
            "policy"
        },
        reason: c.reason.clone(),
        approved_by: c.approved_by.clone(),
        strategy: c.strategy.clone(),
        recommendation_id: c.recommendation_id.clone(),
        event_id: c.event_id.clone(),
        containers: stored_json(&c.containers)?,
        chain: stored_json(&c.chain)?,
        realized_monthly: (c.realized_monthly * 100.0).round() / 100.0,
        after_recommendation: recommended_at.is_none_or(|at| at < c.applied_at),
        updated_at: format_ms(c.updated_at),
    })
}
