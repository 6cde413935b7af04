//! Datasource settings as stored, and their pure validation from the document the API
//! takes (`input::DatasourceInput`). Secret fields (basic password, bearer token,
//! secret header values) are write-only: they are split off into [`Secrets`] on input,
//! sealed at rest, and shown only as `passwordSet` / `tokenSet` / `valueSet` flags.
//! Validation errors name the JSON path and never echo a value.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::credentials::Secrets;
use super::input::{self, AuthInput, DatasourceKind, HeaderInput, TlsInput};
use super::view::AuthKind;
use crate::secret::destination::{give_again, Destination};
use crate::secret::Secret;

pub const DEFAULT_TIMEOUT_SECONDS: u64 = 30;
pub const DEFAULT_MAX_CONCURRENT_QUERIES: u64 = 4;
pub const DEFAULT_STEP_SECONDS: u64 = 60;
pub const DEFAULT_PROTOCOL: &str = "auto";

fn default_protocol() -> String {
    DEFAULT_PROTOCOL.into()
}
fn default_samples() -> u64 {
    super::plan::DEFAULT_SAMPLES_PER_REQUEST
}
fn default_series() -> u64 {
    super::plan::DEFAULT_SERIES_PER_REQUEST
}

/// The non-secret settings of one datasource (stored as JSON beside the sealed secrets).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DatasourceSettings {
    pub name: String,
    /// `prometheus` (Prometheus, Thanos, Mimir, VictoriaMetrics).
    #[serde(rename = "type")]
    pub kind: String,
    pub url: String,
    /// `none`, `basic` or `bearer`.
    pub auth_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// Extra headers: (name, value when not secret, secret flag).
    #[serde(default)]
    pub headers: Vec<HeaderSetting>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_pem: Option<String>,
    #[serde(default)]
    pub insecure_skip_verify: bool,
    pub timeout_seconds: u64,
    pub max_concurrent_queries: u64,
    /// Samples one request may ask for (load budget; stored settings without it get the
    /// default).
    #[serde(default = "default_samples")]
    pub max_samples_per_query: u64,
    /// Series one request may select (load budget).
    #[serde(default = "default_series")]
    pub max_series_per_query: u64,
    /// How usage is read: `auto` (remote read when the server streams it, else
    /// VictoriaMetrics's export API when it answers it, else range selectors over the
    /// query API), `remoteRead`, `vmExport` or `queryRange` (range selectors).
    #[serde(default = "default_protocol")]
    pub protocol: String,
    pub step_seconds: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_label: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_value: Option<String>,
}

/// One custom header; a secret header's value lives in [`Secrets`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeaderSetting {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(default)]
    pub secret: bool,
}

/// One validation problem: the JSON path and what is wrong.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldError {
    pub path: String,
    pub message: String,
}

impl FieldError {
    pub fn new(path: &str, message: &str) -> FieldError {
        FieldError {
            path: path.to_string(),
            message: message.to_string(),
        }
    }
}

fn err(path: &str, message: &str) -> FieldError {
    FieldError::new(path, message)
}

