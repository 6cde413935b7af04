//! `/v1/admin/tokens`: API tokens with a fleet role or a team role. The value is shown
//! once, at creation; only its SHA-256 is kept. Revocation is immediate.

use axum::body::Body;
use axum::extract::State;
use axum::http::header::CACHE_CONTROL;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};

use super::access::Access;
use super::body::read_json;
use super::config_audit::context;
use super::error::ApiError;
use super::ids::{self, Id};
use super::lists::Items;
use super::query::params::ReasonQuery;
use super::query::Query;
use super::state::AppState;
pub use crate::auth::accounts::TokenView;
use crate::auth::accounts::{self, CreatedToken, NewTokenInput};

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CreateToken {
    name: String,
    role: String,
    team: Option<String>,
    expires_at: Option<String>,
    reason: Option<String>,
}

/// `GET /v1/admin/tokens`.
#[utoipa::path(
    get,
    path = "/v1/admin/tokens",
    summary = "List API tokens (never their values).",
    responses(
        (status = 200, description = "Every API token (never their values).", body = Items<TokenView>),
    )
)]
pub async fn list(State(state): State<AppState>) -> Result<Json<Items<TokenView>>, ApiError> {
    Ok(Json(Items::new(accounts::list_tokens(&state.store).await?)))
}

/// `POST /v1/admin/tokens`: `TokenCreated`; the response holds the value, once.
#[utoipa::path(
    post,
    path = "/v1/admin/tokens",
    summary = "Create an API token (TokenCreated); the value is returned once.",
    request_body = CreateToken,
    responses(
        (status = 201, description = "The token and its value (shown once; not cached).", body = CreatedToken),
    )
)]
pub async fn create(
    State(state): State<AppState>,
    access: Access,
    body: Body,
) -> Result<Response, ApiError> {
    let req: CreateToken = read_json(body).await?;
    let expires_at = match &req.expires_at {
        None => None,
        Some(s) => Some(crate::timestamp::parse_ms(s).ok_or_else(|| {
            ApiError::invalid_field("expiresAt", "must be an RFC 3339 time in the future")
        })?),
    };
    let ctx = context(&access, req.reason)?;
    let input = NewTokenInput {
        name: req.name,
        role: req.role,
        team: req.team,
        expires_at,
    };
    let made = accounts::create_token(&state.store, state.now(), ctx, input).await?;
    let mut resp = (StatusCode::CREATED, Json(made)).into_response();
    resp.headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(resp)
}

/// `DELETE /v1/admin/tokens/{id}?reason=`: `TokenRevoked`.
#[utoipa::path(
    delete,
    path = "/v1/admin/tokens/{id}",
    summary = "Revoke a token (TokenRevoked).",
    params(
        ("id" = String, Path),
        ("reason" = Option<String>, Query, max_length = 1024, description = "Why (recorded in the audit)"),
    ),
    responses(
        (status = 200, description = "The revoked Token.", body = TokenView),
        (status = 409, description = "An error.", body = super::error::ErrorBody),
    )
)]
pub async fn revoke(
    State(state): State<AppState>,
    access: Access,
    Id(id, _): Id<ids::Token>,
    Query(q): Query<ReasonQuery>,
) -> Result<Json<TokenView>, ApiError> {
    let ctx = context(&access, q.reason)?;
    Ok(Json(
        accounts::revoke_token(&state.store, state.now(), ctx, id).await?,
    ))
}
