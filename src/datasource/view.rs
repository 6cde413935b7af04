//! A datasource as the API shows it (no secret values: each secret is a `…Set` flag) and
//! the document `POST`/`PUT /v1/datasources…` read. `connection::validate` reads that
//! document by hand, so every bad field is reported at once; [`DatasourceInput`] is its
//! schema, and a test keeps the two field lists equal.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::connection::DatasourceSettings;
use super::credentials::Secrets;

/// A datasource without its secrets.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DatasourceView {
    pub id: i64,
    pub name: String,
    /// Always `prometheus` (Prometheus, Thanos, Mimir, VictoriaMetrics).
    #[serde(rename = "type")]
    pub kind: String,
    pub url: String,
    pub auth: AuthView,
    pub headers: Vec<HeaderView>,
    pub tls: TlsView,
    pub timeout_seconds: u64,
    pub max_concurrent_queries: u64,
    pub max_samples_per_query: u64,
    pub max_series_per_query: u64,
    /// `auto`, `remoteRead` or `queryRange`.
    pub protocol: String,
    pub step_seconds: u64,
    /// `null` when the backend holds one cluster.
    pub cluster_label: Option<String>,
    /// `null`: the kerf cluster's name.
    pub cluster_value: Option<String>,
    /// The clusters reading usage from it.
    pub clusters: Vec<String>,
}

/// How kerf authenticates; secrets only as whether they are set.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuthView {
    #[serde(rename = "type")]
    pub kind: AuthKind,
    /// `basic` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// `basic` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub password_set: Option<bool>,
    /// `bearer` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token_set: Option<bool>,
}

/// One custom header: a plain one shows its value, a secret one whether it is set.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct HeaderView {
    pub name: String,
    pub secret: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value_set: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TlsView {
    pub ca_pem_set: bool,
    pub insecure_skip_verify: bool,
}

/// The authentication kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum AuthKind {
    None,
    Basic,
    Bearer,
}

impl AuthKind {
    pub fn parse(s: &str) -> Option<AuthKind> {
        match s {
            "none" => Some(AuthKind::None),
            "basic" => Some(AuthKind::Basic),
            "bearer" => Some(AuthKind::Bearer),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            AuthKind::None => "none",
            AuthKind::Basic => "basic",
            AuthKind::Bearer => "bearer",
        }
    }
}

/// The API view of stored settings and secrets.
pub fn public_view(
    id: i64,
    s: &DatasourceSettings,
    secrets: &Secrets,
    clusters: &[String],
) -> DatasourceView {
    let kind = AuthKind::parse(&s.auth_type).unwrap_or(AuthKind::None);
    let auth = AuthView {
        kind,
        username: (kind == AuthKind::Basic).then(|| s.username.clone().unwrap_or_default()),
        password_set: (kind == AuthKind::Basic).then_some(secrets.password.is_some()),
        token_set: (kind == AuthKind::Bearer).then_some(secrets.token.is_some()),
    };
    let headers = s
        .headers
        .iter()
        .map(|h| HeaderView {
            name: h.name.clone(),
            secret: h.secret,
            value: (!h.secret).then(|| h.value.clone().unwrap_or_default()),
            value_set: h.secret.then(|| secrets.headers.contains_key(&h.name)),
        })
        .collect();
    DatasourceView {
        id,
        name: s.name.clone(),
        kind: s.kind.clone(),
        url: s.url.clone(),
        auth,
        headers,
        tls: TlsView {
            ca_pem_set: s.ca_pem.is_some(),
            insecure_skip_verify: s.insecure_skip_verify,
        },
        timeout_seconds: s.timeout_seconds,
        max_concurrent_queries: s.max_concurrent_queries,
        max_samples_per_query: s.max_samples_per_query,
        max_series_per_query: s.max_series_per_query,
        protocol: s.protocol.clone(),
        step_seconds: s.step_seconds,
        cluster_label: s.cluster_label.clone(),
        cluster_value: s.cluster_value.clone(),
        clusters: clusters.to_vec(),
    }
}

