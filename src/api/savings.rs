//! `GET /v1/savings`: the estimated monthly savings and extra spend of the latest
//! recommendations, per cluster and fleet-wide, at the pricing settings' prices.

use axum::extract::State;
use axum::Json;
use serde_json::{json, Value};

use super::error::ApiError;
use super::AppState;
use crate::runs::summary::HOURS_PER_MONTH;

fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

#[utoipa::path(
    get,
    path = "/v1/savings"
)]
pub async fn get_savings(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    let pricing = state.runs.pricing().await.map_err(ApiError::internal)?;
    let per_cluster = state.store.savings_by_cluster().await?;
    let (mut s, mut x, mut n, mut u) = (0.0, 0.0, 0, 0);
    let clusters: Vec<Value> = per_cluster
        .iter()
        .map(|c| {
            s += c.savings;
            x += c.extra_spend;
            n += c.workloads;
            u += c.unknown;
            json!({
                "cluster": c.cluster,
                "monthlySavings": round2(c.savings),
                "monthlyExtraSpend": round2(c.extra_spend),
                "monthlyNet": round2(c.extra_spend - c.savings),
                "workloads": c.workloads,
                "workloadsWithoutEstimate": c.unknown,
            })
        })
        .collect();
    Ok(Json(json!({
        "currency": pricing.currency,
        "basis": "requests",
        "hoursPerMonth": HOURS_PER_MONTH,
        "fleet": {
            "monthlySavings": round2(s),
            "monthlyExtraSpend": round2(x),
            "monthlyNet": round2(x - s),
            "workloads": n,
            "workloadsWithoutEstimate": u,
        },
        "clusters": clusters,
    })))
}
