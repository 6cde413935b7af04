//! Single sign-on through an OpenID Connect provider (`[auth.oidc]`): the
//! authorization code flow with PKCE, a `state` used once and bound to the browser
//! that started it, a `nonce` in the ID token, groups mapped to kerf roles at every
//! sign-in, and sessions re-checked with the provider every `recheck_seconds`.
//!
//! - [`provider`]: the provider as the `openidconnect` crate speaks to it.
//! - [`mapping`]: the claims kerf reads and what the groups give.
//! - [`account`]: the kerf user behind a sign-in (created just in time).
//! - [`mappings`]: the group mappings of the config file and of the UI.

pub mod account;
pub mod mapping;
pub mod mappings;
pub mod provider;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde::Deserialize;

use super::{token, AuthError, Authenticator, LoggedIn};
use crate::clock::Clock;
use crate::config::Config;
use crate::secret::SecretKey;
use crate::store::{SsoLogin, Store, StoreError};
pub use provider::{KeptTokens, Provider, ProviderError};

/// The cookie that binds a sign-in in flight to the browser that started it.
pub const BROWSER_COOKIE: &str = "kerf_sso";
/// The path kerf's callback is served at.
pub const CALLBACK_PATH: &str = "/v1/auth/oidc/callback";
/// How long a sign-in may take at the provider.
const LOGIN_TTL_MS: i64 = 10 * 60 * 1000;
/// How soon a re-check that could not reach the provider is tried again.
const RETRY_MS: i64 = 30_000;

/// Why a sign-in through the provider failed. [`SsoError::code`] is what the login
/// page is told (it says it in words); the message is the log's one line. Neither
/// ever holds a token.
#[derive(Debug, thiserror::Error)]
pub enum SsoError {
    #[error("{0}")]
    Provider(#[from] ProviderError),
    #[error("unknown, used or expired sign-in state")]
    InvalidState,
    #[error("the sign-in was started in another browser (its cookie is missing or differs)")]
    OtherBrowser,
    #[error("the identity provider answered with error {0:?}")]
    ProviderSaidNo(String),
    #[error("{0}")]
    MissingClaim(String),
    #[error("none of the user's groups is mapped to a kerf role")]
    NoMappedGroup,
    #[error("the kerf user is disabled")]
    Disabled,
    #[error("a local account is named {0:?}; kerf does not hand it to the identity provider")]
    UsernameTaken(String),
    #[error(transparent)]
    Store(StoreError),
}

impl SsoError {
    /// The stable code the login page is sent with.
    pub fn code(&self) -> &'static str {
        match self {
            SsoError::Provider(ProviderError::Unreachable(_)) => "provider_unreachable",
            SsoError::Provider(ProviderError::Misconfigured(_)) => "provider_misconfigured",
            SsoError::Provider(ProviderError::Refused(_)) | SsoError::ProviderSaidNo(_) => {
                "provider_refused"
            }
            SsoError::Provider(ProviderError::InvalidToken(_)) => "invalid_id_token",
            SsoError::InvalidState => "invalid_state",
            SsoError::OtherBrowser => "other_browser",
            SsoError::MissingClaim(_) => "missing_claim",
            SsoError::NoMappedGroup => "no_mapped_group",
            SsoError::Disabled => "user_disabled",
            SsoError::UsernameTaken(_) => "username_taken",
            SsoError::Store(_) => "internal",
        }
    }
}

/// The provider's answer at the callback.
#[derive(Debug, Default, Deserialize)]
pub struct Callback {
    pub code: Option<String>,
    pub state: Option<String>,
    pub error: Option<String>,
}

/// A sign-in sent to the provider: where the browser goes, and the cookie value that
/// binds it to that browser.
pub struct Begun {
    pub url: String,
    pub browser: String,
}

