//! Browser sessions: random ids kept only in an HttpOnly cookie (the database holds their
//! SHA-256), idle and absolute expiry, and a per-session CSRF token that cookie-borne
//! mutations must echo in `X-CSRF-Token`.

use crate::store::SessionRecord;

/// Name of the session cookie.
pub const COOKIE: &str = "kerf_session";
/// Header carrying the CSRF token on cookie-authenticated mutations.
pub const CSRF_HEADER: &str = "x-csrf-token";

/// Session lifetimes, in milliseconds.
#[derive(Debug, Clone, Copy)]
pub struct Lifetimes {
    pub idle_ms: i64,
    pub absolute_ms: i64,
}

/// What a stored session allows now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Freshness {
    /// Valid; `touch` says whether to record activity (coarse, to spare the writer).
    Valid {
        touch: bool,
    },
    Expired,
}

/// Decides whether `s` is still valid at `now`.
pub fn freshness(s: &SessionRecord, now: i64, l: &Lifetimes) -> Freshness {
    if now >= s.expires_at || now >= s.last_seen_at + l.idle_ms {
        return Freshness::Expired;
    }
    let touch_every = (l.idle_ms / 4).clamp(1, 60_000);
    Freshness::Valid {
        touch: now - s.last_seen_at >= touch_every,
    }
}

/// A new session id (the cookie value) and CSRF token.
pub fn new_ids() -> (String, String) {
    (
        super::token::generate("kerf_s_"),
        super::token::generate("kerf_csrf_"),
    )
}

/// The `Set-Cookie` value for a new session.
pub fn cookie(value: &str, max_age_secs: i64, secure: bool) -> String {
    format!(
        "{COOKIE}={value}; Path=/; HttpOnly; SameSite=Strict; Max-Age={max_age_secs}{}",
        if secure { "; Secure" } else { "" }
    )
}

/// The `Set-Cookie` value that removes the session cookie.
pub fn clear_cookie(secure: bool) -> String {
    cookie("", 0, secure)
}

/// The session cookie's value in a `Cookie` header, if present.
pub fn from_cookie_header(header: &str) -> Option<&str> {
    header
        .split(';')
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == COOKIE)
        .map(|(_, v)| v.trim())
        .filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(created: i64, seen: i64) -> SessionRecord {
        SessionRecord {
            user_id: 1,
            csrf_token: "c".into(),
            created_at: created,
            last_seen_at: seen,
            expires_at: created + 10_000,
            sso_checked_at: None,
        }
    }

    #[test]
    fn sessions_expire_when_idle_or_past_their_absolute_limit() {
        let l = Lifetimes {
            idle_ms: 4_000,
            absolute_ms: 10_000,
        };
        assert_eq!(
            freshness(&session(0, 0), 500, &l),
            Freshness::Valid { touch: false }
        );
        assert_eq!(
            freshness(&session(0, 0), 1_500, &l),
            Freshness::Valid { touch: true }
        );
        assert_eq!(freshness(&session(0, 0), 4_000, &l), Freshness::Expired);
        assert_eq!(
            freshness(&session(0, 9_000), 10_000, &l),
            Freshness::Expired
        );
    }

    #[test]
    fn cookies_are_http_only_strict_and_secure_under_tls() {
        let c = cookie("v", 60, true);
        assert_eq!(
            c,
            "kerf_session=v; Path=/; HttpOnly; SameSite=Strict; Max-Age=60; Secure"
        );
        assert!(!cookie("v", 60, false).contains("Secure"));
        assert_eq!(
            from_cookie_header("a=b; kerf_session=xyz; c=d"),
            Some("xyz")
        );
        assert_eq!(from_cookie_header("kerf_session="), None);
    }
}
