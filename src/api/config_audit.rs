//! The configuration audit over HTTP: `GET /v1/audit/config` (filters, cursor
//! pagination) and [`context`], which every changing handler uses to turn its request
//! (caller + optional `reason`) into the `AuditContext` its store transaction records.

use axum::extract::{RawQuery, State};
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use super::access::Access;
use super::error::ApiError;
use super::lists::Page;
use super::query;
use super::AppState;
use crate::events::config_change::{Actor, AuditContext, Target, MAX_REASON_CHARS};
use crate::store::ConfigAuditFilter;

const DEFAULT_LIMIT: usize = 100;

/// One configuration change (`config_changed`): who changed what, from what, to what
/// and why.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ConfigChangeRecord {
    pub id: String,
    /// RFC 3339.
    pub time: String,
    /// The action of the events contract's configuration table, e.g. `PolicyUpdated`.
    pub action: String,
    pub actor: Actor,
    pub target: Target,
    /// The target's API representation before the change (`null` on create); secrets
    /// only as the fixed mask `***`.
    #[schema(value_type = Option<Object>)]
    pub before: Option<Value>,
    /// The representation after it (`null` on delete).
    #[schema(value_type = Option<Object>)]
    pub after: Option<Value>,
    pub reason: Option<String>,
}

/// The audit context of a change made by this request, with the user's `reason`.
pub fn context(access: &Access, reason: Option<String>) -> Result<AuditContext, ApiError> {
    // The length counts what was sent, spaces too (as the document's maxLength does).
    if reason
        .as_ref()
        .is_some_and(|r| r.chars().count() > MAX_REASON_CHARS)
    {
        return Err(ApiError::invalid_field(
            "reason",
            format!("must be at most {MAX_REASON_CHARS} characters"),
        ));
    }
    let reason = reason
        .map(|r| r.trim().to_string())
        .filter(|r| !r.is_empty());
    Ok(AuditContext {
        actor: access.actor(),
        reason,
    })
}

/// Parses `?reason=`; other parameters are refused.
pub fn reason_query(query: Option<&str>) -> Result<Option<String>, ApiError> {
    let mut reason = None;
    for (key, value) in query::pairs(query)? {
        match key.as_str() {
            "reason" if reason.is_none() => reason = Some(value),
            "reason" => return Err(query::bad(&key, "is given twice")),
            _ => return Err(query::bad(&key, "unknown parameter")),
        }
    }
    Ok(reason)
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
        ("actorType" = Option<crate::wire::actor::ActorKind>, Query),
        ("since" = Option<String>, Query, format = DateTime),
        ("until" = Option<String>, Query, format = DateTime),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 500, description = "Default 100."),
        ("next" = Option<String>, Query),
    ),
    responses(
        (status = 200, description = "A page of configuration changes.", body = Page<ConfigChangeRecord>),
    )
)]
pub async fn get_config_audit(
    State(state): State<AppState>,
    RawQuery(query): RawQuery,
) -> Result<Json<Page<ConfigChangeRecord>>, ApiError> {
    let filter = parse_filter(query.as_deref().unwrap_or(""))?;
    let page = state.store.query_config_audit(filter).await?;
    let items = page
        .items
        .into_iter()
        .map(|c| serde_json::from_value(c.record))
        .collect::<Result<Vec<ConfigChangeRecord>, _>>()
        .map_err(ApiError::internal)?;
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
