//! Who is calling: local users (passwords, sessions), API tokens with a fleet or team
//! role, and cluster agent tokens. Resolves credentials into a [`Principal`]; the route
//! guard in `api::access` decides what the principal may do.

pub mod accounts;
pub mod limiter;
pub mod password;
pub mod pattern;
pub mod principal;
pub mod session;
pub mod sso;
pub mod teams;
pub mod token;
pub mod touch;

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;

pub use limiter::{LockScope, Locked, LoginLimiter, NewLock};
pub use principal::{Caller, CallerKind, FleetRole, Principal, SessionRef, TeamGrant, TeamRole};

use crate::clock::Clock;
use crate::config::AuthConfig;
use crate::store::{SessionRecord, Store, StoreError, UserRecord};

/// Why a credential was not accepted.
#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    #[error("missing credentials")]
    Missing,
    #[error("unknown, revoked or expired token")]
    Unknown,
    #[error("session expired or logged out; log in again")]
    SessionExpired,
    #[error("user is disabled")]
    Disabled,
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Why a login failed.
#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    #[error("invalid username or password")]
    Invalid,
    #[error("too many failed logins")]
    Locked(Locked),
    #[error("too many logins in progress; retry shortly")]
    Busy,
    /// `auth.password_login = "break-glass-only"` and the user is not named in
    /// `auth.break_glass_users`.
    #[error("password sign-in is limited to break-glass accounts; sign in with {0}")]
    PasswordLoginOff(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("password check failed: {0}")]
    Task(String),
}

/// A successful login: the user and the new session's cookie value and CSRF token.
#[derive(Debug)]
pub struct LoggedIn {
    pub user: UserRecord,
    pub session_value: String,
    pub csrf_token: String,
}

/// Authentication services shared by the API: hashing (bounded), limits and sessions.
pub struct Authenticator {
    pub hasher: password::Hasher,
    pub limiter: LoginLimiter,
    pub lifetimes: session::Lifetimes,
    pub clock: Arc<dyn Clock>,
    /// "Last used" marks, written off the request path.
    pub touches: touch::Touches,
    hashing: Arc<Semaphore>,
    queue_wait: Duration,
    /// Who may sign in with a password: `None` = everyone, else these (lowercase).
    break_glass: Option<Vec<String>>,
    /// Single sign-on, when `[auth.oidc]` is configured (set once at start).
    pub sso: std::sync::OnceLock<Arc<sso::Sso>>,
}

impl Authenticator {
    /// Builds the services from `[auth]`, with time from `clock`.
    pub fn new(cfg: &AuthConfig, clock: Arc<dyn Clock>) -> Result<Self, password::PasswordError> {
        Ok(Authenticator {
            hasher: password::Hasher::new(cfg.argon2_memory_kib, cfg.argon2_iterations)?,
            limiter: LoginLimiter::new(
                limiter::Limits {
                    window_ms: cfg.login_window_seconds as i64 * 1000,
                    max_per_pair: cfg.login_max_failures as usize,
                    max_per_address: cfg.login_max_failures_per_address as usize,
                    slow_after: cfg.login_account_slowdown_after as usize,
                    slow_every_ms: cfg.login_account_slowdown_seconds as i64 * 1000,
                },
                clock.clone(),
            ),
            lifetimes: session::Lifetimes {
                idle_ms: cfg.session_idle_seconds as i64 * 1000,
                absolute_ms: cfg.session_absolute_seconds as i64 * 1000,
            },
            clock,
            touches: touch::Touches::default(),
            hashing: Arc::new(Semaphore::new(cfg.max_concurrent_password_checks as usize)),
            queue_wait: Duration::from_secs(2),
            break_glass: (cfg.password_login == crate::config::oidc::PasswordLogin::BreakGlassOnly)
                .then(|| {
                    cfg.break_glass_users
                        .iter()
                        .map(|u| u.trim().to_lowercase())
                        .collect()
                }),
            sso: std::sync::OnceLock::new(),
        })
    }

