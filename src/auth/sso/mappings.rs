//! The group mappings in force: those of the config file (`[[auth.oidc.groups]]`,
//! read-only) and those set in the UI (stored, replaced as one set, audited
//! `SsoMappingsUpdated`). Both name teams by name; a config mapping naming no team is
//! skipped with a warning.

use serde::{Deserialize, Serialize};

use super::mapping::{Grant, Mapping};
use crate::auth::{FleetRole, TeamRole};
use crate::config::oidc::{check_mapping, GroupMapping, OidcConfig};
use crate::events::config_change::{action, AuditContext, Change};
use crate::operation::OpError;
use crate::store::{SsoMappingRecord, Store, StoreError};

/// One mapping as the API shows it and takes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MappingView {
    /// The provider's group name, exactly as its groups claim says it.
    pub group: String,
    /// A fleet role: `admin`, `editor` or `viewer`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// The team (by name) of a team role.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team: Option<String>,
    /// `team-admin`, `team-editor` or `team-viewer`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team_role: Option<String>,
    /// `config` (the config file's; read-only here) or `ui`. In answers only.
    #[serde(default, skip_deserializing)]
    pub source: String,
}

/// Every mapping in force: the config file's, then the UI's.
pub async fn list(store: &Store, cfg: &OidcConfig) -> Result<Vec<MappingView>, StoreError> {
    let mut out: Vec<MappingView> = cfg
        .groups
        .iter()
        .map(|g| MappingView {
            group: g.group.clone(),
            role: g.role.clone(),
            team: g.team.clone(),
            team_role: g.team_role.clone(),
            source: "config".into(),
        })
        .collect();
    out.extend(ui_views(store.reading(|r| r.sso_mappings()).await?));
    Ok(out)
}

/// The mappings in force as grants, teams resolved to ids.
pub async fn effective(store: &Store, cfg: &OidcConfig) -> Result<Vec<Mapping>, StoreError> {
    let configured = cfg.groups.clone();
    store
        .reading(move |r| {
            let mut out = Vec::new();
            for g in &configured {
                let grant = match (&g.role, &g.team, &g.team_role) {
                    (Some(role), _, _) => FleetRole::parse(role).map(Grant::Fleet),
                    (None, Some(team), Some(role)) => match r.team_id_by_name(team)? {
                        Some(id) => TeamRole::parse(role).map(|t| Grant::Team(id, t)),
                        None => {
                            tracing::warn!(group = %g.group, team = %team, "auth.oidc.groups names a team that does not exist; skipped");
                            None
                        }
                    },
                    _ => None,
                };
                out.extend(grant.map(|grant| Mapping {
                    group: g.group.clone(),
                    grant,
                }));
            }
            for m in r.sso_mappings()? {
                let grant = match (m.role.as_deref(), m.team_id, m.team_role.as_deref()) {
                    (Some(role), _, _) => FleetRole::parse(role).map(Grant::Fleet),
                    (None, Some(id), Some(role)) => TeamRole::parse(role).map(|t| Grant::Team(id, t)),
                    _ => None,
                };
                out.extend(grant.map(|grant| Mapping {
                    group: m.group.clone(),
                    grant,
                }));
            }
            Ok(out)
        })
        .await
}

/// Replaces the UI's mappings with `wanted` (each checked, teams by name), audited
/// `SsoMappingsUpdated` with the set before and after; returns every mapping in force.
pub async fn replace(
    store: &Store,
    cfg: &OidcConfig,
    now: i64,
    ctx: AuditContext,
    wanted: Vec<MappingView>,
) -> Result<Vec<MappingView>, OpError> {
    if wanted.len() > 500 {
        return Err(OpError::invalid("mappings", "at most 500 mappings"));
    }
    for (i, m) in wanted.iter().enumerate() {
        let as_config = GroupMapping {
            group: m.group.clone(),
            role: m.role.clone(),
            team: m.team.clone(),
            team_role: m.team_role.clone(),
        };
        check_mapping(&as_config).map_err(|e| OpError::invalid(&format!("mappings[{i}]"), e))?;
    }
    let names: Vec<Option<String>> = wanted.iter().map(|m| m.team.clone()).collect();
    let ids = store
        .reading(move |r| {
            names
                .iter()
                .map(|n| match n {
                    Some(name) => r.team_id_by_name(name).map(|id| id.ok_or(name.clone())),
                    None => Ok(Ok(0)),
                })
                .collect::<Result<Vec<_>, _>>()
        })
        .await?;
    let mut records = Vec::new();
    for (i, (m, id)) in wanted.iter().zip(ids).enumerate() {
        let team_id = match (&m.team, id) {
            (None, _) => None,
            (Some(_), Ok(id)) => Some(id),
            (Some(_), Err(name)) => {
                return Err(OpError::invalid(
                    &format!("mappings[{i}].team"),
                    format!("no team is named {name:?}"),
                ))
            }
        };
        records.push(SsoMappingRecord {
            group: m.group.trim().to_string(),
            role: m.role.clone(),
            team_id,
            team_name: None,
            team_role: m.team_role.clone(),
        });
    }
    store
        .write_audited(ctx, now, move |tx| {
            let before = ui_views(tx.sso_mappings()?);
            tx.replace_sso_mappings(&records)?;
            let after = ui_views(tx.sso_mappings()?);
            let change = Change::new(action::SSO_MAPPINGS_UPDATED, "sso-mappings", "groups", None)
                .before(serde_json::json!({ "mappings": before }))
                .after(serde_json::json!({ "mappings": after }));
            Ok(((), change))
        })
        .await?;
    Ok(list(store, cfg).await?)
}

fn ui_views(records: Vec<SsoMappingRecord>) -> Vec<MappingView> {
    records
        .into_iter()
        .map(|m| MappingView {
            group: m.group,
            role: m.role,
            team: m.team_name,
            team_role: m.team_role,
            source: "ui".into(),
        })
        .collect()
}