/// What `POST /v1/datasources` and `PUT /v1/datasources/{id}` read. No field may be
/// `null` (leave it out instead). Secret fields (`auth.password`, `auth.token`, a
/// secret header's `value`) are write-only; on PUT, one left out keeps its stored value.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[allow(dead_code)]
pub struct DatasourceInput {
    /// 1-100 letters, digits, `-`, `_` or `.`; unique.
    #[schema(pattern = r"^[A-Za-z0-9._-]{1,100}$")]
    name: String,
    /// Only `prometheus` (the default) is known.
    #[serde(rename = "type")]
    kind: Option<DatasourceKind>,
    /// An absolute http or https URL without credentials (use `auth`).
    #[schema(format = "uri")]
    url: String,
    /// Default `{"type": "none"}`.
    auth: Option<AuthInput>,
    headers: Option<Vec<HeaderInput>>,
    tls: Option<TlsInput>,
    #[schema(minimum = 1, maximum = 600)]
    timeout_seconds: Option<u64>,
    #[schema(minimum = 1, maximum = 64)]
    max_concurrent_queries: Option<u64>,
    #[schema(minimum = 10000, maximum = 100000000)]
    max_samples_per_query: Option<u64>,
    #[schema(minimum = 10, maximum = 1000000)]
    max_series_per_query: Option<u64>,
    /// Default `auto`: remote read when the server streams it, else `query_range`.
    protocol: Option<ProtocolName>,
    #[schema(minimum = 10, maximum = 3600)]
    step_seconds: Option<u64>,
    /// The label that tells clusters apart in a shared backend; empty for none.
    #[schema(pattern = r"^([A-Za-z_][A-Za-z0-9_]*)?$")]
    cluster_label: Option<String>,
    /// That label's value for the kerf cluster (empty: the cluster's name).
    cluster_value: Option<String>,
    /// Goes to the audit.
    #[schema(max_length = 1024)]
    reason: Option<String>,
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)]
enum DatasourceKind {
    Prometheus,
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
enum ProtocolName {
    Auto,
    RemoteRead,
    QueryRange,
}

/// `type` decides which other fields belong: `basic` takes `username` and
/// `password`, `bearer` takes `token`, `none` takes neither.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct AuthInput {
    /// Default `none`.
    #[serde(rename = "type")]
    kind: Option<AuthKind>,
    #[schema(min_length = 1)]
    username: Option<String>,
    /// Write-only.
    #[schema(min_length = 1)]
    password: Option<String>,
    /// Write-only.
    #[schema(min_length = 1)]
    token: Option<String>,
}

/// A header sent with every query (not Authorization, Content-Type, Host or
/// Content-Length); a secret one's value is write-only.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct HeaderInput {
    #[schema(pattern = r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")]
    name: String,
    value: Option<String>,
    /// Default false.
    secret: Option<bool>,
}

#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[allow(dead_code)]
struct TlsInput {
    /// A PEM bundle of CA certificates to trust.
    ca_pem: Option<String>,
    insecure_skip_verify: Option<bool>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use utoipa::PartialSchema;

    #[test]
    fn the_documented_body_names_the_fields_validate_reads() {
        let schema = serde_json::to_value(DatasourceInput::schema()).unwrap();
        let mut documented: Vec<&str> = schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        documented.sort();
        let mut read: Vec<&str> = super::super::connection::KNOWN.to_vec();
        read.push("reason"); // taken out by the API before validation
        read.sort();
        assert_eq!(documented, read);
    }

    #[test]
    fn the_view_shows_whether_secrets_are_set_never_their_values() {
        let body = serde_json::json!({
            "name": "prom", "url": "https://prom.example:9090",
            "auth": {"type": "basic", "username": "kerf", "password": "s3cret-value"},
            "headers": [{"name": "X-Scope", "value": "team-a"},
                        {"name": "X-Key", "value": "k3y-value", "secret": true}]
        });
        let (settings, secrets) = super::super::connection::validate(&body, None).unwrap();
        let view = public_view(7, &settings, &secrets, &["prod".into()]);
        let text = serde_json::to_string(&view).unwrap();
        assert!(
            !text.contains("s3cret-value") && !text.contains("k3y-value"),
            "{text}"
        );
        assert_eq!(view.auth.password_set, Some(true));
        assert_eq!(view.headers[1].value_set, Some(true));
        assert_eq!(view.headers[0].value.as_deref(), Some("team-a"));
    }

    #[test]
    fn nulls_and_fields_of_another_auth_type_are_refused() {
        let base = |extra: serde_json::Value| {
            let mut b = serde_json::json!({"name": "p", "url": "http://p:9090"});
            b.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            super::super::connection::validate(&b, None).unwrap_err()
        };
        let paths = |e: Vec<super::super::connection::FieldError>| {
            e.into_iter().map(|e| e.path).collect::<Vec<_>>()
        };
        assert_eq!(
            paths(base(serde_json::json!({"clusterLabel": null}))),
            ["$.clusterLabel"]
        );
        assert_eq!(paths(base(serde_json::json!({"tls": null}))), ["$.tls"]);
        assert_eq!(
            paths(base(
                serde_json::json!({"auth": {"type": "none", "password": "x"}})
            )),
            ["$.auth.password"]
        );
        assert_eq!(
            paths(base(
                serde_json::json!({"headers": [{"name": "X-A", "value": "1", "secret": "yes"}]})
            )),
            ["$.headers[0].secret"]
        );
    }
}