    /// Runs blocking password work under the concurrency bound; `None` when the queue
    /// wait ran out (the caller answers 503).
    pub async fn bounded<T: Send + 'static>(
        &self,
        work: impl FnOnce(&password::Hasher) -> T + Send + 'static,
    ) -> Result<Option<T>, String> {
        let permit =
            match tokio::time::timeout(self.queue_wait, self.hashing.clone().acquire_owned()).await
            {
                Ok(Ok(p)) => p,
                Ok(Err(_)) => return Err("hashing semaphore closed".into()),
                Err(_) => return Ok(None),
            };
        let hasher = self.hasher.clone();
        let out = tokio::task::spawn_blocking(move || {
            let out = work(&hasher);
            drop(permit);
            out
        })
        .await
        .map_err(|e| e.to_string())?;
        Ok(Some(out))
    }

    /// Verifies a username and password, enforcing the failure limits, and opens a new
    /// session. `previous` (a session cookie sent along) is ended: sessions rotate.
    pub async fn login(
        &self,
        store: &Store,
        username: &str,
        password: String,
        addr: IpAddr,
        previous: Option<String>,
    ) -> Result<LoggedIn, LoginError> {
        if let Some(allowed) = &self.break_glass {
            if !allowed.contains(&username.trim().to_lowercase()) {
                let provider = self.sso.get().map(|s| s.name().to_string());
                return Err(LoginError::PasswordLoginOff(
                    provider.unwrap_or_else(|| "the identity provider".into()),
                ));
            }
        }
        // Checked and counted in one step: concurrent guesses cannot overrun the limit.
        let attempt = self
            .limiter
            .begin(username, addr)
            .map_err(LoginError::Locked)?;
        let name = username.to_string();
        let found = store.reading(move |r| r.user_for_login(&name)).await?;
        let (user, phc) = match found {
            Some((u, phc)) => (Some(u), Some(phc)),
            None => (None, None),
        };
        let ok = self
            .bounded(move |h| match phc {
                Some(phc) => h.verify(&password, &phc),
                None => h.verify_dummy(&password),
            })
            .await
            .map_err(LoginError::Task)?
            .ok_or(LoginError::Busy)?;
        let user = match user {
            Some(u) if ok && !u.disabled => u,
            _ => {
                let locks = attempt.failed();
                tracing::info!(%addr, "login failed");
                self.keep_locks(store, locks).await;
                return Err(LoginError::Invalid);
            }
        };
        attempt.succeeded();
        let done = self.open_session(store, user, previous, |_| None).await?;
        tracing::info!(user_id = done.user.id, %addr, "login succeeded");
        Ok(done)
    }

    /// Opens a new session for `user`, ending `previous` (a session cookie sent along:
    /// sessions rotate). `sso` gives, for the new session's id hash, the provider's
    /// tokens sealed to it and when they were checked (a single sign-on session).
    pub async fn open_session(
        &self,
        store: &Store,
        user: UserRecord,
        previous: Option<String>,
        sso: impl FnOnce(&str) -> Option<(Vec<u8>, i64)> + Send + 'static,
    ) -> Result<LoggedIn, StoreError> {
        let (value, csrf) = session::new_ids();
        let now = self.clock.now_ms();
        let record = SessionRecord {
            user_id: user.id,
            csrf_token: csrf.clone(),
            created_at: now,
            last_seen_at: now,
            expires_at: now + self.lifetimes.absolute_ms,
            sso_checked_at: None,
        };
        let digest = token::hash(&value);
        let idle = self.lifetimes.idle_ms;
        let previous = previous.map(|v| token::hash(&v));
        store
            .writing(move |tx| {
                if let Some(old) = previous {
                    tx.delete_session(&old)?;
                }
                tx.purge_expired_sessions(now, idle)?;
                tx.insert_session(&digest, &record)?;
                if let Some((sealed, at)) = sso(&digest) {
                    tx.set_session_sso(&digest, &sealed, at)?;
                }
                Ok(())
            })
            .await?;
        Ok(LoggedIn {
            user,
            session_value: value,
            csrf_token: csrf,
        })
    }

    /// Persists locks a failure started, so a restart does not lift them. A failure to
    /// write is logged, not answered: the lock holds in memory regardless.
    async fn keep_locks(&self, store: &Store, locks: Vec<NewLock>) {
        if locks.is_empty() {
            return;
        }
        let records = locks
            .into_iter()
            .map(|l| crate::store::LoginLockRecord {
                account: l.account,
                address: l.address.to_string(),
                until_ms: l.until_ms,
            })
            .collect::<Vec<_>>();
        let now = self.clock.now_ms();
        if let Err(e) = store
            .writing(move |tx| tx.save_login_locks(&records, now))
            .await
        {
            tracing::error!(error = %e, "cannot keep a login lock across restarts");
        }
    }

    /// Re-applies the login locks kept by an earlier run (at start).
    pub async fn restore_locks(&self, store: &Store) -> Result<usize, StoreError> {
        let now = self.clock.now_ms();
        let locks: Vec<NewLock> = store
            .reading(move |r| r.login_locks(now))
            .await?
            .into_iter()
            .filter_map(|r| {
                Some(NewLock {
                    account: r.account,
                    address: r.address.parse().ok()?,
                    until_ms: r.until_ms,
                })
            })
            .collect();
        self.limiter.restore(&locks);
        Ok(locks.len())
    }

    /// Resolves a session cookie value into its user.
    pub async fn resolve_session(
        &self,
        store: &Store,
        value: &str,
    ) -> Result<Principal, AuthError> {
        let digest = token::hash(value);
        let key = digest.clone();
        let s = store
            .reading(move |r| r.session_by_hash(&key))
            .await?
            .ok_or(AuthError::SessionExpired)?;
        let now = self.clock.now_ms();
        match session::freshness(&s, now, &self.lifetimes) {
            session::Freshness::Expired => {
                store.writing(move |tx| tx.delete_session(&digest)).await?;
                return Err(AuthError::SessionExpired);
            }
            session::Freshness::Valid { touch } => {
                if touch {
                    self.touches.session(store, digest.clone(), now);
                }
            }
        }
        let user_id = s.user_id;
        if let (Some(sso), Some(checked)) = (self.sso.get(), s.sso_checked_at) {
            sso.recheck_if_due(store, &digest, user_id, checked, now)
                .await?;
        }
        let (user, records) = store
            .reading(move |r| Ok((r.get_user(user_id)?, r.grants_for_user(user_id)?)))
            .await?;
        let user = user.ok_or(AuthError::SessionExpired)?;
        if user.disabled {
            return Err(AuthError::Disabled);
        }
        let teams = grants(records);
        Ok(Principal::Caller(Caller {
            kind: CallerKind::User,
            id: user.id,
            name: user.username,
            fleet_role: user.role.as_deref().and_then(FleetRole::parse),
            teams,
            session: Some(SessionRef {
                id_sha256: digest,
                csrf_token: s.csrf_token,
            }),
        }))
    }
}

