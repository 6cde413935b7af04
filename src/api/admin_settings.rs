//! The recommender and pricing settings over HTTP (`/v1/admin/settings/recommender`
//! and `.../pricing`, GET and PUT of one whole document each). Settings live in the
//! database; a PUT wakes the scheduler so a new schedule applies at once.

use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::Json;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use super::access::Access;
use super::body::read_limited;
use super::config_audit::{context, reason_query};
use super::error::ApiError;
use super::AppState;
use crate::events::config_change::{action, target, Change};
use crate::runs::pricing::PRICING_KEY;
use crate::runs::recommender::RECOMMENDER_KEY;
use crate::runs::{Pricing, RecommenderSettings, SettingsError};
use crate::store::replace_setting;

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

/// Stores `doc` under `key` with its `SettingsUpdated` row (before = the stored document,
/// or the defaults in force when none was stored).
async fn store_audited(
    state: &AppState,
    access: &Access,
    reason: Option<String>,
    key: &'static str,
    doc: Value,
    defaults: Value,
) -> Result<(), ApiError> {
    let ctx = context(access, reason)?;
    let now = state.now();
    state
        .store
        .write_audited(ctx, now, move |tx| {
            let before = replace_setting(tx, key, &doc.to_string(), now)?;
            let before = before
                .and_then(|b| serde_json::from_str::<Value>(&b).ok())
                .unwrap_or(defaults);
            let change = Change::new(action::SETTINGS_UPDATED, target::SETTINGS, key, Some(key))
                .before(before)
                .after(doc);
            Ok(((), change))
        })
        .await?;
    Ok(())
}

/// `PUT /v1/admin/settings/recommender[?reason=…]`.
pub async fn put_recommender(
    State(state): State<AppState>,
    access: Access,
    RawQuery(query): RawQuery,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let reason = reason_query(query.as_deref())?;
    let s: RecommenderSettings = parse(body).await?;
    let s = s.validated().map_err(invalid)?;
    let doc = to_json(&s)?;
    let defaults = to_json(&RecommenderSettings::default())?;
    store_audited(
        &state,
        &access,
        reason,
        RECOMMENDER_KEY,
        doc.clone(),
        defaults,
    )
    .await?;
    state.runs.settings_changed();
    Ok(Json(doc))
}

pub async fn get_pricing(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    let p = state.runs.pricing().await.map_err(ApiError::internal)?;
    Ok(Json(to_json(&p)?))
}

/// `PUT /v1/admin/settings/pricing[?reason=…]`.
pub async fn put_pricing(
    State(state): State<AppState>,
    access: Access,
    RawQuery(query): RawQuery,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let reason = reason_query(query.as_deref())?;
    let p: Pricing = parse(body).await?;
    let p = p.validated().map_err(invalid)?;
    let doc = to_json(&p)?;
    let defaults = to_json(&Pricing::default())?;
    store_audited(&state, &access, reason, PRICING_KEY, doc.clone(), defaults).await?;
    Ok(Json(doc))
}
