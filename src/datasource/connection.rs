//! Datasource settings as the API takes and shows them, and their pure validation.
//! Secret fields (basic password, bearer token, secret header values) are write-only:
//! they are split off into [`Secrets`] on input, sealed at rest, and shown only as
//! `passwordSet` / `tokenSet` / `valueSet` flags. Validation errors name the JSON path
//! and never echo a value.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::credentials::Secrets;
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

const NOT_NULL: &str = "must not be null; leave it out instead";

/// `v` as a whole number: `30` and `30.0` are the same JSON number.
fn whole(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f < u64::MAX as f64)
            .map(|f| f as u64)
    })
}

/// An optional object member: absent, or present and not `null`.
fn member<'a>(v: Option<&'a Value>, path: &str, errors: &mut Vec<FieldError>) -> Option<&'a Value> {
    match v {
        Some(Value::Null) => {
            errors.push(err(path, NOT_NULL));
            None
        }
        v => v,
    }
}

/// Reports the keys of `obj` that are not `known`, under `path`.
fn unknown(obj: &Map<String, Value>, known: &[&str], path: &str, errors: &mut Vec<FieldError>) {
    for key in obj.keys().filter(|k| !known.contains(&k.as_str())) {
        errors.push(err(&format!("{path}.{key}"), "unknown field"));
    }
}

fn err(path: &str, message: &str) -> FieldError {
    FieldError {
        path: path.to_string(),
        message: message.to_string(),
    }
}

fn string(
    obj: &Map<String, Value>,
    key: &str,
    path: &str,
    errors: &mut Vec<FieldError>,
) -> Option<String> {
    match obj.get(key) {
        None => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Null) => {
            errors.push(err(path, NOT_NULL));
            None
        }
        Some(_) => {
            errors.push(err(path, "must be a string"));
            None
        }
    }
}

fn number(
    obj: &Map<String, Value>,
    key: &str,
    default: u64,
    range: (u64, u64),
    errors: &mut Vec<FieldError>,
) -> u64 {
    match obj.get(key) {
        None => default,
        Some(Value::Null) => {
            errors.push(err(&format!("$.{key}"), NOT_NULL));
            default
        }
        Some(v) => match whole(v).filter(|n| (range.0..=range.1).contains(n)) {
            Some(n) => n,
            None => {
                errors.push(err(
                    &format!("$.{key}"),
                    &format!("must be an integer from {} to {}", range.0, range.1),
                ));
                default
            }
        },
    }
}

pub(super) const KNOWN: &[&str] = &[
    "name",
    "type",
    "url",
    "auth",
    "headers",
    "tls",
    "timeoutSeconds",
    "maxConcurrentQueries",
    "maxSamplesPerQuery",
    "maxSeriesPerQuery",
    "protocol",
    "stepSeconds",
    "clusterLabel",
    "clusterValue",
];

/// Validates a create/replace body. `previous` secrets are kept where the body omits a
/// secret (write-only fields are not echoed back, so a PUT cannot repeat them).
pub fn validate(
    body: &Value,
    previous: Option<&Secrets>,
) -> Result<(DatasourceSettings, Secrets), Vec<FieldError>> {
    let mut errors = Vec::new();
    let Some(obj) = body.as_object() else {
        return Err(vec![err("$", "must be a JSON object")]);
    };
    unknown(obj, KNOWN, "$", &mut errors);
    let name = string(obj, "name", "$.name", &mut errors).unwrap_or_default();
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
    let kind = string(obj, "type", "$.type", &mut errors).unwrap_or_else(|| "prometheus".into());
    if kind != "prometheus" {
        errors.push(err(
            "$.type",
            "must be \"prometheus\" (Prometheus, Thanos, Mimir, VictoriaMetrics)",
        ));
    }
    let url = string(obj, "url", "$.url", &mut errors).unwrap_or_default();
    match reqwest::Url::parse(&url) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => {
            if !u.username().is_empty() || u.password().is_some() {
                errors.push(err("$.url", "must not carry credentials; use auth"));
            }
        }
        _ => errors.push(err("$.url", "required: an absolute http or https URL")),
    }
    let previous = previous.cloned().unwrap_or_default();
    let mut secrets = Secrets::default();
    let auth_v = member(obj.get("auth"), "$.auth", &mut errors);
    let (auth_type, username) = auth(auth_v, &previous, &mut secrets, &mut errors);
    let headers_v = member(obj.get("headers"), "$.headers", &mut errors);
    let headers = headers(headers_v, &previous, &mut secrets, &mut errors);
    let tls_v = member(obj.get("tls"), "$.tls", &mut errors);
    let (ca_pem, insecure_skip_verify) = tls(tls_v, &mut errors);
    let cluster_label =
        string(obj, "clusterLabel", "$.clusterLabel", &mut errors).filter(|s| !s.is_empty());
    if let Some(l) = &cluster_label {
        if !l.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            || l.starts_with(|c: char| c.is_ascii_digit())
        {
            errors.push(err("$.clusterLabel", "must be a Prometheus label name"));
        }
    }
    let cluster_value =
        string(obj, "clusterValue", "$.clusterValue", &mut errors).filter(|s| !s.is_empty());
    let protocol =
        string(obj, "protocol", "$.protocol", &mut errors).unwrap_or_else(default_protocol);
    if super::prometheus::ProtocolChoice::parse(&protocol).is_none() {
        errors.push(err(
            "$.protocol",
            "must be auto, remoteRead, vmExport or queryRange",
        ));
    }
    let settings = DatasourceSettings {
        name,
        kind,
        url,
        auth_type,
        username,
        headers,
        ca_pem,
        insecure_skip_verify,
        timeout_seconds: number(
            obj,
            "timeoutSeconds",
            DEFAULT_TIMEOUT_SECONDS,
            (1, 600),
            &mut errors,
        ),
        max_concurrent_queries: number(
            obj,
            "maxConcurrentQueries",
            DEFAULT_MAX_CONCURRENT_QUERIES,
            (1, 64),
            &mut errors,
        ),
        max_samples_per_query: number(
            obj,
            "maxSamplesPerQuery",
            default_samples(),
            (10_000, 100_000_000),
            &mut errors,
        ),
        max_series_per_query: number(
            obj,
            "maxSeriesPerQuery",
            default_series(),
            (10, 1_000_000),
            &mut errors,
        ),
        protocol,
        step_seconds: number(
            obj,
            "stepSeconds",
            DEFAULT_STEP_SECONDS,
            (10, 3600),
            &mut errors,
        ),
        cluster_label,
        cluster_value,
    };
    if errors.is_empty() {
        Ok((settings, secrets))
    } else {
        Err(errors)
    }
}

