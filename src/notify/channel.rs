//! Notification channels: the four kinds (Slack, Teams, signed webhook, email), what a
//! request may say about one, how it is checked, what is secret (the URL, the signing
//! secret, the SMTP password: sealed at rest, write-only, never answered) and how a
//! channel is shown (the target masked).

use serde::{Deserialize, Serialize};

use super::FieldError;
use crate::secret::destination::{give_again, is_loopback, Destination};
use crate::secret::{reveal, Secret, MASK};

/// Longest channel name, in characters.
pub const MAX_NAME_CHARS: usize = 100;
/// Longest webhook URL accepted.
const MAX_URL_CHARS: usize = 2048;
/// Signing secrets must be at least this long (HMAC-SHA256 wants entropy).
pub const MIN_SIGNING_SECRET_CHARS: usize = 16;
/// At most this many email recipients per channel.
const MAX_RECIPIENTS: usize = 50;

/// Where a channel delivers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ChannelKind {
    /// A Slack incoming webhook (Block Kit message).
    Slack,
    /// A Microsoft Teams incoming webhook (Adaptive Card).
    Teams,
    /// Any HTTP endpoint: kerf's JSON, signed with HMAC-SHA256.
    Webhook,
    /// An SMTP server.
    Email,
}

impl ChannelKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ChannelKind::Slack => "slack",
            ChannelKind::Teams => "teams",
            ChannelKind::Webhook => "webhook",
            ChannelKind::Email => "email",
        }
    }

    pub fn parse(s: &str) -> Option<ChannelKind> {
        [
            ChannelKind::Slack,
            ChannelKind::Teams,
            ChannelKind::Webhook,
            ChannelKind::Email,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }

    fn uses_url(self) -> bool {
        self != ChannelKind::Email
    }
}

/// How the SMTP connection is protected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum SmtpSecurity {
    /// Plain connection upgraded with STARTTLS, which must succeed (port 587).
    Starttls,
    /// TLS from the first byte (port 465).
    Tls,
    /// No TLS: only for a relay on a trusted network or loopback (port 25).
    None,
}

impl SmtpSecurity {
    fn default_port(self) -> u16 {
        match self {
            SmtpSecurity::Starttls => 587,
            SmtpSecurity::Tls => 465,
            SmtpSecurity::None => 25,
        }
    }
}

/// The secret values of a channel: sealed at rest (this JSON is what the box seals),
/// never answered, never logged.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChannelSecrets {
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "reveal::option"
    )]
    pub url: Option<Secret>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "reveal::option"
    )]
    pub signing_secret: Option<Secret>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "reveal::option"
    )]
    pub smtp_password: Option<Secret>,
}

impl ChannelSecrets {
    /// Every secret value, for scrubbing text that might echo one.
    pub fn values(&self) -> Vec<&str> {
        [&self.url, &self.signing_secret, &self.smtp_password]
            .into_iter()
            .flatten()
            .map(Secret::expose)
            .filter(|s| !s.is_empty())
            .collect()
    }

    /// `text` with every secret value (and the URL's path and query) replaced by the
    /// mask.
    pub fn scrub(&self, text: &str) -> String {
        let mut out = text.to_string();
        for v in self.values() {
            out = out.replace(v, MASK);
        }
        if let Some(tail) = self
            .url
            .as_ref()
            .map(Secret::expose)
            .and_then(url_secret_part)
        {
            out = out.replace(&tail, MASK);
        }
        out
    }
}

/// The secret part of a webhook URL: everything after the host (path, query,
/// fragment), as written.
fn url_secret_part(url: &str) -> Option<String> {
    let after_scheme = url.find("://")? + 3;
    let rest = &url[after_scheme..];
    let tail = &rest[rest.find(['/', '?', '#'])?..];
    (tail.len() > 1).then(|| tail.to_string())
}

/// Non-secret email settings, stored in clear.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EmailSettings {
    pub host: String,
    pub port: u16,
    pub security: SmtpSecurity,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    pub from: String,
    pub to: Vec<String>,
    /// Extra CA certificates (PEM) trusted for this server, e.g. an internal CA.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_pem: Option<String>,
}

/// What a create or replace request says about email delivery.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct EmailInput {
    pub host: String,
    pub port: Option<u16>,
    pub security: Option<SmtpSecurity>,
    pub username: Option<String>,
    /// Write-only; omitted on replace keeps the stored one.
    pub password: Option<String>,
    pub from: String,
    pub to: Vec<String>,
    pub ca_pem: Option<String>,
}

/// `POST /v1/notifications/channels` and `PUT .../channels/{id}`.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ChannelInput {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: ChannelKind,
    /// The team whose channel this is; absent = a fleet channel.
    #[serde(default)]
    pub team_id: Option<i64>,
    #[serde(default = "enabled_by_default")]
    pub enabled: bool,
    /// Slack, Teams and webhook: where to POST. Write-only; omitted on replace keeps it.
    pub url: Option<String>,
    /// Webhook: the HMAC key. Write-only; omitted on replace keeps it.
    pub signing_secret: Option<String>,
    pub email: Option<EmailInput>,
    /// On create: also create the default rule (rollbacks, failures, readiness, pauses,
    /// failed runs). Default true.
    pub default_rules: Option<bool>,
    /// Why (recorded in the audit).
    pub reason: Option<String>,
}

