//! `/v1/admin/tokens`: API tokens with a fleet role or a team role. The value is shown
//! once, at creation; only its SHA-256 is kept. Revocation is immediate.

use axum::body::Body;
use axum::extract::{Path, RawQuery, State};
use axum::http::header::CACHE_CONTROL;
use axum::http::{HeaderValue, StatusCode};
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
use crate::auth::{token, FleetRole, TeamRole};
use crate::events::config_change::rfc3339_ms as rfc3339;
use crate::events::config_change::{action, Change};
use crate::store::{teams, tokens, ApiTokenRecord, NewApiToken, StoreError};

/// The API representation of a token (never its value or hash).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenView {
    pub id: String,
    pub name: String,
    pub role: String,
    pub team: Option<Value>,
    pub created_by: Option<String>,
    pub created_at: String,
    pub expires_at: Option<String>,
    pub last_used_at: Option<String>,
    pub revoked_at: Option<String>,
}

impl From<&ApiTokenRecord> for TokenView {
    fn from(t: &ApiTokenRecord) -> Self {
        TokenView {
            id: t.id.to_string(),
            name: t.name.clone(),
            role: t.role.clone(),
            team: t
                .team_id
                .map(|id| json!({ "id": id.to_string(), "name": t.team_name })),
            created_by: t.created_by.clone(),
            created_at: rfc3339(t.created_at),
            expires_at: t.expires_at.map(rfc3339),
            last_used_at: t.last_used_at.map(rfc3339),
            revoked_at: t.revoked_at.map(rfc3339),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CreateToken {
    name: String,
    role: String,
    team: Option<String>,
    expires_at: Option<String>,
    reason: Option<String>,
}

/// `GET /v1/admin/tokens`.
pub async fn list(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    let items: Vec<TokenView> = state
        .store
        .list_tokens()
        .await?
        .iter()
        .map(TokenView::from)
        .collect();
    Ok(Json(json!({ "items": items })))
}

/// `POST /v1/admin/tokens`: `TokenCreated`; the response holds the value, once.
pub async fn create(
    State(state): State<AppState>,
    access: Access,
    body: Body,
) -> Result<Response, ApiError> {
    let req: CreateToken = read_json(body).await?;
    let name = req.name.trim().to_string();
    if name.is_empty() || name.chars().count() > 100 {
        return Err(ApiError::invalid_field(
            "name",
            "must be 1 to 100 characters",
        ));
    }
    let team_id =
        match (
            FleetRole::parse(&req.role),
            TeamRole::parse(&req.role),
            &req.team,
        ) {
            (Some(_), _, None) => None,
            (None, Some(_), Some(team)) => Some(parse_id("team", team).map_err(|_| {
                ApiError::invalid_field("team", "must be the id of an existing team")
            })?),
            (Some(_), _, Some(_)) => {
                return Err(ApiError::invalid_field(
                    "team",
                    "only team roles name a team",
                ))
            }
            (None, Some(_), None) => {
                return Err(ApiError::invalid_field(
                    "team",
                    "team roles need the team's id",
                ))
            }
            (None, None, _) => {
                return Err(ApiError::invalid_field(
                    "role",
                    "must be admin, editor, viewer, team-admin, team-editor or team-viewer",
                ))
            }
        };
    let now = state.now();
    let expires_at = match &req.expires_at {
        None => None,
        Some(s) => Some(
            crate::timestamp::parse_ms(s)
                .filter(|t| *t > now)
                .ok_or_else(|| {
                    ApiError::invalid_field("expiresAt", "must be an RFC 3339 time in the future")
                })?,
        ),
    };
    let ctx = context(&access, req.reason)?;
    let created_by = format!("{} {}", ctx.actor_kind_str(), ctx.actor.name);
    let value = token::generate(token::API_TOKEN_PREFIX);
    let digest = token::hash(&value);
    let role = req.role;
    let record = state
        .store
        .write_audited(ctx, now, move |tx| {
            if let Some(team) = team_id {
                teams::require_team(tx, team)
                    .map_err(|_| StoreError::NotFound(format!("team {team}")))?;
            }
            let t = tokens::insert_token(
                tx,
                &NewApiToken {
                    name: &name,
                    role: &role,
                    team_id,
                    created_by: Some(&created_by),
                    token_sha256: &digest,
                    expires_at,
                },
                now,
            )?;
            let change = Change::new(action::TOKEN_CREATED, "token", t.id, Some(&t.name))
                .after(TokenView::from(&t));
            Ok((t, change))
        })
        .await?;
    let mut resp = (
        StatusCode::CREATED,
        Json(json!({ "token": TokenView::from(&record), "value": value })),
    )
        .into_response();
    resp.headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(resp)
}

/// `DELETE /v1/admin/tokens/{id}?reason=`: `TokenRevoked`.
pub async fn revoke(
    State(state): State<AppState>,
    access: Access,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Json<Value>, ApiError> {
    let now = state.now();
    let id = parse_id("token", &id)?;
    let ctx = context(&access, reason_query(query.as_deref())?)?;
    let after = state
        .store
        .write_audited(ctx, now, move |tx| {
            let before = tokens::require_token(tx, id)?;
            if before.revoked_at.is_some() {
                return Err(StoreError::Refused(format!(
                    "token {id} is already revoked"
                )));
            }
            tokens::revoke_token(tx, id, now)?;
            let after = tokens::require_token(tx, id)?;
            let change = Change::new(action::TOKEN_REVOKED, "token", id, Some(&after.name))
                .before(TokenView::from(&before))
                .after(TokenView::from(&after));
            Ok((after, change))
        })
        .await?;
    Ok(Json(json!(TokenView::from(&after))))
}