/// Validates a create/replace body: read as [`input::DatasourceInput`] (every member
/// of the wrong type or unknown refused at once), then checked, every bad field
/// reported. `previous` secrets are kept where the body omits a secret (write-only
/// fields are not echoed back, so a PUT cannot repeat them). A `null` reads as left
/// out: the API refuses nulls before this, and a config file's unset keys come as null.
pub fn validate(
    body: &Value,
    previous: Option<(&DatasourceSettings, &Secrets)>,
) -> Result<(DatasourceSettings, Secrets), Vec<FieldError>> {
    let mut errors = Vec::new();
    let Some(input) = input::read(body, &mut errors) else {
        return Err(errors);
    };
    check_name(&input.name, &mut errors);
    check_url(&input.url, &mut errors);
    let moved = previous.and_then(|(before, _)| moved(before, &input));
    let kept = Kept {
        secrets: previous.map(|(_, s)| s.clone()).unwrap_or_default(),
        moved,
    };
    let mut secrets = Secrets::default();
    // A refused auth type is named as sent, as the fields that do not belong to it.
    let sent_auth = body.pointer("/auth/type").and_then(Value::as_str);
    let (auth_type, username) = auth(input.auth, sent_auth, &kept, &mut secrets, &mut errors);
    let headers = headers(input.headers, &kept, &mut secrets, &mut errors);
    let (ca_pem, insecure_skip_verify) = tls(input.tls, &mut errors);
    let cluster_label = input.cluster_label.filter(|s| !s.is_empty());
    check_label(cluster_label.as_deref(), &mut errors);
    let mut number = |value: Option<u64>, key: &str, default: u64| {
        let (range, message) = input::range(key).expect("a whole-number setting");
        match value {
            None => default,
            Some(n) if range.contains(&n) => n,
            Some(_) => {
                errors.push(err(&format!("$.{key}"), &message));
                default
            }
        }
    };
    let settings = DatasourceSettings {
        name: input.name,
        kind: input
            .kind
            .unwrap_or(DatasourceKind::Prometheus)
            .as_str()
            .into(),
        url: input.url,
        auth_type,
        username,
        headers,
        ca_pem,
        insecure_skip_verify,
        timeout_seconds: number(
            input.timeout_seconds,
            "timeoutSeconds",
            DEFAULT_TIMEOUT_SECONDS,
        ),
        max_concurrent_queries: number(
            input.max_concurrent_queries,
            "maxConcurrentQueries",
            DEFAULT_MAX_CONCURRENT_QUERIES,
        ),
        max_samples_per_query: number(
            input.max_samples_per_query,
            "maxSamplesPerQuery",
            default_samples(),
        ),
        max_series_per_query: number(
            input.max_series_per_query,
            "maxSeriesPerQuery",
            default_series(),
        ),
        protocol: input
            .protocol
            .map_or_else(default_protocol, |p| p.as_str().into()),
        step_seconds: number(input.step_seconds, "stepSeconds", DEFAULT_STEP_SECONDS),
        cluster_label,
        cluster_value: input.cluster_value.filter(|s| !s.is_empty()),
    };
    if errors.is_empty() {
        Ok((settings, secrets))
    } else {
        Err(errors)
    }
}

/// The stored secrets a replace may keep, unless the destination moved.
struct Kept {
    secrets: Secrets,
    /// What changed about where the secrets would go (`"host and port"`).
    moved: Option<String>,
}

impl Kept {
    /// The stored secret `pick` selects, while the destination stays.
    fn get<T: Clone>(&self, pick: impl Fn(&Secrets) -> Option<&T>) -> Option<T> {
        match self.moved {
            None => pick(&self.secrets).cloned(),
            Some(_) => None,
        }
    }

    /// The message for a missing `what`: "give it again" when a stored one stayed behind.
    fn missing(&self, what: &str, stored: bool, otherwise: &str) -> String {
        match &self.moved {
            Some(moved) if stored => give_again(what, moved),
            _ => otherwise.to_string(),
        }
    }
}

/// What changed between the stored datasource's destination and the new body's: the
/// URL's origin, or the basic-auth user name.
fn moved(before: &DatasourceSettings, input: &input::DatasourceInput) -> Option<String> {
    let user = input.auth.as_ref().and_then(|a| a.username.as_deref());
    let now = Destination::of_url(&input.url, user)?;
    match Destination::of_url(&before.url, before.username.as_deref()) {
        Some(then) => now.moved_from(&then),
        None => Some("URL".into()),
    }
}

fn check_name(name: &str, errors: &mut Vec<FieldError>) {
    if name.is_empty()
        || name.len() > 100
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    {
        errors.push(err(
            "$.name",
            "required: 1-100 characters of letters, digits, '-', '_' or '.'",
        ));
    }
}

fn check_url(url: &str, errors: &mut Vec<FieldError>) {
    match reqwest::Url::parse(url) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => {
            if !u.username().is_empty() || u.password().is_some() {
                errors.push(err("$.url", "must not carry credentials; use auth"));
            }
        }
        _ => errors.push(err("$.url", "required: an absolute http or https URL")),
    }
}

fn check_label(label: Option<&str>, errors: &mut Vec<FieldError>) {
    if let Some(l) = label {
        if !l.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            || l.starts_with(|c: char| c.is_ascii_digit())
        {
            errors.push(err("$.clusterLabel", "must be a Prometheus label name"));
        }
    }
}

