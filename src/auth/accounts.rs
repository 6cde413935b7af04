//! Local users and API tokens as operations: create, update, delete, reset a password,
//! create and revoke a token. One set of rules (names, roles, password policy) for the
//! API and the command line; each change is one audited transaction. Representations
//! never carry a password, a hash or a token value; values are returned once.

use serde::Serialize;
use serde_json::{json, Value};

use super::{password, token, Authenticator, FleetRole, TeamRole};
use crate::events::config_change::{action, AuditContext, Change};
use crate::operation::OpError;
use crate::store::{
    ApiTokenRecord, NewApiToken, NewUser, Store, StoreError, UserPatch, UserRecord,
};
use crate::timestamp::format_ms;

/// The API representation of a user (also `before`/`after` in the audit).
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
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
    /// `password` (a local account) or `sso` (made by, and signing in through, the
    /// identity provider: its groups decide its roles at each sign-in).
    pub signs_in_with: &'static str,
}

impl From<&UserRecord> for UserView {
    fn from(u: &UserRecord) -> Self {
        UserView {
            id: u.id.to_string(),
            username: u.username.clone(),
            display_name: u.display_name.clone(),
            role: u.role.clone(),
            disabled: u.disabled,
            created_at: format_ms(u.created_at),
            updated_at: format_ms(u.updated_at),
            password_changed_at: format_ms(u.password_changed_at),
            signs_in_with: if u.subject.is_some() {
                "sso"
            } else {
                "password"
            },
        }
    }
}

/// The API representation of a token (never its value or hash).
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TokenView {
    pub id: String,
    pub name: String,
    pub role: String,
    /// `{id, name}` of the team of a team role.
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
            created_at: format_ms(t.created_at),
            expires_at: t.expires_at.map(format_ms),
            last_used_at: t.last_used_at.map(format_ms),
            revoked_at: t.revoked_at.map(format_ms),
        }
    }
}

/// A new user: a given password is checked against the policy; without one a one-time
/// password is generated and returned once.
#[derive(Debug, Clone, Default)]
pub struct NewUserInput {
    pub username: String,
    pub display_name: String,
    pub role: Option<String>,
    pub password: Option<String>,
}

/// A user with the password made for them, when kerf made it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WithPassword {
    pub user: UserView,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub one_time_password: Option<String>,
}

/// Changes to a user; `None` keeps a field, `role: Some(None)` clears the fleet role.
#[derive(Debug, Clone, Default)]
pub struct UserChanges {
    pub display_name: Option<String>,
    pub role: Option<Option<String>>,
    pub disabled: Option<bool>,
}

/// A new API token: a fleet role, or a team role with the team's id.
#[derive(Debug, Clone, Default)]
pub struct NewTokenInput {
    pub name: String,
    pub role: String,
    pub team: Option<String>,
    pub expires_at: Option<i64>,
}

/// A created token and its value, shown once.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct CreatedToken {
    pub token: TokenView,
    pub value: String,
}

fn check_role(role: Option<&str>) -> Result<(), OpError> {
    match role {
        None => Ok(()),
        Some(r) if FleetRole::parse(r).is_some() => Ok(()),
        Some(_) => Err(OpError::invalid(
            "role",
            "must be admin, editor, viewer or null",
        )),
    }
}

fn check_display_name(name: &str) -> Result<(), OpError> {
    crate::names::display(name, 200).map_err(|e| OpError::invalid("displayName", e))
}

/// The hash of the password to set (the given one, checked, or a generated one) and the
/// generated one to reveal. Hashing runs under the login concurrency bound.
async fn hash_password(
    auth: &Authenticator,
    given: Option<String>,
    username: &str,
) -> Result<(String, Option<String>), OpError> {
    let (plain, reveal) = match given {
        Some(p) => {
            password::check_policy(&p, username).map_err(|e| OpError::invalid("password", e))?;
            (p, false)
        }
        None => (password::generate(), true),
    };
    let for_hash = plain.clone();
    let phc = auth
        .bounded(move |h| h.hash(&for_hash))
        .await
        .map_err(OpError::internal)?
        .ok_or_else(|| OpError::Busy("password hashing is busy; retry".into()))?
        .map_err(OpError::internal)?;
    Ok((phc, reveal.then_some(plain)))
}

