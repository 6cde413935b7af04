//! `/v1/admin/users`: local users (create with a one-time or given password, update,
//! delete, password reset). Every change is one audited transaction; representations
//! never carry a password or hash.

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
use super::routes::{double_option, parse_id};
use super::AppState;
use crate::auth::password;
use crate::events::config_change::rfc3339_ms as rfc3339;
use crate::events::config_change::{action, Change};
use crate::store::{users, StoreError, UserPatch, UserRecord};

/// The API representation of a user (also `before`/`after` in the audit).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UserView {
    pub id: String,
    pub username: String,
    pub display_name: String,
    pub role: Option<String>,
    pub disabled: bool,
    pub created_at: String,
    pub updated_at: String,
    pub password_changed_at: String,
}

impl From<&UserRecord> for UserView {
    fn from(u: &UserRecord) -> Self {
        UserView {
            id: u.id.to_string(),
            username: u.username.clone(),
            display_name: u.display_name.clone(),
            role: u.role.clone(),
            disabled: u.disabled,
            created_at: rfc3339(u.created_at),
            updated_at: rfc3339(u.updated_at),
            password_changed_at: rfc3339(u.password_changed_at),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CreateUser {
    username: String,
    #[serde(default)]
    display_name: String,
    role: Option<String>,
    password: Option<String>,
    reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct UpdateUser {
    display_name: Option<String>,
    #[serde(default, deserialize_with = "double_option")]
    role: Option<Option<String>>,
    disabled: Option<bool>,
    reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResetPassword {
    password: Option<String>,
    reason: Option<String>,
}

/// Usernames: 1-64 of letters, digits, `.`, `_`, `-`, `@`.
pub fn validate_username(name: &str) -> Result<(), ApiError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'@'));
    if ok {
        Ok(())
    } else {
        Err(ApiError::invalid_field(
            "username",
            "must be 1 to 64 letters, digits, '.', '_', '-' or '@'",
        ))
    }
}

fn validate_role(role: &Option<String>) -> Result<(), ApiError> {
    match role.as_deref() {
        None | Some("admin" | "editor" | "viewer") => Ok(()),
        Some(_) => Err(ApiError::invalid_field(
            "role",
            "must be admin, editor, viewer or null",
        )),
    }
}

fn validate_display_name(name: &str) -> Result<(), ApiError> {
    if name.chars().count() > 200 {
        return Err(ApiError::invalid_field(
            "displayName",
            "must be at most 200 characters",
        ));
    }
    Ok(())
}

/// The password to set: the given one (checked against the policy) or a generated
/// one-time password (returned once). Hashed under the login concurrency bound.
async fn new_password(
    state: &AppState,
    given: Option<String>,
    username: &str,
) -> Result<(String, Option<String>), ApiError> {
    let (plain, reveal) = match given {
        Some(p) => {
            password::check_policy(&p, username)
                .map_err(|e| ApiError::invalid_field("password", e))?;
            (p, false)
        }
        None => (password::generate(), true),
    };
    let for_hash = plain.clone();
    let phc = state
        .auth
        .bounded(move |h| h.hash(&for_hash))
        .await
        .map_err(ApiError::internal)?
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "busy",
                "password hashing is busy; retry",
            )
        })?
        .map_err(ApiError::internal)?;
    Ok((phc, reveal.then_some(plain)))
}

fn with_secret(status: StatusCode, mut body: Value, one_time: Option<String>) -> Response {
    if let Some(p) = one_time {
        body["oneTimePassword"] = Value::String(p);
    }
    let mut resp = (status, Json(body)).into_response();
    resp.headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

/// Refuses a change that leaves no enabled admin user when there was one.
fn keep_an_admin(tx: &rusqlite::Connection, before: i64) -> Result<(), StoreError> {
    if before > 0 && users::count_enabled_admins(tx)? == 0 {
        return Err(StoreError::Refused(
            "this change would leave no enabled admin user".into(),
        ));
    }
    Ok(())
}

/// `GET /v1/admin/users`.
pub async fn list(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    let users = state.store.list_users().await?;
    let items: Vec<UserView> = users.iter().map(UserView::from).collect();
    Ok(Json(json!({ "items": items })))
}

/// `GET /v1/admin/users/{id}`.
pub async fn get(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let id = parse_id("user", &id)?;
    let user = state
        .store
        .get_user(id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("user {id} does not exist")))?;
    Ok(Json(json!(UserView::from(&user))))
}

