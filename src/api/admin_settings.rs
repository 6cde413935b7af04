//! The recommender and pricing settings over HTTP (`/v1/admin/settings/recommender`
//! and `.../pricing`, GET and PUT of one whole document each). Settings live in the
//! database; a PUT wakes the scheduler so a new schedule applies at once.

use axum::body::Body;
use axum::extract::State;
use axum::Json;
use serde::de::DeserializeOwned;

use super::access::Access;
use super::body::{parse_json, read_limited};
use super::config_audit::context;
use super::error::ApiError;
use super::query::params::ReasonQuery;
use super::query::Query;
use super::state::AppState;
use crate::runs::saved_settings::{save_pricing, save_recommender};
use crate::runs::{Pricing, RecommenderSettings};

const MAX_SETTINGS_BYTES: usize = 256 * 1024;

/// A whole settings document, strictly (an object, no `null`, no array for an object).
async fn parse<T: DeserializeOwned + serde::Serialize>(body: Body) -> Result<T, ApiError> {
    let bytes = read_limited(body, MAX_SETTINGS_BYTES).await?;
    parse_json(&bytes).map_err(|e| {
        let message = format!("settings JSON: {}", e.message);
        ApiError::bad_request("invalid_settings", message).with_details(e.details)
    })
}

#[utoipa::path(
    get,
    path = "/v1/admin/settings/recommender",
    summary = "The recommender settings in force.",
    responses(
        (status = 200, description = "The settings.", body = RecommenderSettings),
    )
)]
pub async fn get_recommender(
    State(state): State<AppState>,
) -> Result<Json<RecommenderSettings>, ApiError> {
    Ok(Json(
        state.runs.recommender().await.map_err(ApiError::internal)?,
    ))
}

/// `PUT /v1/admin/settings/recommender[?reason=…]`.
#[utoipa::path(
    put,
    path = "/v1/admin/settings/recommender",
    summary = "Replace the recommender settings (missing fields take defaults; `?reason=` for the audit); 400 invalid_settings names the field in details.field. Audited as SettingsUpdated.",
    params(
        ("reason" = Option<String>, Query, max_length = 1024, description = "Why (recorded in the audit)"),
    ),
    request_body = RecommenderSettings,
    responses(
        (status = 200, description = "The stored settings, policy normalized.", body = RecommenderSettings),
    )
)]
pub async fn put_recommender(
    State(state): State<AppState>,
    access: Access,
    Query(q): Query<ReasonQuery>,
    body: Body,
) -> Result<Json<RecommenderSettings>, ApiError> {
    let ctx = context(&access, q.reason)?;
    let s = save_recommender(&state.store, state.now(), ctx, parse(body).await?).await?;
    state.runs.settings_changed();
    Ok(Json(s))
}

#[utoipa::path(
    get,
    path = "/v1/admin/settings/pricing",
    summary = "The pricing in force.",
    responses(
        (status = 200, description = "The pricing.", body = Pricing),
    )
)]
pub async fn get_pricing(State(state): State<AppState>) -> Result<Json<Pricing>, ApiError> {
    Ok(Json(
        state.runs.pricing().await.map_err(ApiError::internal)?,
    ))
}

/// `PUT /v1/admin/settings/pricing[?reason=…]`.
#[utoipa::path(
    put,
    path = "/v1/admin/settings/pricing",
    summary = "Replace the pricing (`?reason=` for the audit); applies to recommendations made from then on. Audited as SettingsUpdated.",
    params(
        ("reason" = Option<String>, Query, max_length = 1024, description = "Why (recorded in the audit)"),
    ),
    request_body = Pricing,
    responses(
        (status = 200, description = "The stored pricing.", body = Pricing),
    )
)]
pub async fn put_pricing(
    State(state): State<AppState>,
    access: Access,
    Query(q): Query<ReasonQuery>,
    body: Body,
) -> Result<Json<Pricing>, ApiError> {
    let ctx = context(&access, q.reason)?;
    let p = save_pricing(&state.store, state.now(), ctx, parse(body).await?).await?;
    Ok(Json(p))
}