/// Refuses a change that leaves no enabled admin user when there was one.
fn keep_an_admin(before: i64, after: i64) -> Result<(), StoreError> {
    if before > 0 && after == 0 {
        return Err(StoreError::Refused(
            "this change would leave no enabled admin user".into(),
        ));
    }
    Ok(())
}

/// Every user.
pub async fn list_users(store: &Store) -> Result<Vec<UserView>, OpError> {
    Ok(store
        .reading(|r| r.list_users())
        .await?
        .iter()
        .map(UserView::from)
        .collect())
}

/// User `id`.
pub async fn get_user(store: &Store, id: i64) -> Result<UserView, OpError> {
    store
        .reading(move |r| r.get_user(id))
        .await?
        .map(|u| UserView::from(&u))
        .ok_or_else(|| OpError::NotFound(format!("user {id} does not exist")))
}

/// `UserCreated`.
pub async fn create_user(
    store: &Store,
    auth: &Authenticator,
    now: i64,
    ctx: AuditContext,
    input: NewUserInput,
) -> Result<WithPassword, OpError> {
    crate::names::user(&input.username).map_err(|e| OpError::invalid("username", e))?;
    check_role(input.role.as_deref())?;
    check_display_name(&input.display_name)?;
    let (phc, one_time) = hash_password(auth, input.password, &input.username).await?;
    let user = store
        .write_audited(ctx, now, move |tx| {
            let new = NewUser {
                username: &input.username,
                display_name: &input.display_name,
                role: input.role.as_deref(),
                password_hash: &phc,
            };
            let u = UserView::from(&tx.insert_user(&new, now)?);
            let change =
                Change::new(action::USER_CREATED, "user", &u.id, Some(&u.username)).after(&u);
            Ok((u, change))
        })
        .await?;
    Ok(WithPassword {
        user,
        one_time_password: one_time,
    })
}

/// `UserUpdated`; refused when it would leave no enabled admin.
pub async fn update_user(
    store: &Store,
    now: i64,
    ctx: AuditContext,
    id: i64,
    changes: UserChanges,
) -> Result<UserView, OpError> {
    if let Some(role) = &changes.role {
        check_role(role.as_deref())?;
    }
    if let Some(n) = &changes.display_name {
        check_display_name(n)?;
    }
    let patch = UserPatch {
        display_name: changes.display_name,
        role: changes.role,
        disabled: changes.disabled,
    };
    Ok(store
        .write_audited(ctx, now, move |tx| {
            let before = UserView::from(&tx.require_user(id)?);
            let admins = tx.count_enabled_admins()?;
            tx.update_user(id, &patch, now)?;
            keep_an_admin(admins, tx.count_enabled_admins()?)?;
            let after = UserView::from(&tx.require_user(id)?);
            let change = Change::new(action::USER_UPDATED, "user", id, Some(&after.username))
                .before(before)
                .after(&after);
            Ok((after, change))
        })
        .await?)
}

/// `UserDeleted`; refused when it would leave no enabled admin.
pub async fn delete_user(
    store: &Store,
    now: i64,
    ctx: AuditContext,
    id: i64,
) -> Result<(), OpError> {
    Ok(store
        .write_audited(ctx, now, move |tx| {
            let before = UserView::from(&tx.require_user(id)?);
            let admins = tx.count_enabled_admins()?;
            tx.delete_user(id)?;
            keep_an_admin(admins, tx.count_enabled_admins()?)?;
            let change = Change::new(action::USER_DELETED, "user", id, Some(&before.username))
                .before(before);
            Ok(((), change))
        })
        .await?)
}

