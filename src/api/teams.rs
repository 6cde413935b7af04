//! `/v1/admin/teams`: teams, the namespaces they own (cluster + namespace patterns) and
//! their members' team roles. Fleet admins manage teams; a team's `team-admin` may read
//! it and manage its members (recorded with the team in `actor.teams`).

use axum::body::Body;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};

use super::access::{Access, Via};
use super::body::read_json;
use super::config_audit::context;
use super::error::ApiError;
use super::ids::{self, Id};
use super::lists::Items;
use super::query::params::ReasonQuery;
use super::query::Query;
use super::state::AppState;
use crate::auth::teams::{
    self, MemberBody, MemberNaming, NewTeam, PatternBody, TeamChanges, TeamView,
};

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
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

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateTeam {
    name: Option<String>,
    description: Option<String>,
    namespaces: Option<Vec<PatternBody>>,
    reason: Option<String>,
}

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SetMembers {
    members: Vec<MemberBody>,
    reason: Option<String>,
}

/// `GET /v1/admin/teams`.
#[utoipa::path(
    get,
    path = "/v1/admin/teams",
    summary = "List teams.",
    responses(
        (status = 200, description = "Every team.", body = Items<TeamView>),
    )
)]
pub async fn list(State(state): State<AppState>) -> Result<Json<Items<TeamView>>, ApiError> {
    Ok(Json(Items::new(teams::list(&state.store).await?)))
}

/// `GET /v1/admin/teams/{id}`.
#[utoipa::path(
    get,
    path = "/v1/admin/teams/{id}",
    summary = "One team (fleet admin or the team's team-admin).",
    params(
        ("id" = String, Path),
    ),
    responses(
        (status = 200, description = "Team.", body = TeamView),
    )
)]
pub async fn get(
    State(state): State<AppState>,
    Id(id, _): Id<ids::Team>,
) -> Result<Json<TeamView>, ApiError> {
    Ok(Json(teams::get(&state.store, id).await?))
}

/// `POST /v1/admin/teams`: `TeamCreated`.
#[utoipa::path(
    post,
    path = "/v1/admin/teams",
    summary = "Create a team (TeamCreated).",
    request_body = CreateTeam,
    responses(
        (status = 201, description = "The team.", body = TeamView),
        (status = 409, description = "The name is taken (conflict).", body = super::error::ErrorBody),
    )
)]
pub async fn create(
    State(state): State<AppState>,
    access: Access,
    body: Body,
) -> Result<Response, ApiError> {
    let req: CreateTeam = read_json(body).await?;
    let ctx = context(&access, req.reason)?;
    let input = NewTeam {
        name: req.name,
        description: req.description,
        namespaces: req.namespaces,
        members: req.members,
    };
    let team = teams::create(&state.store, state.now(), ctx, input).await?;
    Ok((StatusCode::CREATED, Json(team)).into_response())
}

/// `PATCH /v1/admin/teams/{id}`: `TeamUpdated` (name, description, namespaces).
#[utoipa::path(
    patch,
    path = "/v1/admin/teams/{id}",
    summary = "Rename, re-describe or re-scope a team (TeamUpdated).",
    params(
        ("id" = String, Path),
    ),
    request_body = UpdateTeam,
    responses(
        (status = 200, description = "Team.", body = TeamView),
        (status = 409, description = "The name is taken (conflict).", body = super::error::ErrorBody),
    )
)]
pub async fn update(
    State(state): State<AppState>,
    access: Access,
    Id(id, _): Id<ids::Team>,
    body: Body,
) -> Result<Json<TeamView>, ApiError> {
    let req: UpdateTeam = read_json(body).await?;
    let ctx = context(&access, req.reason)?;
    let changes = TeamChanges {
        name: req.name,
        description: req.description,
        namespaces: req.namespaces,
    };
    Ok(Json(
        teams::update(&state.store, state.now(), ctx, id, changes).await?,
    ))
}

/// `PUT /v1/admin/teams/{id}/members`: `TeamUpdated`; allowed to the team's team-admins.
#[utoipa::path(
    put,
    path = "/v1/admin/teams/{id}/members",
    summary = "Replace a team's members (TeamUpdated; actor.teams names the team when a team-admin did it).",
    params(
        ("id" = String, Path),
    ),
    request_body = SetMembers,
    responses(
        (status = 200, description = "Team.", body = TeamView),
    )
)]
pub async fn set_members(
    State(state): State<AppState>,
    access: Access,
    Id(id, _): Id<ids::Team>,
    body: Body,
) -> Result<Json<TeamView>, ApiError> {
    let req: SetMembers = read_json(body).await?;
    let naming = match access.via {
        Via::Teams(_) => MemberNaming::NewByUsername,
        _ => MemberNaming::Any,
    };
    let ctx = context(&access, req.reason)?;
    let (store, now) = (&state.store, state.now());
    Ok(Json(
        teams::set_members(store, now, ctx, id, req.members, naming).await?,
    ))
}

/// `DELETE /v1/admin/teams/{id}?reason=`: `TeamDeleted` (its team tokens go with it).
#[utoipa::path(
    delete,
    path = "/v1/admin/teams/{id}",
    summary = "Delete a team with its memberships and team tokens (TeamDeleted).",
    params(
        ("id" = String, Path),
        ("reason" = Option<String>, Query, max_length = 1024, description = "Why (recorded in the audit)"),
    ),
    responses(
        (status = 204, description = "Deleted."),
    )
)]
pub async fn delete(
    State(state): State<AppState>,
    access: Access,
    Id(id, _): Id<ids::Team>,
    Query(q): Query<ReasonQuery>,
) -> Result<StatusCode, ApiError> {
    let ctx = context(&access, q.reason)?;
    teams::delete(&state.store, state.now(), ctx, id).await?;
    Ok(StatusCode::NO_CONTENT)
}
