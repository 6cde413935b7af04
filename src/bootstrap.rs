//! First credentials, made offline against the data dir: admin users and API tokens,
//! each recorded as a `config_changed` row with a `system` actor in the same
//! transaction. Used by `kerf users create`, `kerf token create`, `kerf clusters create`
//! and `kerf demo`.

use crate::api::tokens::TokenView;
use crate::api::users::UserView;
use crate::auth::password::Hasher;
use crate::auth::token;
use crate::config::AuthConfig;
use crate::events::config_change::{action, Actor, AuditContext, Change};
use crate::store::{self, Store, StoreError};

/// Why a credential could not be made.
#[derive(Debug, thiserror::Error)]
pub enum BootstrapError {
    /// The request itself is wrong (name, role, password policy).
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot hash the password: {0}")]
    Hash(String),
}

/// Creates an API token with a fleet `role` and returns its value (shown once).
pub fn create_token(
    store: &Store,
    name: &str,
    role: &str,
    expires_at: Option<i64>,
    actor: &str,
    now: i64,
) -> Result<String, BootstrapError> {
    if !matches!(role, "admin" | "editor" | "viewer") {
        return Err(BootstrapError::Invalid(format!(
            "role {role:?} must be admin, editor or viewer"
        )));
    }
    let name = name.trim();
    if name.is_empty() || name.len() > 100 {
        return Err(BootstrapError::Invalid(
            "token name must be 1 to 100 characters".into(),
        ));
    }
    let value = token::generate(token::API_TOKEN_PREFIX);
    let digest = token::hash(&value);
    let ctx = AuditContext {
        actor: Actor::system(actor),
        reason: None,
    };
    store.write_blocking(|c| {
        store::config_audit::in_transaction(c, &ctx, now, |tx| {
            let t = store::insert_token(
                tx,
                &store::NewApiToken {
                    name,
                    role,
                    team_id: None,
                    created_by: Some(actor),
                    token_sha256: &digest,
                    expires_at,
                },
                now,
            )?;
            let change = Change::new(action::TOKEN_CREATED, "token", t.id, Some(&t.name))
                .after(TokenView::from(&t));
            Ok((t, change))
        })
    })?;
    Ok(value)
}

/// Creates a local user with an optional fleet `role` and the given password, which must
/// pass the password policy.
pub fn create_user(
    store: &Store,
    auth: &AuthConfig,
    name: &str,
    role: Option<&str>,
    password: &str,
    actor: &str,
    now: i64,
) -> Result<(), BootstrapError> {
    if let Some(r) = role {
        if !matches!(r, "admin" | "editor" | "viewer") {
            return Err(BootstrapError::Invalid(format!(
                "role {r:?} must be admin, editor or viewer"
            )));
        }
    }
    crate::api::users::validate_username(name).map_err(|e| BootstrapError::Invalid(e.message))?;
    crate::auth::password::check_policy(password, name)
        .map_err(|e| BootstrapError::Invalid(e.to_string()))?;
    let hasher = Hasher::new(auth.argon2_memory_kib, auth.argon2_iterations)
        .map_err(|e| BootstrapError::Hash(e.to_string()))?;
    let phc = hasher
        .hash(password)
        .map_err(|e| BootstrapError::Hash(e.to_string()))?;
    let ctx = AuditContext {
        actor: Actor::system(actor),
        reason: None,
    };
    store.write_blocking(|c| {
        store::config_audit::in_transaction(c, &ctx, now, |tx| {
            let u = store::users::insert_user(
                tx,
                &store::NewUser {
                    username: name,
                    display_name: "",
                    role,
                    password_hash: &phc,
                },
                now,
            )?;
            let change = Change::new(action::USER_CREATED, "user", u.id, Some(&u.username))
                .after(UserView::from(&u));
            Ok((u, change))
        })
    })?;
    Ok(())
}

/// Registers a cluster (`ClusterCreated`) and returns its agent token (shown once).
pub fn create_cluster(
    store: &Store,
    name: &str,
    actor: &str,
    now: i64,
) -> Result<String, BootstrapError> {
    if !crate::commands::valid_cluster_name(name) {
        return Err(BootstrapError::Invalid(
            "cluster name must be 1-63 lower-case letters, digits or '-', starting and ending with a letter or digit".into(),
        ));
    }
    let value = token::generate(token::CLUSTER_TOKEN_PREFIX);
    let digest = token::hash(&value);
    let ctx = AuditContext {
        actor: Actor::system(actor),
        reason: None,
    };
    store.write_blocking(|c| {
        store::config_audit::in_transaction(c, &ctx, now, |tx| {
            let new = store::NewCluster {
                name,
                token_sha256: &digest,
            };
            let cl = store::insert_cluster_with(tx, &new, &Default::default(), now)?;
            let change = Change::new(action::CLUSTER_CREATED, "cluster", &cl.name, Some(&cl.name))
                .after(crate::api::clusters::ClusterView::from(&cl));
            Ok((cl, change))
        })
    })?;
    Ok(value)
}
