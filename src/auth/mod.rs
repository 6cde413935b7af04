//! Who is calling: resolves a bearer token into a principal. Today: admin API tokens and
//! cluster agent tokens. Users, sessions, teams and finer roles extend `Principal`.

pub mod token;

use crate::store::{Store, StoreError};

/// An authenticated caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Principal {
    /// An API token with a fleet role.
    ApiToken { id: i64, name: String, role: String },
    /// A cluster's agent.
    Cluster { name: String },
}

/// Why a credential was not accepted.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("missing bearer token")]
    Missing,
    #[error("unknown, revoked or expired token")]
    Unknown,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Resolves a presented bearer token value. The value itself is never logged.
pub async fn resolve_bearer(
    store: &Store,
    value: &str,
    now_ms: i64,
) -> Result<Principal, AuthError> {
    let digest = token::hash(value);
    if value.starts_with(token::CLUSTER_TOKEN_PREFIX) {
        return match store.cluster_by_token(digest.clone()).await? {
            Some((cluster, stored)) if token::digests_equal(&stored, &digest) => {
                Ok(Principal::Cluster { name: cluster.name })
            }
            _ => Err(AuthError::Unknown),
        };
    }
    match store.token_by_hash(digest.clone()).await? {
        Some((t, stored)) if token::digests_equal(&stored, &digest) => {
            let live = t.revoked_at.is_none() && t.expires_at.is_none_or(|e| e > now_ms);
            if !live {
                return Err(AuthError::Unknown);
            }
            if t.last_used_at.is_none_or(|at| at < now_ms - 60_000) {
                store.touch_token(t.id).await?;
            }
            Ok(Principal::ApiToken {
                id: t.id,
                name: t.name,
                role: t.role,
            })
        }
        _ => Err(AuthError::Unknown),
    }
}
