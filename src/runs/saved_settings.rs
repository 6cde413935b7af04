//! The recommender and pricing settings as stored: loaded (the defaults when none was
//! saved) and saved as operations, validated and audited (`SettingsUpdated`, `before` =
//! the stored document or the defaults in force when none was stored).

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Value};

use super::pricing::PRICING_KEY;
use super::recommender::RECOMMENDER_KEY;
use super::{Pricing, RecommenderSettings, RunError, SettingsError};
use crate::events::config_change::{action, target, AuditContext, Change};
use crate::operation::OpError;
use crate::store::Store;

/// The stored document under `key`, or the defaults when none was saved.
pub async fn load<T: DeserializeOwned + Default>(
    store: &Store,
    key: &'static str,
) -> Result<T, RunError> {
    match store.reading(move |r| r.setting(key)).await? {
        None => Ok(T::default()),
        Some(text) => serde_json::from_str(&text).map_err(|e| RunError::BadSettings {
            key,
            message: e.to_string(),
        }),
    }
}

fn invalid(e: SettingsError) -> OpError {
    OpError::Rejected {
        code: "invalid_settings",
        message: e.to_string(),
        details: json!({ "field": e.field }),
    }
}

/// Stores `doc` under `key` with its `SettingsUpdated` row.
async fn save<T: Serialize + Default>(
    store: &Store,
    now: i64,
    ctx: AuditContext,
    key: &'static str,
    doc: &T,
) -> Result<(), OpError> {
    let doc = serde_json::to_value(doc).map_err(OpError::internal)?;
    let defaults = serde_json::to_value(T::default()).map_err(OpError::internal)?;
    store
        .write_audited(ctx, now, move |tx| {
            let before = tx.replace_setting(key, &doc.to_string(), now)?;
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

/// Validates and stores the recommender settings; returns them normalized.
pub async fn save_recommender(
    store: &Store,
    now: i64,
    ctx: AuditContext,
    settings: RecommenderSettings,
) -> Result<RecommenderSettings, OpError> {
    let s = settings.validated().map_err(invalid)?;
    save(store, now, ctx, RECOMMENDER_KEY, &s).await?;
    Ok(s)
}

/// Validates and stores the pricing settings.
pub async fn save_pricing(
    store: &Store,
    now: i64,
    ctx: AuditContext,
    pricing: Pricing,
) -> Result<Pricing, OpError> {
    let p = pricing.validated().map_err(invalid)?;
    save(store, now, ctx, PRICING_KEY, &p).await?;
    Ok(p)
}
