//! A datasource as the API shows it (no secret values: each secret is a `…Set` flag).
//! What the API reads is `input::DatasourceInput`.

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
