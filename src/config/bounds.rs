//! The bounds of `[http]`, `[auth]` and `[notifications]`: checks that types alone
//! cannot express, each failure one line naming the key and its allowed range.

use std::time::Duration;

use super::{Config, ConfigError};

/// The first check of `checks` that fails, as the error naming its key and range.
pub(super) fn first_failed(checks: &[(bool, &str)]) -> Result<(), ConfigError> {
    match checks.iter().find(|(ok, _)| !ok) {
        Some((_, msg)) => Err(ConfigError::Invalid((*msg).to_string())),
        None => Ok(()),
    }
}

/// A duration as people write it (`30s`, `14d`), or the error naming `key` and an
/// example.
pub(super) fn duration(key: &str, text: &str, example: &str) -> Result<Duration, ConfigError> {
    humantime::parse_duration(text.trim()).map_err(|e| {
        ConfigError::Invalid(format!(
            "{key} {text:?} is not a duration such as {example}: {e}"
        ))
    })
}

impl Config {
    pub(super) fn validate_http(&self) -> Result<(), ConfigError> {
        let h = &self.http;
        let checks: [(bool, &str); 5] = [
            (h.max_body_bytes >= 1024, "http.max_body_bytes must be at least 1024"),
            (
                (8..=1_000_000).contains(&h.max_connections),
                "http.max_connections must be between 8 and 1000000",
            ),
            (
                (1..=3600).contains(&h.header_read_timeout_seconds)
                    && (1..=3600).contains(&h.tls_handshake_timeout_seconds),
                "http.header_read_timeout_seconds and http.tls_handshake_timeout_seconds must be between 1 and 3600",
            ),
            (
                (1..=86_400).contains(&h.idle_timeout_seconds),
                "http.idle_timeout_seconds must be between 1 and 86400",
            ),
            (
                (1..=3600).contains(&h.body_read_timeout_seconds),
                "http.body_read_timeout_seconds must be between 1 and 3600",
            ),
        ];
        first_failed(&checks)
    }

    pub(super) fn validate_auth(&self) -> Result<(), ConfigError> {
        let a = &self.auth;
        let checks: [(bool, &str); 8] = [
            (a.session_idle_seconds >= 1, "auth.session_idle_seconds must be at least 1"),
            (
                a.login_account_slowdown_after >= 1
                    && (1..=3600).contains(&a.login_account_slowdown_seconds),
                "auth.login_account_slowdown_after must be at least 1 and auth.login_account_slowdown_seconds between 1 and 3600",
            ),
            (
                a.session_absolute_seconds >= a.session_idle_seconds,
                "auth.session_absolute_seconds must be at least auth.session_idle_seconds",
            ),
            (a.login_max_failures >= 1, "auth.login_max_failures must be at least 1"),
            (
                a.login_max_failures_per_address >= 1,
                "auth.login_max_failures_per_address must be at least 1",
            ),
            (a.login_window_seconds >= 1, "auth.login_window_seconds must be at least 1"),
            (
                (1..=64).contains(&a.max_concurrent_password_checks),
                "auth.max_concurrent_password_checks must be between 1 and 64",
            ),
            (
                a.argon2_memory_kib >= 8192 && a.argon2_iterations >= 1,
                "auth.argon2_memory_kib must be at least 8192 and auth.argon2_iterations at least 1",
            ),
        ];
        first_failed(&checks)?;
        if let Some(oidc) = &a.oidc {
            oidc.validate()?;
        }
        if a.password_login == super::oidc::PasswordLogin::BreakGlassOnly {
            if a.oidc.is_none() {
                return Err(ConfigError::Invalid(
                    "auth.password_login = \"break-glass-only\" needs [auth.oidc]: nobody else could sign in".into(),
                ));
            }
            if a.break_glass_users.iter().all(|u| u.trim().is_empty()) {
                return Err(ConfigError::Invalid(
                    "auth.password_login = \"break-glass-only\" needs auth.break_glass_users to name at least one local admin".into(),
                ));
            }
        }
        Ok(())
    }

    pub(super) fn validate_notifications(&self) -> Result<(), ConfigError> {
        let n = &self.notifications;
        if crate::cron::Zone::parse(&n.time_zone).is_none() {
            return Err(ConfigError::Invalid(format!(
                "notifications.time_zone {:?} is not an IANA time zone (e.g. Europe/Berlin)",
                n.time_zone
            )));
        }
        let url_ok = n.public_url.is_empty()
            || reqwest::Url::parse(&n.public_url)
                .is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.has_host());
        let checks: [(bool, &str); 7] = [
            (url_ok, "notifications.public_url must be empty or an http(s) URL"),
            (
                (1..=100).contains(&n.max_attempts),
                "notifications.max_attempts must be between 1 and 100",
            ),
            (
                (10..=600_000).contains(&n.retry_base_ms),
                "notifications.retry_base_ms must be between 10 and 600000",
            ),
            (
                (1..=300).contains(&n.send_timeout_seconds),
                "notifications.send_timeout_seconds must be between 1 and 300",
            ),
            (
                n.max_per_minute >= 1 && n.group_window_ms <= 60_000,
                "notifications.max_per_minute must be at least 1 and notifications.group_window_ms at most 60000",
            ),
            (
                (1..=1024).contains(&n.max_concurrent_sends),
                "notifications.max_concurrent_sends must be between 1 and 1024",
            ),
            (
                (1..=100_000).contains(&n.max_channels)
                    && (1..=n.max_channels).contains(&n.max_channels_per_team),
                "notifications.max_channels must be between 1 and 100000, and max_channels_per_team between 1 and max_channels",
            ),
        ];
        first_failed(&checks)
    }
}
