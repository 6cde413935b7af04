//! `[auth.oidc]`: sign-in through the company's OpenID Connect provider, and which of
//! its groups give which kerf roles. The client secret is a secret: it comes from
//! `client_secret_file` or the environment variable `KERF_OIDC_CLIENT_SECRET`, never
//! from the config file itself. `[auth] password_login` says who may still sign in with
//! a password once the provider is there.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::ConfigError;
use crate::secret::Secret;

/// The environment variable holding the OIDC client secret.
pub const CLIENT_SECRET_ENV: &str = "KERF_OIDC_CLIENT_SECRET";

/// `[auth.oidc]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OidcConfig {
    /// The provider's issuer URL, exactly as its discovery document and ID tokens say it
    /// (`https://dex.corp.example`, `https://login.microsoftonline.com/<tenant>/v2.0`).
    pub issuer: String,
    /// What the login page's button says: "Sign in with <name>".
    #[serde(default = "default_name")]
    pub name: String,
    pub client_id: String,
    /// A file holding the client secret (or set `KERF_OIDC_CLIENT_SECRET`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret_file: Option<PathBuf>,
    /// Scopes asked for; `openid` is always asked. `offline_access` lets kerf re-check a
    /// session with a refresh token.
    #[serde(default = "default_scopes")]
    pub scopes: Vec<String>,
    /// The claim that names the kerf user.
    #[serde(default = "default_username_claim")]
    pub username_claim: String,
    #[serde(default = "default_email_claim")]
    pub email_claim: String,
    /// The claim listing the user's groups (an array of strings, or one string).
    #[serde(default = "default_groups_claim")]
    pub groups_claim: String,
    /// PEM bundle of the CA(s) that signed the provider's certificate; unset = system roots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<PathBuf>,
    /// Seconds between two checks, with the provider, that a signed-in user still may:
    /// their provider session is alive and they are still in a mapped group.
    #[serde(default = "default_recheck_seconds")]
    pub recheck_seconds: u64,
    /// Groups and the roles they give (more can be added in the UI).
    #[serde(default)]
    pub groups: Vec<GroupMapping>,
}

/// One provider group and the kerf role it gives: a fleet `role`, or a `team_role` in
/// `team`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupMapping {
    pub group: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team_role: Option<String>,
}

/// Who may sign in with a password.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum PasswordLogin {
    /// Every local user.
    #[default]
    Everyone,
    /// Only the users named in `auth.break_glass_users`; everyone else signs in through
    /// the provider.
    BreakGlassOnly,
}

impl PasswordLogin {
    /// As the config file and the API spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            PasswordLogin::Everyone => "everyone",
            PasswordLogin::BreakGlassOnly => "break-glass-only",
        }
    }
}

fn default_name() -> String {
    "your identity provider".into()
}

fn default_scopes() -> Vec<String> {
    ["openid", "profile", "email"].map(String::from).to_vec()
}

fn default_username_claim() -> String {
    "preferred_username".into()
}

fn default_email_claim() -> String {
    "email".into()
}

fn default_groups_claim() -> String {
    "groups".into()
}

fn default_recheck_seconds() -> u64 {
    300
}

impl OidcConfig {
    /// Each problem in one line, naming the key.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |m: String| Err(ConfigError::Invalid(m));
        let issuer_ok = reqwest::Url::parse(&self.issuer).is_ok_and(|u| {
            u.has_host()
                && u.query().is_none()
                && u.fragment().is_none()
                && (u.scheme() == "https"
                    || (u.scheme() == "http"
                        && u.host_str()
                            .is_some_and(crate::secret::destination::is_loopback)))
        });
        if !issuer_ok {
            return bad(
                "auth.oidc.issuer must be the provider's https:// issuer URL (http:// only on loopback)"
                    .into(),
            );
        }
        if self.client_id.trim().is_empty() {
            return bad("auth.oidc.client_id must be set".into());
        }
        if self.name.trim().is_empty() || self.name.chars().count() > 60 {
            return bad("auth.oidc.name must be 1 to 60 characters".into());
        }
        for (key, claim) in [
            ("username_claim", &self.username_claim),
            ("email_claim", &self.email_claim),
            ("groups_claim", &self.groups_claim),
        ] {
            if claim.trim().is_empty() {
                return bad(format!("auth.oidc.{key} must name a claim"));
            }
        }
        if let Some(s) = self.scopes.iter().find(|s| s.is_empty() || s.contains(' ')) {
            return bad(format!(
                "auth.oidc.scopes: {s:?} is not a scope (one word each)"
            ));
        }
        if !(5..=86_400).contains(&self.recheck_seconds) {
            return bad("auth.oidc.recheck_seconds must be between 5 and 86400".into());
        }
        for (i, m) in self.groups.iter().enumerate() {
            check_mapping(m)
                .map_err(|e| ConfigError::Invalid(format!("auth.oidc.groups[{i}]: {e}")))?;
        }
        Ok(())
    }

    /// The client secret: `client_secret_file`, else `KERF_OIDC_CLIENT_SECRET` from `env`.
    pub fn client_secret(&self, env: &[(String, String)]) -> Result<Secret, ConfigError> {
        if let Some(path) = &self.client_secret_file {
            return super::agent::read_secret(path, "auth.oidc.client_secret_file")
                .map(Secret::new);
        }
        match env.iter().find(|(k, _)| k == CLIENT_SECRET_ENV) {
            Some((_, v)) if !v.trim().is_empty() => Ok(Secret::new(v.trim())),
            _ => Err(ConfigError::Invalid(format!(
                "auth.oidc needs the client secret: set auth.oidc.client_secret_file or {CLIENT_SECRET_ENV}"
            ))),
        }
    }

    /// The provider's CA bundle, when configured.
    pub fn ca(&self) -> Result<Option<String>, ConfigError> {
        self.ca_file
            .as_deref()
            .map(|p| {
                std::fs::read_to_string(p).map_err(|e| {
                    ConfigError::Invalid(format!("auth.oidc.ca_file {}: {e}", p.display()))
                })
            })
            .transpose()
    }
}

/// A mapping gives a fleet role, or a team role in a named team, to a non-empty group.
pub fn check_mapping(m: &GroupMapping) -> Result<(), String> {
    if m.group.trim().is_empty() || m.group.chars().count() > 256 {
        return Err("group must be 1 to 256 characters".into());
    }
    match (&m.role, &m.team, &m.team_role) {
        (Some(r), None, None) if matches!(r.as_str(), "admin" | "editor" | "viewer") => Ok(()),
        (Some(_), None, None) => Err("role must be admin, editor or viewer".into()),
        (None, Some(t), Some(r)) if !t.trim().is_empty() => {
            if matches!(r.as_str(), "team-admin" | "team-editor" | "team-viewer") {
                Ok(())
            } else {
                Err("team_role must be team-admin, team-editor or team-viewer".into())
            }
        }
        _ => Err("give either role, or team and team_role".into()),
    }
}