/// The configured provider with everything a sign-in needs.
pub struct Sso {
    provider: Provider,
    key: SecretKey,
    recheck_ms: i64,
    /// One re-check at a time per session (a refresh token may be used once).
    rechecks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl Sso {
    /// The provider of `[auth.oidc]`, `None` when it is not configured; `Err` is one
    /// line naming the key at fault.
    pub fn from_config(
        config: &Config,
        env: &[(String, String)],
        clock: Arc<dyn Clock>,
    ) -> Result<Option<Sso>, String> {
        let Some(cfg) = &config.auth.oidc else {
            return Ok(None);
        };
        let secret = cfg.client_secret(env).map_err(|e| e.to_string())?;
        let ca = cfg.ca().map_err(|e| e.to_string())?;
        let key = SecretKey::load_or_create(&config.data_dir).map_err(|e| e.to_string())?;
        Ok(Some(Sso {
            recheck_ms: cfg.recheck_seconds as i64 * 1000,
            provider: Provider::new(cfg.clone(), secret, ca, clock)?,
            key,
            rechecks: Mutex::new(HashMap::new()),
        }))
    }

    /// The provider's name, as the login page's button says it.
    pub fn name(&self) -> &str {
        &self.provider.config().name
    }

    /// Starts a sign-in: the provider's URL to send the browser to, with the state
    /// kept (hashed) until the callback, bound to a new browser cookie.
    pub async fn begin(
        &self,
        store: &Store,
        now: i64,
        redirect_uri: &str,
        return_to: &str,
    ) -> Result<Begun, SsoError> {
        let started = self.provider.start(redirect_uri).await?;
        let browser = token::generate("kerf_b_");
        let login = SsoLogin {
            state_sha256: token::hash(&started.state),
            browser_sha256: token::hash(&browser),
            nonce: started.nonce,
            pkce_verifier: started.pkce_verifier,
            redirect_uri: redirect_uri.to_string(),
            return_to: return_to.to_string(),
            created_at: now,
        };
        store
            .writing(move |tx| tx.insert_sso_login(&login, now - LOGIN_TTL_MS))
            .await
            .map_err(SsoError::Store)?;
        Ok(Begun {
            url: started.url,
            browser,
        })
    }

    /// Finishes a sign-in at the callback: the state (once, from this browser), the
    /// code exchange, the ID token, the groups, the user, and a new session (any
    /// session cookie sent along ends). Returns it and where to go next.
    pub async fn finish(
        &self,
        auth: &Authenticator,
        store: &Store,
        answer: Callback,
        browser: Option<&str>,
        previous: Option<String>,
    ) -> Result<(LoggedIn, String), SsoError> {
        let now = auth.clock.now_ms();
        let state = answer.state.ok_or(SsoError::InvalidState)?;
        let key = token::hash(&state);
        let login = store
            .writing(move |tx| tx.take_sso_login(&key))
            .await
            .map_err(SsoError::Store)?
            .filter(|l| now - l.created_at <= LOGIN_TTL_MS)
            .ok_or(SsoError::InvalidState)?;
        let from_here =
            browser.is_some_and(|b| token::digests_equal(&token::hash(b), &login.browser_sha256));
        if !from_here {
            return Err(SsoError::OtherBrowser);
        }
        if let Some(e) = answer.error {
            let code: String = e
                .chars()
                .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
                .take(64)
                .collect();
            return Err(SsoError::ProviderSaidNo(code));
        }
        let code = answer.code.ok_or(SsoError::InvalidState)?;
        let verified = self
            .provider
            .finish(
                &code,
                &login.pkce_verifier,
                &login.nonce,
                &login.redirect_uri,
            )
            .await?;
        let cfg = self.provider.config();
        let identity = mapping::identity(cfg, &verified.claims).map_err(SsoError::MissingClaim)?;
        let mappings = mappings::effective(store, cfg)
            .await
            .map_err(SsoError::Store)?;
        let access = mapping::access(&identity.groups, &mappings).ok_or(SsoError::NoMappedGroup)?;
        let user = account::sign_in(store, now, &cfg.name, &identity, &access).await?;
        let tokens = verified.tokens;
        let key = self.key.clone();
        let done = auth
            .open_session(store, user, previous, move |digest| {
                key.seal_for(&tokens, digest)
                    .ok()
                    .map(|sealed| (sealed, now))
            })
            .await
            .map_err(SsoError::Store)?;
        tracing::info!(user = %done.user.username, provider = %cfg.name, "signed in through the identity provider");
        Ok((done, login.return_to))
    }

    /// For a session opened through the provider whose last check (`checked`) is older
    /// than `recheck_seconds`: asks the provider again (refresh, else userinfo). The session
    /// ends when the provider no longer vouches for the user, or they are in no mapped
    /// group any more; otherwise the groups' roles are applied. A provider that cannot
    /// be reached leaves the session as it is and is asked again shortly.
    pub async fn recheck_if_due(
        &self,
        store: &Store,
        digest: &str,
        user_id: i64,
        checked: i64,
        now: i64,
    ) -> Result<(), AuthError> {
        let due = |checked: i64| now - checked >= self.recheck_ms;
        if !due(checked) {
            return Ok(());
        }
        let lock = {
            let mut map = self.rechecks.lock().unwrap_or_else(|p| p.into_inner());
            map.retain(|_, l| Arc::strong_count(l) > 1);
            map.entry(digest.to_string()).or_default().clone()
        };
        let _one = lock.lock().await;
        let d = digest.to_string();
        let Some((sealed, checked)) = store.reading(move |r| r.session_sso(&d)).await? else {
            return Err(AuthError::SessionExpired);
        };
        if !due(checked) {
            return Ok(());
        }
        match self.recheck(store, digest, user_id, &sealed, now).await {
            Ok(()) => Ok(()),
            Err(SsoError::Provider(
                e @ (ProviderError::Unreachable(_) | ProviderError::Misconfigured(_)),
            )) => {
                tracing::warn!(user_id, error = %e, "cannot re-check a single sign-on session; it stays, and is re-checked shortly");
                let d = digest.to_string();
                let retry_at = now - self.recheck_ms + RETRY_MS;
                store
                    .writing(move |tx| tx.set_session_sso(&d, &sealed, retry_at))
                    .await?;
                Ok(())
            }
            Err(e) => {
                tracing::info!(user_id, reason = %e, "single sign-on session ended at its re-check");
                let d = digest.to_string();
                store.writing(move |tx| tx.delete_session(&d)).await?;
                Err(AuthError::SessionExpired)
            }
        }
    }

    async fn recheck(
        &self,
        store: &Store,
        digest: &str,
        user_id: i64,
        sealed: &[u8],
        now: i64,
    ) -> Result<(), SsoError> {
        let kept: KeptTokens = self.key.open_for(sealed, digest).map_err(|_| {
            SsoError::Provider(ProviderError::Refused(
                "the kept tokens no longer open".into(),
            ))
        })?;
        let verified = self.provider.recheck(&kept).await?;
        let cfg = self.provider.config();
        let user = store
            .reading(move |r| r.require_user(user_id))
            .await
            .map_err(SsoError::Store)?;
        let mut claims = verified.claims;
        // Userinfo and a refreshed token may omit what the sign-in had; the subject and
        // username are the user's own.
        let subject = user.subject.clone().unwrap_or_default();
        if let Some(sub) = subject.strip_prefix(&format!("{} ", cfg.issuer)) {
            let same = claims
                .get("sub")
                .and_then(|v| v.as_str())
                .is_none_or(|s| s == sub);
            if !same {
                return Err(SsoError::Provider(ProviderError::InvalidToken(
                    "the provider names another subject".into(),
                )));
            }
            claims.insert("sub".into(), sub.into());
        }
        claims
            .entry(cfg.username_claim.clone())
            .or_insert_with(|| user.username.clone().into());
        let identity = mapping::identity(cfg, &claims).map_err(SsoError::MissingClaim)?;
        let mappings = mappings::effective(store, cfg)
            .await
            .map_err(SsoError::Store)?;
        let access = mapping::access(&identity.groups, &mappings).ok_or(SsoError::NoMappedGroup)?;
        if user.disabled {
            return Err(SsoError::Disabled);
        }
        account::apply(store, now, &cfg.name, &user, &identity, &access).await?;
        let sealed = self
            .key
            .seal_for(&verified.tokens, digest)
            .map_err(|e| SsoError::Store(StoreError::Task(e.to_string())))?;
        let d = digest.to_string();
        store
            .writing(move |tx| tx.set_session_sso(&d, &sealed, now))
            .await
            .map_err(SsoError::Store)
    }

    /// Where to send the browser to end the provider's session too (RP-initiated
    /// logout), for session `digest`; `None` when the provider has no such endpoint or
    /// the session was a password one.
    pub async fn logout_url(
        &self,
        store: &Store,
        digest: &str,
        post_logout: &str,
    ) -> Option<String> {
        let d = digest.to_string();
        let (sealed, _) = store.reading(move |r| r.session_sso(&d)).await.ok()??;
        let kept: KeptTokens = self.key.open_for(&sealed, digest).unwrap_or_default();
        self.provider.logout_url(&kept, post_logout).await
    }
}

/// A same-origin path to return to after signing in: an absolute path on this host,
/// never another origin (`//evil`, `/\evil`), a scheme, or the API; else `/`.
pub fn safe_return(path: Option<&str>) -> String {
    match path {
        Some(p)
            if p.starts_with('/')
                && !p.starts_with("//")
                && !p.starts_with("/\\")
                && !p.starts_with("/v1/")
                && p.len() <= 2048
                && !p.chars().any(|c| c.is_control() || c == '\\') =>
        {
            p.to_string()
        }
        _ => "/".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_paths_on_this_host_are_returned_to() {
        for ok in ["/", "/workloads/42?tab=history", "/policies#x"] {
            assert_eq!(safe_return(Some(ok)), ok);
        }
        for bad in [
            "https://evil.example/",
            "//evil.example/x",
            "/\\evil.example",
            "javascript:alert(1)",
            "/v1/auth/logout",
            "/a\r\nSet-Cookie: x=y",
            "",
        ] {
            assert_eq!(safe_return(Some(bad)), "/", "{bad:?}");
        }
        assert_eq!(safe_return(None), "/");
    }

    #[test]
    fn every_refusal_has_a_stable_code_and_a_line_without_secrets() {
        let e = SsoError::Provider(ProviderError::InvalidToken(
            "Signature verification failed".into(),
        ));
        assert_eq!(e.code(), "invalid_id_token");
        assert_eq!(
            e.to_string(),
            "the ID token was refused: Signature verification failed"
        );
        assert_eq!(SsoError::OtherBrowser.code(), "other_browser");
        assert_eq!(SsoError::NoMappedGroup.code(), "no_mapped_group");
    }
}