fn enabled_by_default() -> bool {
    true
}

/// A checked channel: settings to store in clear, secrets to seal.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidChannel {
    pub name: String,
    pub kind: ChannelKind,
    pub team_id: Option<i64>,
    pub enabled: bool,
    pub email: Option<EmailSettings>,
    pub secrets: ChannelSecrets,
}

impl ValidChannel {
    /// Where it goes, with everything secret masked.
    pub fn target_masked(&self) -> String {
        match (&self.email, &self.secrets.url) {
            (Some(e), _) => format!("smtp://{}:{} → {}", e.host, e.port, e.to.join(", ")),
            (None, Some(url)) => mask_url(url.expose()),
            (None, None) => String::new(),
        }
    }
}

/// `scheme://host[:port]/***`, keeping the last 4 characters of a long secret path.
pub fn mask_url(url: &str) -> String {
    let Ok(u) = reqwest::Url::parse(url) else {
        return MASK.into();
    };
    let host = u.host_str().unwrap_or("");
    let port = u.port().map(|p| format!(":{p}")).unwrap_or_default();
    let secret = url_secret_part(url).unwrap_or_default();
    let tail = if secret.chars().count() >= 16 {
        let last: String = secret
            .chars()
            .rev()
            .take(4)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        format!("…{last}")
    } else {
        MASK.into()
    };
    format!("{}://{host}{port}/{tail}", u.scheme())
}

fn err(field: &str, message: impl Into<String>) -> FieldError {
    FieldError {
        field: field.to_string(),
        message: message.into(),
    }
}

/// What a replace starts from: the stored channel's kind, secrets and email settings.
#[derive(Debug, Clone, Copy)]
pub struct Stored<'a> {
    pub kind: ChannelKind,
    pub secrets: &'a ChannelSecrets,
    pub email: Option<&'a EmailSettings>,
}

/// Checks `input`; `previous` (on replace: the stored channel) supplies secrets the
/// request leaves out, while their destination stays the same
/// (`crate::secret::destination`).
pub fn validate(
    input: ChannelInput,
    previous: Option<Stored<'_>>,
) -> Result<ValidChannel, Vec<FieldError>> {
    let mut errors = Vec::new();
    let name = input.name.trim().to_string();
    if let Err(e) = crate::names::free(&input.name, MAX_NAME_CHARS) {
        errors.push(err("name", e));
    }
    // Secrets carry over only while the kind stays the same.
    let same_kind = previous.filter(|p| p.kind == input.kind);
    let mut kept = same_kind.map(|p| p.secrets.clone()).unwrap_or_default();
    let mut secrets = ChannelSecrets::default();
    if input.kind.uses_url() {
        let before = kept.url.clone();
        secrets.url = check_url(input.url, kept.url.take(), &mut errors);
        // A signing secret belongs to the receiver's origin.
        let moved = match (&before, &secrets.url) {
            (Some(b), Some(n)) => url_destination(n)
                .and_then(|n| url_destination(b).map_or(Some("URL".into()), |b| n.moved_from(&b))),
            _ => None,
        };
        if let Some(moved) = moved {
            if kept.signing_secret.take().is_some() && input.signing_secret.is_none() {
                errors.push(err("signingSecret", give_again("signing secret", &moved)));
            }
        }
    } else if input.url.is_some() {
        errors.push(err("url", "email channels have no URL; set email instead"));
    }
    if input.kind == ChannelKind::Webhook {
        if !errors.iter().any(|e| e.field == "signingSecret") {
            secrets.signing_secret =
                check_secret(input.signing_secret, kept.signing_secret, &mut errors);
        }
    } else if input.signing_secret.is_some() {
        errors.push(err("signingSecret", "only webhook channels are signed"));
    }
    let email = match (input.kind, input.email) {
        (ChannelKind::Email, Some(e)) => {
            let stored = same_kind.and_then(|p| p.email);
            let (settings, password) = check_email(e, kept.smtp_password, stored, &mut errors);
            secrets.smtp_password = password;
            Some(settings)
        }
        (ChannelKind::Email, None) => {
            errors.push(err("email", "required for email channels"));
            None
        }
        (_, Some(_)) => {
            errors.push(err("email", "only email channels take email settings"));
            None
        }
        (_, None) => None,
    };
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(ValidChannel {
        name,
        kind: input.kind,
        team_id: input.team_id,
        enabled: input.enabled,
        email,
        secrets,
    })
}

