//! `GET /v1/workloads/summary`: what the workload list's filter matches, in totals
//! (counts, data quality, notices, savings, extra spend and net), for everything or
//! grouped by cluster, namespace, team or a label. The overview's counts are one call.

use axum::extract::State;
use axum::Json;
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::access::Access;
use super::error::ApiError;
use super::query::{bad, Query};
use super::state::AppState;
use super::workload_query::{filter, WorkloadOrder, WorkloadPaging, WorkloadQuery};

use crate::runs::summary::HOURS_PER_MONTH;
use crate::store::{GroupBy, WorkloadTotals, COUNTED_NOTICES};

/// The groupings, as documented.
#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum GroupByParam {
    None,
    Cluster,
    Namespace,
    Team,
    Label,
}

impl GroupByParam {
    fn as_str(self) -> &'static str {
        match self {
            GroupByParam::None => "none",
            GroupByParam::Cluster => "cluster",
            GroupByParam::Namespace => "namespace",
            GroupByParam::Team => "team",
            GroupByParam::Label => "label",
        }
    }
}

/// How the totals are grouped (`label` names the label, with `by=label` only).
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Grouping {
    by: Option<GroupByParam>,
    label: Option<String>,
}

fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

/// Workloads by data quality of their latest recommendation (`none`: never analysed).
#[derive(Debug, Serialize, ToSchema)]
pub struct QualityCounts {
    pub available: i64,
    pub partial: i64,
    pub unavailable: i64,
    pub none: i64,
}

/// One group's totals as the API shows them; the group's key (`cluster`, `namespace`,
/// `label` or `team`) sits beside the counts.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TotalsView {
    #[serde(flatten)]
    pub key: BTreeMap<&'static str, Option<String>>,
    pub workloads: i64,
    pub with_changes: i64,
    pub data_quality: QualityCounts,
    pub stale: i64,
    pub risk_reductions: i64,
    pub notices: BTreeMap<&'static str, i64>,
    pub monthly_savings: f64,
    pub monthly_extra_spend: f64,
    /// Extra spend − savings: negative is a saving.
    pub monthly_net: f64,
    pub workloads_without_estimate: i64,
    /// Monthly savings kerf's live changes realized (requests in force against those
    /// before kerf's first change, rollbacks taken back), by when the change was
    /// applied. Not in the savings above: those are what is left to save.
    pub realized: RealizedView,
}

/// Realized monthly savings (`runs::realized`).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RealizedView {
    /// Of changes applied in the last 7 days.
    pub this_week: f64,
    /// In the last 30 days.
    pub this_month: f64,
    /// All live changes.
    pub since_install: f64,
    /// Workloads with a live change.
    pub workloads: i64,
}

impl From<&WorkloadTotals> for TotalsView {
    fn from(t: &WorkloadTotals) -> Self {
        TotalsView {
            key: t.key.iter().cloned().collect(),
            workloads: t.workloads,
            with_changes: t.with_changes,
            data_quality: QualityCounts {
                available: t.available,
                partial: t.partial,
                unavailable: t.unavailable,
                none: t.without_recommendation,
            },
            stale: t.stale,
            risk_reductions: t.risky,
            notices: COUNTED_NOTICES.into_iter().zip(t.notices).collect(),
            monthly_savings: round2(t.savings),
            monthly_extra_spend: round2(t.extra_spend),
            monthly_net: round2(t.extra_spend - t.savings),
            workloads_without_estimate: t.without_estimate,
            realized: RealizedView {
                this_week: round2(t.realized[0]),
                this_month: round2(t.realized[1]),
                since_install: round2(t.realized[2]),
                workloads: t.changed,
            },
        }
    }
}

/// `GET /v1/workloads/summary`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SummaryView {
    pub by: String,
    pub currency: String,
    /// What the money is computed from: the requests.
    pub basis: &'static str,
    pub hours_per_month: f64,
    pub total: TotalsView,
    pub groups: Vec<TotalsView>,
}

#[utoipa::path(
    get,
    path = "/v1/workloads/summary",
    summary = "Totals of what the workload filter matches: counts, data quality, notices, savings, extra spend and net.",
    description = "For everything (total) and grouped (groups) by cluster, namespace, team or the value of a label. A workload in several teams' namespaces counts in each team; those in none form the group whose team is null. Callers with only team roles see totals of their teams' namespaces.",
    params(
        WorkloadQuery,
        ("by" = inline(Option<GroupByParam>), Query, description = "Default none."),
        ("label" = Option<String>, Query, max_length = 317, description = "The label to group by (with by=label, and only then)."),
    ),
    responses(
        (status = 200, description = "The totals.", body = SummaryView),
    )
)]
pub async fn get_summary(
    State(state): State<AppState>,
    access: Access,
    Query((q, grouping)): Query<(WorkloadQuery, Grouping)>,
) -> Result<Json<SummaryView>, ApiError> {
    let f = filter(
        q,
        WorkloadOrder::default(),
        WorkloadPaging::default(),
        &access,
    )?;
    let by = grouping.by.unwrap_or(GroupByParam::None);
    let group = match (by, grouping.label) {
        (GroupByParam::None, None) => GroupBy::Nothing,
        (GroupByParam::Cluster, None) => GroupBy::Cluster,
        (GroupByParam::Namespace, None) => GroupBy::Namespace,
        (GroupByParam::Team, None) => GroupBy::Team(
            state
                .store
                .reading(|r| r.list_teams())
                .await?
                .into_iter()
                .map(|t| (t.name, t.namespaces))
                .collect(),
        ),
        (GroupByParam::Label, Some(key)) if !key.is_empty() && key.len() <= 317 => {
            GroupBy::Label(key)
        }
        (GroupByParam::Label, _) => {
            return Err(bad("label", "names the label to group by (by=label)"))
        }
        (_, Some(_)) => return Err(bad("label", "goes with by=label only")),
    };
    let pricing = state.runs.pricing().await.map_err(ApiError::internal)?;
    let now = state.now();
    let (total, groups) = state
        .store
        .reading(move |r| {
            let total = r.workload_totals(&f, &GroupBy::Nothing, now)?;
            let groups = match group {
                GroupBy::Nothing => Vec::new(),
                g => r.workload_totals(&f, &g, now)?,
            };
            Ok((total, groups))
        })
        .await?;
    let empty = WorkloadTotals::default();
    Ok(Json(SummaryView {
        by: by.as_str().to_string(),
        currency: pricing.currency,
        basis: "requests",
        hours_per_month: HOURS_PER_MONTH,
        total: total.first().unwrap_or(&empty).into(),
        groups: groups.iter().map(TotalsView::from).collect(),
    }))
}
