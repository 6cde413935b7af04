//! The kerf user behind a provider sign-in: found by the provider's subject, created
//! just in time on the first sign-in (audited `UserCreated` by `system`, naming the
//! provider), and given what the mapped groups give at every sign-in and re-check
//! (audited `UserUpdated` when that changes). A local account with the same username
//! is never taken over.

use serde_json::{json, Value};

use super::mapping::{Access, Identity};
use super::SsoError;
use crate::auth::accounts::UserView;
use crate::events::config_change::{action, AuditContext, Change};
use crate::store::{Read, Store, StoreError, UserRecord};
use crate::wire::Actor;

/// Who signs the provider's changes in the audit.
fn actor(provider: &str) -> AuditContext {
    AuditContext {
        actor: Actor::system(&format!("single sign-on ({provider})")),
        reason: None,
    }
}

/// The user `identity` signs in as, with `access` applied; refused when kerf disabled
/// them or a local account holds the username.
pub async fn sign_in(
    store: &Store,
    now: i64,
    provider: &str,
    identity: &Identity,
    access: &Access,
) -> Result<UserRecord, SsoError> {
    let subject = identity.subject.clone();
    let found = store
        .reading(move |r| r.user_by_subject(&subject))
        .await
        .map_err(SsoError::Store)?;
    let Some(user) = found else {
        // Made with what the groups give: nothing to apply.
        return create(store, now, provider, identity, access).await;
    };
    if user.disabled {
        return Err(SsoError::Disabled);
    }
    apply(store, now, provider, &user, identity, access).await
}

async fn create(
    store: &Store,
    now: i64,
    provider: &str,
    identity: &Identity,
    access: &Access,
) -> Result<UserRecord, SsoError> {
    crate::names::user(&identity.username)
        .map_err(|e| SsoError::MissingClaim(format!("the username {:?} {e}", identity.username)))?;
    let (id, access) = (identity.clone(), access.clone());
    let created = store
        .write_audited(actor(provider), now, move |tx| {
            if tx.user_by_name(&id.username)?.is_some() {
                return Err(StoreError::Conflict(id.username.clone()));
            }
            let u = tx.insert_sso_user(&id.username, &id.display_name, &id.subject, now)?;
            let (role, teams) = wanted(&access);
            tx.set_sso_access(u.id, &id.display_name, role, &teams, now)?;
            let after = view(tx, u.id)?;
            let change =
                Change::new(action::USER_CREATED, "user", u.id, Some(&u.username)).after(after);
            Ok((tx.require_user(u.id)?, change))
        })
        .await;
    match created {
        Ok(u) => {
            tracing::info!(user = %u.username, provider, "single sign-on created a user");
            Ok(u)
        }
        Err(StoreError::Conflict(name)) => Err(SsoError::UsernameTaken(name)),
        Err(e) => Err(SsoError::Store(e)),
    }
}

/// Gives `user` what `access` says (and the provider's display name); audited when
/// anything changes.
pub async fn apply(
    store: &Store,
    now: i64,
    provider: &str,
    user: &UserRecord,
    identity: &Identity,
    access: &Access,
) -> Result<UserRecord, SsoError> {
    let (id, name, display, access) = (
        user.id,
        user.username.clone(),
        identity.display_name.clone(),
        access.clone(),
    );
    let before = store
        .reading(move |r| view(r, id))
        .await
        .map_err(SsoError::Store)?;
    let (role, teams) = wanted(&access);
    let same = before["role"] == json!(role)
        && before["displayName"] == json!(display)
        && team_pairs(&before) == teams;
    if same {
        return store
            .reading(move |r| r.require_user(id))
            .await
            .map_err(SsoError::Store);
    }
    store
        .write_audited(actor(provider), now, move |tx| {
            let before = view(tx, id)?;
            let (role, teams) = wanted(&access);
            tx.set_sso_access(id, &display, role, &teams, now)?;
            let after = view(tx, id)?;
            let change = Change::new(action::USER_UPDATED, "user", id, Some(&name))
                .before(before)
                .after(after);
            Ok((tx.require_user(id)?, change))
        })
        .await
        .map_err(SsoError::Store)
}

/// The fleet role and `(team id, team role)` pairs `access` gives, sorted.
fn wanted(access: &Access) -> (Option<&'static str>, Vec<(i64, String)>) {
    (
        access.role.map(|r| r.as_str()),
        access
            .teams
            .iter()
            .map(|(t, r)| (*t, r.as_str().to_string()))
            .collect(),
    )
}

/// The `(team id, team role)` pairs of a [`view`], sorted.
fn team_pairs(view: &Value) -> Vec<(i64, String)> {
    let mut pairs: Vec<(i64, String)> = view["teams"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|t| {
                    Some((
                        t["id"].as_str()?.parse().ok()?,
                        t["role"].as_str()?.to_string(),
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    pairs.sort();
    pairs
}

/// The user as the API shows them, with their teams: the audit's before and after.
fn view(r: &Read<'_>, id: i64) -> Result<Value, StoreError> {
    let user = r.require_user(id)?;
    let mut v = serde_json::to_value(UserView::from(&user)).unwrap_or_default();
    let teams: Vec<Value> = r
        .grants_for_user(id)?
        .into_iter()
        .map(|g| json!({"id": g.team_id.to_string(), "name": g.team_name, "role": g.role}))
        .collect();
    v["teams"] = Value::Array(teams);
    Ok(v)
}
