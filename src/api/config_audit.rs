//! The configuration audit over HTTP: `GET /v1/audit/config` (filters, cursor
//! pagination) and [`context`], which every changing handler uses to turn its request
//! (caller + optional `reason`) into the `AuditContext` its store transaction records.

use axum::extract::State;
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use super::access::Access;
use super::error::ApiError;
use super::lists::Page;
use super::query::params::{LogWindow, ReasonQuery};
use super::query::{self, Query};
use super::state::AppState;
use crate::events::config_change::{Actor, AuditContext, Target, MAX_REASON_CHARS};
use crate::store::ConfigAuditFilter;
use crate::wire::actor::ActorKind;

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

/// Parses `?reason=`; other parameters are refused (for handlers that read it after
/// finding what they change).
pub fn reason_query(query: Option<&str>) -> Result<Option<String>, ApiError> {
    Ok(query::parse::<ReasonQuery>(query)?.reason)
}

/// The configuration audit's filters, beside its [`LogWindow`].
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
pub struct ConfigAuditQuery {
    action: Option<String>,
    target_type: Option<String>,
    target_id: Option<String>,
    actor: Option<String>,
    actor_type: Option<ActorKind>,
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
    Query(query): Query<(ConfigAuditQuery, LogWindow)>,
) -> Result<Json<Page<ConfigChangeRecord>>, ApiError> {
    let filter = filter(query);
    let page = state
        .store
        .reading(move |r| r.query_config_audit(&filter))
        .await?;
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

fn filter((q, w): (ConfigAuditQuery, LogWindow)) -> ConfigAuditFilter {
    ConfigAuditFilter {
        action: q.action,
        target_type: q.target_type,
        target_id: q.target_id,
        actor: q.actor,
        actor_type: q.actor_type.map(|k| k.as_str().to_string()),
        since_ms: w.since_ms,
        until_ms: w.until_ms,
        before_seq: w.before_seq,
        limit: w.limit.unwrap_or(DEFAULT_LIMIT),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_filter(raw: &str) -> Result<ConfigAuditFilter, ApiError> {
        query::parse(Some(raw)).map(filter)
    }

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
