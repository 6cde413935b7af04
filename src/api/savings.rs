//! `GET /v1/savings`: the estimated monthly savings and extra spend of the latest
//! recommendations, per cluster and fleet-wide, at the pricing settings' prices.

use axum::extract::State;
use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;

use super::error::ApiError;
use super::state::AppState;
use crate::runs::summary::HOURS_PER_MONTH;

/// `GET /v1/savings`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Savings {
    /// The pricing settings' currency.
    pub currency: String,
    /// What the estimate prices: `requests`.
    pub basis: &'static str,
    pub hours_per_month: f64,
    pub fleet: SavingsTotals,
    pub clusters: Vec<ClusterSavingsView>,
}

/// Monthly amounts, rounded to cents.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SavingsTotals {
    pub monthly_savings: f64,
    pub monthly_extra_spend: f64,
    /// Extra spend minus savings: negative saves money.
    pub monthly_net: f64,
    pub workloads: i64,
    /// Workloads whose recommendation has no cost estimate.
    pub workloads_without_estimate: i64,
}

/// One cluster's totals.
#[derive(Debug, Serialize, ToSchema)]
pub struct ClusterSavingsView {
    pub cluster: String,
    #[serde(flatten)]
    pub totals: SavingsTotals,
}

fn totals(savings: f64, extra: f64, workloads: i64, unknown: i64) -> SavingsTotals {
    SavingsTotals {
        monthly_savings: round2(savings),
        monthly_extra_spend: round2(extra),
        monthly_net: round2(extra - savings),
        workloads,
        workloads_without_estimate: unknown,
    }
}

fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

#[utoipa::path(
    get,
    path = "/v1/savings",
    summary = "Estimated monthly savings and extra spend of the latest recommendations, fleet-wide and per cluster.",
    responses(
        (status = 200, description = "{currency, basis, hoursPerMonth, fleet:{monthlySavings, monthlyExtraSpend, monthlyNet, workloads, workloadsWithoutEstimate}, clusters:[…]}", body = Savings),
    )
)]
pub async fn get_savings(State(state): State<AppState>) -> Result<Json<Savings>, ApiError> {
    let pricing = state.runs.pricing().await.map_err(ApiError::internal)?;
    let per_cluster = state.store.reading(|r| r.savings_by_cluster()).await?;
    let (mut s, mut x, mut n, mut u) = (0.0, 0.0, 0, 0);
    let clusters = per_cluster
        .iter()
        .map(|c| {
            s += c.savings;
            x += c.extra_spend;
            n += c.workloads;
            u += c.unknown;
            ClusterSavingsView {
                cluster: c.cluster.clone(),
                totals: totals(c.savings, c.extra_spend, c.workloads, c.unknown),
            }
        })
        .collect();
    Ok(Json(Savings {
        currency: pricing.currency,
        basis: "requests",
        hours_per_month: HOURS_PER_MONTH,
        fleet: totals(s, x, n, u),
        clusters,
    }))
}