fn grants(records: Vec<crate::store::TeamGrantRecord>) -> Vec<TeamGrant> {
    records
        .into_iter()
        .filter_map(TeamGrant::from_record)
        .collect()
}

/// Resolves a presented bearer token value. The value itself is never logged.
pub async fn resolve_bearer(
    store: &Store,
    touches: &touch::Touches,
    value: &str,
    now_ms: i64,
) -> Result<Principal, AuthError> {
    let digest = token::hash(value);
    if value.starts_with(token::CLUSTER_TOKEN_PREFIX) {
        let wanted = digest.clone();
        let holder = store.reading(move |r| r.cluster_by_token(&wanted)).await?;
        return match holder {
            Some((cluster, stored)) if token::digests_equal(&stored, &digest) => {
                Ok(Principal::Cluster { name: cluster.name })
            }
            _ => Err(AuthError::Unknown),
        };
    }
    let key = digest.clone();
    let Some((t, stored)) = store.reading(move |r| r.token_by_hash(&key)).await? else {
        return Err(AuthError::Unknown);
    };
    let live = t.revoked_at.is_none() && t.expires_at.is_none_or(|e| e > now_ms);
    if !token::digests_equal(&stored, &digest) || !live {
        return Err(AuthError::Unknown);
    }
    if t.last_used_at.is_none_or(|at| at < now_ms - 60_000) {
        touches.token(store, t.id, now_ms);
    }
    let (fleet_role, teams) = match (FleetRole::parse(&t.role), t.team_id) {
        (Some(r), None) => (Some(r), Vec::new()),
        (None, Some(team)) => {
            let role = t.role.clone();
            let g = store
                .reading(move |r| r.grant_for_team(team, &role))
                .await?;
            (None, grants(g.into_iter().collect()))
        }
        _ => (None, Vec::new()),
    };
    Ok(Principal::Caller(Caller {
        kind: CallerKind::Token,
        id: t.id,
        name: t.name,
        fleet_role,
        teams,
        session: None,
    }))
}
