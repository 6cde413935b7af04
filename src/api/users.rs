//! `/v1/admin/users`: local users (create with a one-time or given password, update,
//! delete, password reset). Every change is one audited transaction; representations
//! never carry a password or hash.

use axum::body::Body;
use axum::extract::State;
use axum::http::header::CACHE_CONTROL;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::{Deserialize, Serialize};

use super::access::Access;
use super::body::double_option;
use super::body::{read_json, read_json_nullable};
use super::config_audit::context;
use super::error::ApiError;
use super::ids::{self, Id};
use super::lists::Items;
use super::query::params::ReasonQuery;
use super::query::Query;
use super::state::AppState;
pub use crate::auth::accounts::UserView;
use crate::auth::accounts::{self, NewUserInput, UserChanges, WithPassword};

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CreateUser {
    username: String,
    #[serde(default)]
    display_name: String,
    role: Option<String>,
    password: Option<String>,
    reason: Option<String>,
}

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct UpdateUser {
    display_name: Option<String>,
    #[serde(default, deserialize_with = "double_option")]
    role: Option<Option<String>>,
    disabled: Option<bool>,
    reason: Option<String>,
}

#[derive(Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ResetPassword {
    password: Option<String>,
    reason: Option<String>,
}

/// The answer carrying a one-time password, never cached.
fn with_secret(status: StatusCode, made: WithPassword) -> Response {
    let mut resp = (status, Json(made)).into_response();
    resp.headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

/// `GET /v1/admin/users`.
#[utoipa::path(
    get,
    path = "/v1/admin/users",
    summary = "List users.",
    responses(
        (status = 200, description = "Every user.", body = Items<UserView>),
    )
)]
pub async fn list(State(state): State<AppState>) -> Result<Json<Items<UserView>>, ApiError> {
    Ok(Json(Items::new(accounts::list_users(&state.store).await?)))
}

/// `GET /v1/admin/users/{id}`.
#[utoipa::path(
    get,
    path = "/v1/admin/users/{id}",
    summary = "One user.",
    params(
        ("id" = String, Path),
    ),
    responses(
        (status = 200, description = "User.", body = UserView),
    )
)]
pub async fn get(
    State(state): State<AppState>,
    Id(id, _): Id<ids::User>,
) -> Result<Json<UserView>, ApiError> {
    Ok(Json(accounts::get_user(&state.store, id).await?))
}

/// `POST /v1/admin/users`: `UserCreated`.
#[utoipa::path(
    post,
    path = "/v1/admin/users",
    summary = "Create a user (UserCreated).",
    request_body = CreateUser,
    responses(
        (status = 201, description = "The user, and the one-time password when none was given (not cached).", body = WithPassword),
        (status = 409, description = "The name is taken (conflict).", body = super::error::ErrorBody),
    )
)]
pub async fn create(
    State(state): State<AppState>,
    access: Access,
    body: Body,
) -> Result<Response, ApiError> {
    // `role: null` is documented: no fleet role.
    let req: CreateUser = read_json_nullable(body, &["role"]).await?;
    let ctx = context(&access, req.reason)?;
    let input = NewUserInput {
        username: req.username,
        display_name: req.display_name,
        role: req.role,
        password: req.password,
    };
    let made = accounts::create_user(&state.store, &state.auth, state.now(), ctx, input).await?;
    Ok(with_secret(StatusCode::CREATED, made))
}

/// `PATCH /v1/admin/users/{id}`: `UserUpdated`.
#[utoipa::path(
    patch,
    path = "/v1/admin/users/{id}",
    summary = "Change a user (UserUpdated).",
    params(
        ("id" = String, Path),
    ),
    request_body = UpdateUser,
    responses(
        (status = 200, description = "User.", body = UserView),
        (status = 409, description = "An error.", body = super::error::ErrorBody),
    )
)]
pub async fn update(
    State(state): State<AppState>,
    access: Access,
    Id(id, _): Id<ids::User>,
    body: Body,
) -> Result<Json<UserView>, ApiError> {
    // `role: null` is documented: clears the fleet role.
    let req: UpdateUser = read_json_nullable(body, &["role"]).await?;
    let ctx = context(&access, req.reason)?;
    let changes = UserChanges {
        display_name: req.display_name,
        role: req.role,
        disabled: req.disabled,
    };
    let user = accounts::update_user(&state.store, state.now(), ctx, id, changes).await?;
    Ok(Json(user))
}

/// `DELETE /v1/admin/users/{id}?reason=`: `UserDeleted`.
#[utoipa::path(
    delete,
    path = "/v1/admin/users/{id}",
    summary = "Delete a user (UserDeleted).",
    params(
        ("id" = String, Path),
        ("reason" = Option<String>, Query, max_length = 1024, description = "Why (recorded in the audit)"),
    ),
    responses(
        (status = 204, description = "Deleted."),
        (status = 409, description = "An error.", body = super::error::ErrorBody),
    )
)]
pub async fn delete(
    State(state): State<AppState>,
    access: Access,
    Id(id, _): Id<ids::User>,
    Query(q): Query<ReasonQuery>,
) -> Result<StatusCode, ApiError> {
    let ctx = context(&access, q.reason)?;
    accounts::delete_user(&state.store, state.now(), ctx, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /v1/admin/users/{id}/password-reset`: `PasswordReset`; ends the user's sessions.
#[utoipa::path(
    post,
    path = "/v1/admin/users/{id}/password-reset",
    summary = "Set a new password (PasswordReset); ends the user's sessions.",
    params(
        ("id" = String, Path),
    ),
    request_body = ResetPassword,
    responses(
        (status = 200, description = "The user, and the one-time password when none was given (not cached).", body = WithPassword),
    )
)]
pub async fn password_reset(
    State(state): State<AppState>,
    access: Access,
    Id(id, _): Id<ids::User>,
    body: Body,
) -> Result<Response, ApiError> {
    let req: ResetPassword = read_json(body).await?;
    let ctx = context(&access, req.reason)?;
    let now = state.now();
    let made =
        accounts::reset_password(&state.store, &state.auth, now, ctx, id, req.password).await?;
    Ok(with_secret(StatusCode::OK, made))
}