/// `PasswordReset` (a given password, checked, or a one-time one); ends no session by
/// itself: the store's password change does.
pub async fn reset_password(
    store: &Store,
    auth: &Authenticator,
    now: i64,
    ctx: AuditContext,
    id: i64,
    password: Option<String>,
) -> Result<WithPassword, OpError> {
    let user = get_user(store, id).await?;
    if user.signs_in_with == "sso" {
        return Err(StoreError::Refused(format!(
            "{} signs in through the identity provider, which holds their password",
            user.username
        ))
        .into());
    }
    let (phc, one_time) = hash_password(auth, password, &user.username).await?;
    let user = store
        .write_audited(ctx, now, move |tx| {
            let before = UserView::from(&tx.require_user(id)?);
            tx.set_password(id, &phc, now)?;
            let after = UserView::from(&tx.require_user(id)?);
            let change = Change::new(action::PASSWORD_RESET, "user", id, Some(&after.username))
                .before(before)
                .after(&after);
            Ok((after, change))
        })
        .await?;
    Ok(WithPassword {
        user,
        one_time_password: one_time,
    })
}

/// Every token (never their values).
pub async fn list_tokens(store: &Store) -> Result<Vec<TokenView>, OpError> {
    Ok(store
        .reading(|r| r.list_tokens())
        .await?
        .iter()
        .map(TokenView::from)
        .collect())
}

/// The team id a token role needs: none for a fleet role, an existing team's id for a
/// team role.
fn token_team(role: &str, team: Option<&str>) -> Result<Option<i64>, OpError> {
    match (FleetRole::parse(role), TeamRole::parse(role), team) {
        (Some(_), _, None) => Ok(None),
        (None, Some(_), Some(team)) => team
            .parse::<i64>()
            .ok()
            .filter(|n| *n > 0)
            .map(Some)
            .ok_or_else(|| OpError::invalid("team", "must be the id of an existing team")),
        (Some(_), _, Some(_)) => Err(OpError::invalid("team", "only team roles name a team")),
        (None, Some(_), None) => Err(OpError::invalid("team", "team roles need the team's id")),
        (None, None, _) => Err(OpError::invalid(
            "role",
            "must be admin, editor, viewer, team-admin, team-editor or team-viewer",
        )),
    }
}

/// `TokenCreated`; the value is returned once and only its hash is kept.
pub async fn create_token(
    store: &Store,
    now: i64,
    ctx: AuditContext,
    input: NewTokenInput,
) -> Result<CreatedToken, OpError> {
    crate::names::token(&input.name).map_err(|e| OpError::invalid("name", e))?;
    let team_id = token_team(&input.role, input.team.as_deref())?;
    if input.expires_at.is_some_and(|t| t <= now) {
        return Err(OpError::invalid(
            "expiresAt",
            "must be an RFC 3339 time in the future",
        ));
    }
    let created_by = format!("{} {}", ctx.actor_kind_str(), ctx.actor.name);
    let value = token::generate(token::API_TOKEN_PREFIX);
    let digest = token::hash(&value);
    let name = input.name.trim().to_string();
    let token = store
        .write_audited(ctx, now, move |tx| {
            if let Some(team) = team_id {
                tx.require_team(team)
                    .map_err(|_| StoreError::NotFound(format!("team {team}")))?;
            }
            let new = NewApiToken {
                name: &name,
                role: &input.role,
                team_id,
                created_by: Some(&created_by),
                token_sha256: &digest,
                expires_at: input.expires_at,
            };
            let t = TokenView::from(&tx.insert_token(&new, now)?);
            let change =
                Change::new(action::TOKEN_CREATED, "token", &t.id, Some(&t.name)).after(&t);
            Ok((t, change))
        })
        .await?;
    Ok(CreatedToken { token, value })
}

/// `TokenRevoked`; effective at once.
pub async fn revoke_token(
    store: &Store,
    now: i64,
    ctx: AuditContext,
    id: i64,
) -> Result<TokenView, OpError> {
    Ok(store
        .write_audited(ctx, now, move |tx| {
            let before = tx.require_token(id)?;
            if before.revoked_at.is_some() {
                return Err(StoreError::Refused(format!(
                    "token {id} is already revoked"
                )));
            }
            tx.revoke_token(id, now)?;
            let after = TokenView::from(&tx.require_token(id)?);
            let change = Change::new(action::TOKEN_REVOKED, "token", id, Some(&after.name))
                .before(TokenView::from(&before))
                .after(&after);
            Ok((after, change))
        })
        .await?)
}
