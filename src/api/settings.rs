//! Admin settings over HTTP (`/v1/admin/settings/recommender` and `.../pricing`, GET
//! and PUT of one whole document each) and the savings totals (`GET /v1/savings`).
//! Settings live in the database; a PUT wakes the scheduler so a new schedule applies
//! at once.

use axum::body::Body;
use axum::extract::State;
use axum::Json;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use super::body::read_limited;
use super::error::ApiError;
use super::AppState;
use crate::runs::settings::{PRICING_KEY, RECOMMENDER_KEY};
use crate::runs::summary::HOURS_PER_MONTH;
use crate::runs::{Pricing, RecommenderSettings, SettingsError};

const MAX_SETTINGS_BYTES: usize = 256 * 1024;

fn invalid(e: SettingsError) -> ApiError {
    let details = json!({ "field": e.field });
    ApiError::bad_request("invalid_settings", e.to_string()).with_details(details)
}

async fn parse<T: DeserializeOwned>(body: Body) -> Result<T, ApiError> {
    let bytes = read_limited(body, MAX_SETTINGS_BYTES).await?;
    serde_json::from_slice(&bytes)
        .map_err(|e| ApiError::bad_request("invalid_settings", format!("settings JSON: {e}")))
}

fn to_json<T: serde::Serialize>(v: &T) -> Result<Value, ApiError> {
    serde_json::to_value(v).map_err(ApiError::internal)
}

pub async fn get_recommender(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    let s = state.runs.recommender().await.map_err(ApiError::internal)?;
    Ok(Json(to_json(&s)?))
}

pub async fn put_recommender(
    State(state): State<AppState>,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let s: RecommenderSettings = parse(body).await?;
    let s = s.validated().map_err(invalid)?;
    let doc = to_json(&s)?;
    // SEAM(config-audit): `_before` and `doc` become the ConfigChange row's before/after.
    let _before = state
        .store
        .put_setting(RECOMMENDER_KEY, doc.to_string())
        .await?;
    state.runs.settings_changed();
    Ok(Json(doc))
}

pub async fn get_pricing(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    let p = state.runs.pricing().await.map_err(ApiError::internal)?;
    Ok(Json(to_json(&p)?))
}

pub async fn put_pricing(
    State(state): State<AppState>,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let p: Pricing = parse(body).await?;
    let p = p.validated().map_err(invalid)?;
    let doc = to_json(&p)?;
    // SEAM(config-audit): as above.
    let _before = state
        .store
        .put_setting(PRICING_KEY, doc.to_string())
        .await?;
    Ok(Json(doc))
}

fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

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