fn auth(
    v: Option<&Value>,
    prev: &Secrets,
    out: &mut Secrets,
    errors: &mut Vec<FieldError>,
) -> (String, Option<String>) {
    let Some(v) = v else {
        return ("none".into(), None);
    };
    let Some(obj) = v.as_object() else {
        errors.push(err("$.auth", "must be an object"));
        return ("none".into(), None);
    };
    let kind = string(obj, "type", "$.auth.type", errors).unwrap_or_else(|| "none".into());
    let belongs: &[&str] = match kind.as_str() {
        "basic" => &["type", "username", "password"],
        "bearer" => &["type", "token"],
        _ => &["type"],
    };
    for key in obj.keys().filter(|k| !belongs.contains(&k.as_str())) {
        let message = if ["username", "password", "token"].contains(&key.as_str()) {
            format!("does not belong to auth type {kind:?}")
        } else {
            "unknown field".into()
        };
        errors.push(err(&format!("$.auth.{key}"), &message));
    }
    match kind.as_str() {
        "none" => ("none".into(), None),
        "basic" => {
            let user = string(obj, "username", "$.auth.username", errors).unwrap_or_default();
            if user.is_empty() {
                errors.push(err("$.auth.username", "required for basic auth"));
            }
            out.password = string(obj, "password", "$.auth.password", errors)
                .map(Secret::from)
                .or_else(|| prev.password.clone());
            if out.password.as_ref().is_none_or(Secret::is_empty) {
                errors.push(err(
                    "$.auth.password",
                    "required for basic auth (write-only)",
                ));
            }
            ("basic".into(), Some(user))
        }
        "bearer" => {
            out.token = string(obj, "token", "$.auth.token", errors)
                .map(Secret::from)
                .or_else(|| prev.token.clone());
            if out.token.as_ref().is_none_or(Secret::is_empty) {
                errors.push(err("$.auth.token", "required for bearer auth (write-only)"));
            }
            ("bearer".into(), None)
        }
        _ => {
            errors.push(err("$.auth.type", "must be none, basic or bearer"));
            ("none".into(), None)
        }
    }
}

fn headers(
    v: Option<&Value>,
    prev: &Secrets,
    out: &mut Secrets,
    errors: &mut Vec<FieldError>,
) -> Vec<HeaderSetting> {
    let Some(v) = v else {
        return Vec::new();
    };
    let Some(items) = v.as_array() else {
        errors.push(err("$.headers", "must be an array"));
        return Vec::new();
    };
    let mut result = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let path = format!("$.headers[{i}]");
        let Some(obj) = item.as_object() else {
            errors.push(err(&path, "must be an object"));
            continue;
        };
        unknown(obj, &["name", "value", "secret"], &path, errors);
        let name = string(obj, "name", &format!("{path}.name"), errors).unwrap_or_default();
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
        let secret = match obj.get("secret") {
            None => false,
            Some(Value::Bool(b)) => *b,
            Some(Value::Null) => {
                errors.push(err(&format!("{path}.secret"), NOT_NULL));
                false
            }
            Some(_) => {
                errors.push(err(&format!("{path}.secret"), "must be a boolean"));
                false
            }
        };
        let value = string(obj, "value", &format!("{path}.value"), errors);
        if value
            .as_deref()
            .is_some_and(|v| reqwest::header::HeaderValue::from_str(v).is_err())
        {
            errors.push(err(
                &format!("{path}.value"),
                "must be visible ASCII characters, spaces or tabs",
            ));
        }
        if secret {
            match value
                .map(Secret::from)
                .or_else(|| prev.headers.get(&name).cloned())
            {
                Some(v) => {
                    out.headers.insert(name.clone(), v);
                }
                None => errors.push(err(
                    &format!("{path}.value"),
                    "required (write-only for secret headers)",
                )),
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
                value,
                secret,
            });
        }
    }
    result
}

fn tls(v: Option<&Value>, errors: &mut Vec<FieldError>) -> (Option<String>, bool) {
    let Some(v) = v else {
        return (None, false);
    };
    let Some(obj) = v.as_object() else {
        errors.push(err("$.tls", "must be an object"));
        return (None, false);
    };
    unknown(obj, &["caPem", "insecureSkipVerify"], "$.tls", errors);
    let pem = string(obj, "caPem", "$.tls.caPem", errors).filter(|s| !s.is_empty());
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
    let insecure = match obj.get("insecureSkipVerify") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Null) => {
            errors.push(err("$.tls.insecureSkipVerify", NOT_NULL));
            false
        }
        Some(_) => {
            errors.push(err("$.tls.insecureSkipVerify", "must be a boolean"));
            false
        }
    };
    (pem, insecure)
}