fn check_url(
    given: Option<String>,
    kept: Option<Secret>,
    errors: &mut Vec<FieldError>,
) -> Option<Secret> {
    let Some(url) = given.map(|u| Secret::from(u.trim())).or(kept) else {
        errors.push(err("url", "required: the incoming webhook URL"));
        return None;
    };
    let ok = url.expose().len() <= MAX_URL_CHARS
        && reqwest::Url::parse(url.expose()).is_ok_and(|u| {
            matches!(u.scheme(), "http" | "https") && u.has_host() && u.username().is_empty()
        });
    if !ok {
        errors.push(err(
            "url",
            format!(
                "must be an http(s) URL without credentials, at most {MAX_URL_CHARS} characters"
            ),
        ));
        return None;
    }
    Some(url)
}

fn check_secret(
    given: Option<String>,
    kept: Option<Secret>,
    errors: &mut Vec<FieldError>,
) -> Option<Secret> {
    match given.map(Secret::from).or(kept) {
        Some(s) if (MIN_SIGNING_SECRET_CHARS..=256).contains(&s.expose().chars().count()) => {
            Some(s)
        }
        Some(_) => {
            errors.push(err(
                "signingSecret",
                format!("must be {MIN_SIGNING_SECRET_CHARS} to 256 characters"),
            ));
            None
        }
        None => {
            errors.push(err(
                "signingSecret",
                "required: receivers verify X-Kerf-Signature with it",
            ));
            None
        }
    }
}

fn url_destination(url: &Secret) -> Option<Destination> {
    Destination::of_url(url.expose(), None)
}

impl EmailSettings {
    /// Where its password goes: the security mode, host, port and user name.
    fn destination(&self) -> Destination {
        Destination {
            scheme: format!("{:?}", self.security).to_ascii_lowercase(),
            host: self.host.to_ascii_lowercase(),
            port: self.port,
            user: self.username.clone(),
        }
    }
}

fn check_email(
    e: EmailInput,
    kept_password: Option<Secret>,
    stored: Option<&EmailSettings>,
    errors: &mut Vec<FieldError>,
) -> (EmailSettings, Option<Secret>) {
    let host = e.host.trim().to_string();
    if host.is_empty() || host.len() > 253 || host.contains(char::is_whitespace) {
        errors.push(err("email.host", "must be a host name or address"));
    }
    let security = e.security.unwrap_or(SmtpSecurity::Starttls);
    let port = e.port.unwrap_or(security.default_port());
    if port == 0 {
        errors.push(err("email.port", "must be 1 to 65535"));
    }
    if e.from.parse::<lettre::message::Mailbox>().is_err() {
        errors.push(err(
            "email.from",
            "must be an email address (or \"Name <address>\")",
        ));
    }
    if e.to.is_empty() || e.to.len() > MAX_RECIPIENTS {
        errors.push(err(
            "email.to",
            format!("must list 1 to {MAX_RECIPIENTS} addresses"),
        ));
    }
    for (i, to) in e.to.iter().enumerate() {
        if to.parse::<lettre::message::Mailbox>().is_err() {
            errors.push(err(&format!("email.to[{i}]"), "must be an email address"));
        }
    }
    let username = e
        .username
        .map(|u| u.trim().to_string())
        .filter(|u| !u.is_empty());
    let given = e.password.filter(|p| !p.is_empty()).map(Secret::from);
    let destination = Destination {
        scheme: format!("{security:?}").to_ascii_lowercase(),
        host: host.to_ascii_lowercase(),
        port,
        user: username.clone(),
    };
    // The stored password goes only where it went before.
    let moved = stored.and_then(|s| destination.moved_from(&s.destination()));
    let password = match (&moved, given) {
        (_, Some(p)) => Some(p),
        (None, None) => kept_password,
        (Some(moved), None) => {
            if kept_password.is_some() && username.is_some() {
                errors.push(err("email.password", give_again("password", moved)));
            }
            None
        }
    };
    if username.is_some() && password.is_none() && moved.is_none() {
        errors.push(err("email.password", "required when email.username is set"));
    }
    if username.is_some() && security == SmtpSecurity::None && !is_loopback(&host) {
        errors.push(err(
            "email.security",
            "a password is sent only over TLS (starttls or tls), or to a loopback host",
        ));
    }
    let ca_pem = e.ca_pem.filter(|p| !p.trim().is_empty());
    if let Some(pem) = &ca_pem {
        if !is_pem_certificates(pem) {
            errors.push(err("email.caPem", "must be PEM certificates"));
        }
    }
    let settings = EmailSettings {
        host,
        port,
        security,
        username,
        from: e.from.trim().to_string(),
        to: e.to.iter().map(|t| t.trim().to_string()).collect(),
        ca_pem,
    };
    (settings, password)
}

/// True when `pem` holds at least one certificate and nothing unreadable.
fn is_pem_certificates(pem: &str) -> bool {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::CertificateDer;
    let certs: Result<Vec<_>, _> = CertificateDer::pem_slice_iter(pem.as_bytes()).collect();
    certs.is_ok_and(|c| !c.is_empty())
}

#[cfg(test)]
#[path = "channel_tests.rs"]
mod tests;
