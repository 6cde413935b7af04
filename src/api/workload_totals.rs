//! `GET /v1/workloads/summary`: what the workload list's filter matches, in totals
//! (counts, data quality, notices, savings, extra spend and net), for everything or
//! grouped by cluster, namespace, team or a label. The overview's counts are one call.

use axum::extract::{RawQuery, State};
use axum::Json;
use std::collections::BTreeMap;

use serde::Serialize;
use utoipa::ToSchema;

use super::access::Access;
use super::error::ApiError;
use super::query::{self, bad};
use super::workload_query::{finish, take_filter, Paging, WorkloadQuery};
use super::AppState;

/// The groupings, as documented.
#[allow(dead_code)] // read only by the OpenAPI document
#[derive(ToSchema)]
#[serde(rename_all = "lowercase")]
enum GroupByParam {
    None,
    Cluster,
    Namespace,
    Team,
    Label,
}
use crate::runs::summary::HOURS_PER_MONTH;
use crate::store::{GroupBy, WorkloadFilter, WorkloadTotals, COUNTED_NOTICES};

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
    RawQuery(raw): RawQuery,
) -> Result<Json<SummaryView>, ApiError> {
    let mut f = WorkloadFilter::default();
    let (mut by, mut label) = (String::from("none"), None::<String>);
    for (key, value) in query::pairs(raw.as_deref())? {
        match key.as_str() {
            "by" => by = value,
            "label" => label = Some(value),
            _ => {
                if !take_filter(&mut f, &key, value)? {
                    return Err(bad(&key, "unknown parameter"));
                }
            }
        }
    }
    finish(&mut f, Paging::default(), &access)?;
    let group = match (by.as_str(), label) {
        ("none", None) => GroupBy::Nothing,
        ("cluster", None) => GroupBy::Cluster,
        ("namespace", None) => GroupBy::Namespace,
        ("team", None) => GroupBy::Team(
            state
                .store
                .list_teams()
                .await?
                .into_iter()
                .map(|t| (t.name, t.namespaces))
                .collect(),
        ),
        ("label", Some(key)) if !key.is_empty() && key.len() <= 317 => GroupBy::Label(key),
        ("label", _) => return Err(bad("label", "names the label to group by (by=label)")),
        (_, Some(_)) => return Err(bad("label", "goes with by=label only")),
        _ => return Err(bad("by", "must be none, cluster, namespace, team or label")),
    };
    let pricing = state.runs.pricing().await.map_err(ApiError::internal)?;
    let total = state
        .store
        .workload_totals(f.clone(), GroupBy::Nothing)
        .await?;
    let groups = match group {
        GroupBy::Nothing => Vec::new(),
        g => state.store.workload_totals(f, g).await?,
    };
    let empty = WorkloadTotals::default();
    Ok(Json(SummaryView {
        by,
        currency: pricing.currency,
        basis: "requests",
        hours_per_month: HOURS_PER_MONTH,
        total: total.first().unwrap_or(&empty).into(),
        groups: groups.iter().map(TotalsView::from).collect(),
    }))
}