/// `POST /v1/admin/users`: `UserCreated`.
pub async fn create(
    State(state): State<AppState>,
    access: Access,
    body: Body,
) -> Result<Response, ApiError> {
    let now = state.now();
    let req: CreateUser = read_json(body).await?;
    validate_username(&req.username)?;
    validate_role(&req.role)?;
    validate_display_name(&req.display_name)?;
    let ctx = context(&access, req.reason)?;
    let (phc, one_time) = new_password(&state, req.password, &req.username).await?;
    let user = state
        .store
        .write_audited(ctx, now, move |tx| {
            let u = users::insert_user(
                tx,
                &users::NewUser {
                    username: &req.username,
                    display_name: &req.display_name,
                    role: req.role.as_deref(),
                    password_hash: &phc,
                },
                now,
            )?;
            let change = Change::new(action::USER_CREATED, "user", u.id, Some(&u.username))
                .after(UserView::from(&u));
            Ok((u, change))
        })
        .await?;
    Ok(with_secret(
        StatusCode::CREATED,
        json!({ "user": UserView::from(&user) }),
        one_time,
    ))
}

/// `PATCH /v1/admin/users/{id}`: `UserUpdated`.
pub async fn update(
    State(state): State<AppState>,
    access: Access,
    Path(id): Path<String>,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let now = state.now();
    let id = parse_id("user", &id)?;
    let req: UpdateUser = read_json(body).await?;
    if let Some(role) = &req.role {
        validate_role(role)?;
    }
    if let Some(n) = &req.display_name {
        validate_display_name(n)?;
    }
    let ctx = context(&access, req.reason)?;
    let patch = UserPatch {
        display_name: req.display_name,
        role: req.role,
        disabled: req.disabled,
    };
    let user = state
        .store
        .write_audited(ctx, now, move |tx| {
            let before = users::require_user(tx, id)?;
            let admins = users::count_enabled_admins(tx)?;
            users::update_user(tx, id, &patch, now)?;
            keep_an_admin(tx, admins)?;
            let after = users::require_user(tx, id)?;
            let change = Change::new(action::USER_UPDATED, "user", id, Some(&after.username))
                .before(UserView::from(&before))
                .after(UserView::from(&after));
            Ok((after, change))
        })
        .await?;
    Ok(Json(json!(UserView::from(&user))))
}

/// `DELETE /v1/admin/users/{id}?reason=`: `UserDeleted`.
pub async fn delete(
    State(state): State<AppState>,
    access: Access,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<StatusCode, ApiError> {
    let now = state.now();
    let id = parse_id("user", &id)?;
    let ctx = context(&access, reason_query(query.as_deref())?)?;
    state
        .store
        .write_audited(ctx, now, move |tx| {
            let before = users::require_user(tx, id)?;
            let admins = users::count_enabled_admins(tx)?;
            users::delete_user(tx, id)?;
            keep_an_admin(tx, admins)?;
            let change = Change::new(action::USER_DELETED, "user", id, Some(&before.username))
                .before(UserView::from(&before));
            Ok(((), change))
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /v1/admin/users/{id}/password-reset`: `PasswordReset`; ends the user's sessions.
pub async fn password_reset(
    State(state): State<AppState>,
    access: Access,
    Path(id): Path<String>,
    body: Body,
) -> Result<Response, ApiError> {
    let now = state.now();
    let id = parse_id("user", &id)?;
    let req: ResetPassword = read_json(body).await?;
    let ctx = context(&access, req.reason)?;
    let user = state
        .store
        .get_user(id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("user {id} does not exist")))?;
    let (phc, one_time) = new_password(&state, req.password, &user.username).await?;
    let after = state
        .store
        .write_audited(ctx, now, move |tx| {
            let before = users::require_user(tx, id)?;
            users::set_password(tx, id, &phc, now)?;
            let after = users::require_user(tx, id)?;
            let change = Change::new(action::PASSWORD_RESET, "user", id, Some(&after.username))
                .before(UserView::from(&before))
                .after(UserView::from(&after));
            Ok((after, change))
        })
        .await?;
    Ok(with_secret(
        StatusCode::OK,
        json!({ "user": UserView::from(&after) }),
        one_time,
    ))
}
