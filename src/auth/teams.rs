//! Teams as operations: create, update, set members, delete. A team owns namespaces
//! (cluster + namespace patterns with `*` globs) and gives its members a team role there.
//! Fleet admins manage teams; a team's `team-admin` may read it and set its members.
//! Each change is one audited transaction.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::{pattern, TeamRole};
use crate::events::config_change::{action, AuditContext, Change};
use crate::operation::OpError;
use crate::store::{NamespacePattern, Store, TeamRecord};
use crate::timestamp::format_ms;

/// A cluster + namespace pattern, as the API takes and shows it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PatternBody {
    pub cluster: String,
    pub namespace: String,
}

/// A member and their team role, as the API takes it: the user by `userId` or by
/// `username` (one of them). A team-admin names new members by username; ids only
/// keep current members, so ids (sequential) cannot be walked to learn usernames.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MemberBody {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    pub role: String,
}

/// Who may name members how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberNaming {
    /// A fleet admin: by id or by username.
    Any,
    /// A team-admin of the team: new members by username only.
    NewByUsername,
}

/// The API representation of a team.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TeamView {
    pub id: String,
    pub name: String,
    pub description: String,
    pub namespaces: Vec<PatternBody>,
    pub members: Vec<Value>,
    pub created_at: String,
    pub updated_at: String,
}

impl From<&TeamRecord> for TeamView {
    fn from(t: &TeamRecord) -> Self {
        TeamView {
            id: t.id.to_string(),
            name: t.name.clone(),
            description: t.description.clone(),
            namespaces: t
                .namespaces
                .iter()
                .map(|p| PatternBody {
                    cluster: p.cluster.clone(),
                    namespace: p.namespace.clone(),
                })
                .collect(),
            members: t
                .members
                .iter()
                .map(|m| json!({"userId": m.user_id.to_string(), "username": m.username, "role": m.role}))
                .collect(),
            created_at: format_ms(t.created_at),
            updated_at: format_ms(t.updated_at),
        }
    }
}

/// A new team.
#[derive(Debug, Clone, Default)]
pub struct NewTeam {
    pub name: String,
    pub description: String,
    pub namespaces: Vec<PatternBody>,
    pub members: Vec<MemberBody>,
}

/// Changes to a team; `None` keeps a field.
#[derive(Debug, Clone, Default)]
pub struct TeamChanges {
    pub name: Option<String>,
    pub description: Option<String>,
    pub namespaces: Option<Vec<PatternBody>>,
}

fn check_name(name: &str) -> Result<(), OpError> {
    crate::names::team(name).map_err(|e| OpError::invalid("name", e))
}

fn check_description(d: &str) -> Result<(), OpError> {
    if d.chars().count() > 500 {
        return Err(OpError::invalid(
            "description",
            "must be at most 500 characters",
        ));
    }
    crate::names::text(d, true).map_err(|e| OpError::invalid("description", e))
}

fn patterns(list: &[PatternBody]) -> Result<Vec<NamespacePattern>, OpError> {
    if list.len() > 200 {
        return Err(OpError::invalid("namespaces", "at most 200 patterns"));
    }
    list.iter()
        .enumerate()
        .map(|(i, p)| {
            pattern::validate(&p.cluster)
                .map_err(|e| OpError::invalid(&format!("namespaces[{i}].cluster"), e))?;
            pattern::validate(&p.namespace)
                .map_err(|e| OpError::invalid(&format!("namespaces[{i}].namespace"), e))?;
            Ok(NamespacePattern {
                cluster: p.cluster.clone(),
                namespace: p.namespace.clone(),
            })
        })
        .collect()
}

/// The members as (user id, role). `current` lists the team's members now; under
/// [`MemberNaming::NewByUsername`] an id outside it is refused the same way whether
/// or not such a user exists.
async fn members(
    store: &Store,
    list: &[MemberBody],
    naming: MemberNaming,
    current: &[i64],
) -> Result<Vec<(i64, String)>, OpError> {
    if list.len() > 1000 {
        return Err(OpError::invalid("members", "at most 1000 members"));
    }
    let mut out = Vec::with_capacity(list.len());
    for (i, m) in list.iter().enumerate() {
        let at = |f: &str| format!("members[{i}].{f}");
        TeamRole::parse(&m.role).ok_or_else(|| {
            OpError::invalid(
                &at("role"),
                "must be team-admin, team-editor or team-viewer",
            )
        })?;
        let id = match (&m.user_id, &m.username) {
            (Some(id), None) => {
                let id = id.parse::<i64>().ok().filter(|n| *n > 0);
                let id = id.ok_or_else(|| OpError::invalid(&at("userId"), "must be a user id"))?;
                if naming == MemberNaming::NewByUsername && !current.contains(&id) {
                    return Err(OpError::invalid(
                        &at("userId"),
                        "is not a member: a team admin adds members by username",
                    ));
                }
                id
            }
            (None, Some(name)) => {
                let name = name.clone();
                store
                    .reading(move |r| r.user_by_name(&name))
                    .await?
                    .map(|u| u.id)
                    .ok_or_else(|| OpError::invalid(&at("username"), "no user has this name"))?
            }
            _ => {
                return Err(OpError::invalid(
                    &format!("members[{i}]"),
                    "name the user by userId or by username (one of them)",
                ))
            }
        };
        out.push((id, m.role.clone()));
    }
    Ok(out)
}