fn auth(
    input: Option<AuthInput>,
    sent: Option<&str>,
    kept: &Kept,
    out: &mut Secrets,
    errors: &mut Vec<FieldError>,
) -> (String, Option<String>) {
    let Some(a) = input else {
        return ("none".into(), None);
    };
    let named = a.kind.map(AuthKind::as_str).or(sent).unwrap_or("none");
    let belongs: &[&str] = match named {
        "basic" => &["username", "password"],
        "bearer" => &["token"],
        _ => &[],
    };
    let given = [
        ("username", a.username.is_some()),
        ("password", a.password.is_some()),
        ("token", a.token.is_some()),
    ];
    for (key, _) in given.iter().filter(|(k, set)| *set && !belongs.contains(k)) {
        errors.push(err(
            &format!("$.auth.{key}"),
            &format!("does not belong to auth type {named:?}"),
        ));
    }
    match a.kind {
        // Left out, or refused (and reported) when read.
        None | Some(AuthKind::None) => ("none".into(), None),
        Some(AuthKind::Basic) => {
            let user = a.username.unwrap_or_default();
            if user.is_empty() {
                errors.push(err("$.auth.username", "required for basic auth"));
            }
            out.password = a.password.or_else(|| kept.get(|s| s.password.as_ref()));
            if out.password.as_ref().is_none_or(Secret::is_empty) {
                let stored = kept.secrets.password.is_some();
                let otherwise = "required for basic auth (write-only)";
                errors.push(err(
                    "$.auth.password",
                    &kept.missing("password", stored, otherwise),
                ));
            }
            ("basic".into(), Some(user))
        }
        Some(AuthKind::Bearer) => {
            out.token = a.token.or_else(|| kept.get(|s| s.token.as_ref()));
            if out.token.as_ref().is_none_or(Secret::is_empty) {
                let stored = kept.secrets.token.is_some();
                let otherwise = "required for bearer auth (write-only)";
                errors.push(err(
                    "$.auth.token",
                    &kept.missing("token", stored, otherwise),
                ));
            }
            ("bearer".into(), None)
        }
    }
}

fn headers(
    input: Option<Vec<HeaderInput>>,
    kept: &Kept,
    out: &mut Secrets,
    errors: &mut Vec<FieldError>,
) -> Vec<HeaderSetting> {
    let mut result = Vec::new();
    for (i, h) in input.unwrap_or_default().into_iter().enumerate() {
        let path = format!("$.headers[{i}]");
        if errors.iter().any(|e| e.path == path) {
            continue; // refused whole when read
        }
        let name = h.name;
        if result
            .iter()
            .any(|h: &HeaderSetting| h.name.eq_ignore_ascii_case(&name))
        {
            errors.push(err(&format!("{path}.name"), "is given twice"));
        }
        let valid =
            !name.is_empty() && reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_ok();
        let lower = name.to_ascii_lowercase();
        if !valid
            || ["authorization", "content-type", "host", "content-length"].contains(&lower.as_str())
        {
            errors.push(err(&format!("{path}.name"), "must be a valid header name other than Authorization, Content-Type, Host or Content-Length"));
        }
        let secret = h.secret.unwrap_or(false);
        let value = h.value;
        if value
            .as_ref()
            .is_some_and(|v| reqwest::header::HeaderValue::from_str(v.expose()).is_err())
        {
            errors.push(err(
                &format!("{path}.value"),
                "must be visible ASCII characters, spaces or tabs",
            ));
        }
        if secret {
            match value.or_else(|| kept.get(|s| s.headers.get(&name))) {
                Some(v) => {
                    out.headers.insert(name.clone(), v);
                }
                None => {
                    let stored = kept.secrets.headers.contains_key(&name);
                    let otherwise = "required (write-only for secret headers)";
                    let message = kept.missing("secret header value", stored, otherwise);
                    errors.push(err(&format!("{path}.value"), &message));
                }
            }
            result.push(HeaderSetting {
                name,
                value: None,
                secret,
            });
        } else {
            if value.is_none() {
                errors.push(err(&format!("{path}.value"), "required"));
            }
            result.push(HeaderSetting {
                name,
                value: value.map(|v| v.expose().to_string()),
                secret,
            });
        }
    }
    result
}

fn tls(input: Option<TlsInput>, errors: &mut Vec<FieldError>) -> (Option<String>, bool) {
    let Some(t) = input else {
        return (None, false);
    };
    let pem = t.ca_pem.filter(|s| !s.is_empty());
    if let Some(p) = &pem {
        if reqwest::Certificate::from_pem_bundle(p.as_bytes())
            .map(|c| c.is_empty())
            .unwrap_or(true)
        {
            errors.push(err(
                "$.tls.caPem",
                "must be a PEM bundle of CA certificates",
            ));
        }
    }
    (pem, t.insecure_skip_verify.unwrap_or(false))
}
