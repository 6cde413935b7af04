//! The configuration audit over HTTP: `GET /v1/audit/config` (filters, cursor
//! pagination) and [`context`], which every changing handler uses to turn its request
//! (caller + optional `reason`) into the `AuditContext` its store transaction records.

use axum::extract::{RawQuery, State};
use axum::Json;
use serde::Deserialize;
use serde_json::Value;

use super::access::Access;
use super::error::ApiError;
use super::lists::Page;
use super::query;
use super::AppState;
use crate::events::config_change::{AuditContext, MAX_REASON_CHARS};
use crate::store::ConfigAuditFilter;

const DEFAULT_LIMIT: usize = 100;

/// The audit context of a change made by this request, with the user's `reason`.
pub fn context(access: &Access, reason: Option<String>) -> Result<AuditContext, ApiError> {
    let reason = reason
        .map(|r| r.trim().to_string())
        .filter(|r| !r.is_empty());
    if reason
        .as_ref()
        .is_some_and(|r| r.chars().count() > MAX_REASON_CHARS)
    {
        return Err(ApiError::invalid_field(
            "reason",
            format!("must be at most {MAX_REASON_CHARS} characters"),
        ));
    }
    Ok(AuditContext {
        actor: access.actor(),
        reason,
    })
}

/// The `?reason=` of a DELETE (which has no body).
#[derive(Deserialize, Default, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ReasonQuery {
    pub reason: Option<String>,
}

/// Parses `?reason=`; other parameters are refused.
pub fn reason_query(query: Option<&str>) -> Result<Option<String>, ApiError> {
    let q: ReasonQuery = serde_urlencoded::from_str(query.unwrap_or(""))
        .map_err(|e| ApiError::bad_request("invalid_query", e.to_string()))?;
    Ok(q.reason)
}

/// `GET /v1/audit/config`.
#[utoipa::path(
    get,
    path = "/v1/audit/config",
    summary = "Configuration changes (config_changed), newest first.",
    params(
        ("action" = Option<String>, Query),
        ("targetType" = Option<String>, Query),
        ("targetId" = Option<String>, Query),
        ("actor" = Option<String>, Query, description = "Actor name"),
        ("actorType" = Option<String>, Query, description = "One of: user, token, system."),
        ("since" = Option<String>, Query, format = DateTime),
        ("until" = Option<String>, Query, format = DateTime),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 500, description = "Default 100."),
        ("next" = Option<String>, Query),
    ),
    responses(
        (status = 200, description = "A page of configuration changes.", body = Page<serde_json::Value>),
    )
)]
pub async fn get_config_audit(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Json<Page<Value>>, ApiError> {
    let filter = parse_filter(query.as_deref().unwrap_or(""))?;
    let page = state.store.query_config_audit(filter).await?;
    let items: Vec<Value> = page.items.into_iter().map(|c| c.record).collect();
    Ok(Json(Page {
        items,
        next: page.next.map(query::encode_seq),
    }))
}

fn parse_filter(raw: &str) -> Result<ConfigAuditFilter, ApiError> {
    let mut f = ConfigAuditFilter::default();
    let mut w = query::LogWindow::new(DEFAULT_LIMIT);
    for (key, value) in query::pairs(Some(raw))? {
        if w.take(&key, &value)? {
            continue;
        }
        let slot = match key.as_str() {
            "action" => &mut f.action,
            "targetType" => &mut f.target_type,
            "targetId" => &mut f.target_id,
            "actor" => &mut f.actor,
            "actorType" => {
                if !matches!(value.as_str(), "user" | "token" | "system") {
                    return Err(query::bad(&key, "must be user, token or system"));
                }
                &mut f.actor_type
            }
            _ => return Err(query::bad(&key, "unknown parameter")),
        };
        *slot = Some(value);
    }
    (f.since_ms, f.until_ms, f.before_seq, f.limit) =
        (w.since_ms, w.until_ms, w.before_seq, w.limit);
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_audit_filters_are_parsed_strictly() {
        let f = parse_filter("action=UserCreated&targetType=user&actorType=token&limit=2").unwrap();
        assert_eq!(f.action.as_deref(), Some("UserCreated"));
        assert_eq!((f.actor_type.as_deref(), f.limit), (Some("token"), 2));
        for bad in [
            "actorType=robot",
            "limit=0",
            "since=never",
            "who=me",
            "next=zz",
        ] {
            assert!(parse_filter(bad).is_err(), "{bad}");
        }
    }
}