fn updated(before: &TeamRecord, after: &TeamRecord) -> Change {
    Change::new(action::TEAM_UPDATED, "team", after.id, Some(&after.name))
        .before(TeamView::from(before))
        .after(TeamView::from(after))
}

/// Every team.
pub async fn list(store: &Store) -> Result<Vec<TeamView>, OpError> {
    Ok(store
        .reading(|r| r.list_teams())
        .await?
        .iter()
        .map(TeamView::from)
        .collect())
}

/// Team `id`.
pub async fn get(store: &Store, id: i64) -> Result<TeamView, OpError> {
    store
        .reading(move |r| r.get_team(id))
        .await?
        .map(|t| TeamView::from(&t))
        .ok_or_else(|| OpError::NotFound(format!("team {id} does not exist")))
}

/// `TeamCreated`.
pub async fn create(
    store: &Store,
    now: i64,
    ctx: AuditContext,
    input: NewTeam,
) -> Result<TeamView, OpError> {
    check_name(&input.name)?;
    check_description(&input.description)?;
    let namespaces = patterns(&input.namespaces)?;
    let members = members(store, &input.members, MemberNaming::Any, &[]).await?;
    Ok(store
        .write_audited(ctx, now, move |tx| {
            let t = tx.insert_team(&input.name, &input.description, &namespaces, now)?;
            tx.set_team_members(t.id, &members, now)?;
            let t = TeamView::from(&tx.require_team(t.id)?);
            let change = Change::new(action::TEAM_CREATED, "team", &t.id, Some(&t.name)).after(&t);
            Ok((t, change))
        })
        .await?)
}

/// `TeamUpdated` (name, description, namespaces).
pub async fn update(
    store: &Store,
    now: i64,
    ctx: AuditContext,
    id: i64,
    changes: TeamChanges,
) -> Result<TeamView, OpError> {
    if let Some(n) = &changes.name {
        check_name(n)?;
    }
    if let Some(d) = &changes.description {
        check_description(d)?;
    }
    let namespaces = changes.namespaces.as_deref().map(patterns).transpose()?;
    Ok(store
        .write_audited(ctx, now, move |tx| {
            let before = tx.require_team(id)?;
            let (name, description) = (changes.name.as_deref(), changes.description.as_deref());
            tx.update_team(id, name, description, now)?;
            if let Some(ns) = &namespaces {
                tx.set_team_namespaces(id, ns, now)?;
            }
            let after = tx.require_team(id)?;
            Ok((TeamView::from(&after), updated(&before, &after)))
        })
        .await?)
}

/// `TeamUpdated`: replaces the members.
pub async fn set_members(
    store: &Store,
    now: i64,
    ctx: AuditContext,
    id: i64,
    list: Vec<MemberBody>,
    naming: MemberNaming,
) -> Result<TeamView, OpError> {
    let team = store
        .reading(move |r| r.get_team(id))
        .await?
        .ok_or_else(|| OpError::NotFound(format!("team {id} does not exist")))?;
    let current: Vec<i64> = team.members.iter().map(|m| m.user_id).collect();
    let list = members(store, &list, naming, &current).await?;
    Ok(store
        .write_audited(ctx, now, move |tx| {
            let before = tx.require_team(id)?;
            tx.set_team_members(id, &list, now)?;
            let after = tx.require_team(id)?;
            Ok((TeamView::from(&after), updated(&before, &after)))
        })
        .await?)
}

/// `TeamDeleted` (its team tokens go with it).
pub async fn delete(store: &Store, now: i64, ctx: AuditContext, id: i64) -> Result<(), OpError> {
    Ok(store
        .write_audited(ctx, now, move |tx| {
            let before = tx.require_team(id)?;
            tx.delete_team(id)?;
            let change = Change::new(action::TEAM_DELETED, "team", id, Some(&before.name))
                .before(TeamView::from(&before));
            Ok(((), change))
        })
        .await?)
}
