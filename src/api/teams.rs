//! `/v1/admin/teams`: teams, the namespaces they own (cluster + namespace patterns) and
//! their members' team roles. Fleet admins manage teams; a team's `team-admin` may read
//! it and manage its members (recorded with the team in `actor.teams`).

use axum::body::Body;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::access::Access;
use super::body::read_json;
use super::config_audit::{context, reason_query};
use super::error::ApiError;
use super::routes::parse_id;
use super::AppState;
use crate::auth::{pattern, TeamRole};
use crate::events::config_change::rfc3339_ms as rfc3339;
use crate::events::config_change::{action, Change};
use crate::store::{teams, NamespacePattern, TeamRecord};

/// The API representation of a team.
#[derive(Debug, Serialize)]
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
            created_at: rfc3339(t.created_at),
            updated_at: rfc3339(t.updated_at),
        }
    }
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PatternBody {
    cluster: String,
    namespace: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MemberBody {
    user_id: String,
    role: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateTeam {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    namespaces: Vec<PatternBody>,
    #[serde(default)]
    members: Vec<MemberBody>,
    reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpdateTeam {
    name: Option<String>,
    description: Option<String>,
    namespaces: Option<Vec<PatternBody>>,
    reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetMembers {
    members: Vec<MemberBody>,
    reason: Option<String>,
}

fn validate_name(name: &str) -> Result<(), ApiError> {
    let ok = !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(ApiError::invalid_field(
            "name",
            "must be 1 to 63 letters, digits, '-', '_' or '.'",
        ))
    }
}

fn validate_description(d: &str) -> Result<(), ApiError> {
    if d.chars().count() > 500 {
        return Err(ApiError::invalid_field(
            "description",
            "must be at most 500 characters",
        ));
    }
    Ok(())
}

fn patterns(list: &[PatternBody]) -> Result<Vec<NamespacePattern>, ApiError> {
    if list.len() > 200 {
        return Err(ApiError::invalid_field(
            "namespaces",
            "at most 200 patterns",
        ));
    }
    list.iter()
        .enumerate()
        .map(|(i, p)| {
            pattern::validate(&p.cluster)
                .map_err(|e| ApiError::invalid_field(&format!("namespaces[{i}].cluster"), e))?;
            pattern::validate(&p.namespace)
                .map_err(|e| ApiError::invalid_field(&format!("namespaces[{i}].namespace"), e))?;
            Ok(NamespacePattern {
                cluster: p.cluster.clone(),
                namespace: p.namespace.clone(),
            })
        })
        .collect()
}

fn members(list: &[MemberBody]) -> Result<Vec<(i64, String)>, ApiError> {
    if list.len() > 1000 {
        return Err(ApiError::invalid_field("members", "at most 1000 members"));
    }
    list.iter()
        .enumerate()
        .map(|(i, m)| {
            let id = parse_id("user", &m.user_id).map_err(|_| {
                ApiError::invalid_field(&format!("members[{i}].userId"), "must be a user id")
            })?;
            TeamRole::parse(&m.role).ok_or_else(|| {
                ApiError::invalid_field(
                    &format!("members[{i}].role"),
                    "must be team-admin, team-editor or team-viewer",
                )
            })?;
            Ok((id, m.role.clone()))
        })
        .collect()
}

/// `GET /v1/admin/teams`.
pub async fn list(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    let items: Vec<TeamView> = state
        .store
        .list_teams()
        .await?
        .iter()
        .map(TeamView::from)
        .collect();
    Ok(Json(json!({ "items": items })))
}

/// `GET /v1/admin/teams/{id}`.
pub async fn get(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let id = parse_id("team", &id)?;
    let team = state
        .store
        .get_team(id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("team {id} does not exist")))?;
    Ok(Json(json!(TeamView::from(&team))))
}

/// `POST /v1/admin/teams`: `TeamCreated`.
pub async fn create(
    State(state): State<AppState>,
    access: Access,
    body: Body,
) -> Result<Response, ApiError> {
    let now = state.now();
    let req: CreateTeam = read_json(body).await?;
    validate_name(&req.name)?;
    validate_description(&req.description)?;
    let namespaces = patterns(&req.namespaces)?;
    let members = members(&req.members)?;
    let ctx = context(&access, req.reason)?;
    let team = state
        .store
        .write_audited(ctx, now, move |tx| {
            let t = teams::insert_team(tx, &req.name, &req.description, &namespaces, now)?;
            teams::set_members(tx, t.id, &members, now)?;
            let t = teams::require_team(tx, t.id)?;
            let change = Change::new(action::TEAM_CREATED, "team", t.id, Some(&t.name))
                .after(TeamView::from(&t));
            Ok((t, change))
        })
        .await?;
    Ok((StatusCode::CREATED, Json(json!(TeamView::from(&team)))).into_response())
}

/// `PATCH /v1/admin/teams/{id}`: `TeamUpdated` (name, description, namespaces).
pub async fn update(
    State(state): State<AppState>,
    access: Access,
    Path(id): Path<String>,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let now = state.now();
    let id = parse_id("team", &id)?;
    let req: UpdateTeam = read_json(body).await?;
    if let Some(n) = &req.name {
        validate_name(n)?;
    }
    if let Some(d) = &req.description {
        validate_description(d)?;
    }
    let namespaces = req.namespaces.as_deref().map(patterns).transpose()?;
    let ctx = context(&access, req.reason)?;
    let team = state
        .store
        .write_audited(ctx, now, move |tx| {
            let before = teams::require_team(tx, id)?;
            teams::update_team(tx, id, req.name.as_deref(), req.description.as_deref(), now)?;
            if let Some(ns) = &namespaces {
                teams::set_namespaces(tx, id, ns, now)?;
            }
            let after = teams::require_team(tx, id)?;
            let change = Change::new(action::TEAM_UPDATED, "team", id, Some(&after.name))
                .before(TeamView::from(&before))
                .after(TeamView::from(&after));
            Ok((after, change))
        })
        .await?;
    Ok(Json(json!(TeamView::from(&team))))
}

/// `PUT /v1/admin/teams/{id}/members`: `TeamUpdated`; allowed to the team's team-admins.
pub async fn set_members(
    State(state): State<AppState>,
    access: Access,
    Path(id): Path<String>,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let now = state.now();
    let id = parse_id("team", &id)?;
    let req: SetMembers = read_json(body).await?;
    let list = members(&req.members)?;
    let ctx = context(&access, req.reason)?;
    let team = state
        .store
        .write_audited(ctx, now, move |tx| {
            let before = teams::require_team(tx, id)?;
            teams::set_members(tx, id, &list, now)?;
            let after = teams::require_team(tx, id)?;
            let change = Change::new(action::TEAM_UPDATED, "team", id, Some(&after.name))
                .before(TeamView::from(&before))
                .after(TeamView::from(&after));
            Ok((after, change))
        })
        .await?;
    Ok(Json(json!(TeamView::from(&team))))
}

/// `DELETE /v1/admin/teams/{id}?reason=`: `TeamDeleted` (its team tokens go with it).
pub async fn delete(
    State(state): State<AppState>,
    access: Access,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<StatusCode, ApiError> {
    let now = state.now();
    let id = parse_id("team", &id)?;
    let ctx = context(&access, reason_query(query.as_deref())?)?;
    state
        .store
        .write_audited(ctx, now, move |tx| {
            let before = teams::require_team(tx, id)?;
            teams::delete_team(tx, id)?;
            let change = Change::new(action::TEAM_DELETED, "team", id, Some(&before.name))
                .before(TeamView::from(&before));
            Ok(((), change))
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}
