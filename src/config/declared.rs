//! `[fleet]`: datasources and clusters (with their datasource links) declared in the
//! config file, so a GitOps install needs no API call after deploy. The hub applies
//! them at start (`fleet::declared`); this module owns their shape, the checks that
//! need no store, and reading their secrets.
//!
//! Secrets are never written in the file: each comes from `…_file` (a mounted Secret)
//! or `…_env` (the name of an environment variable). A key for the value itself does
//! not exist, so `password = "…"` is refused as an unknown key. A `…_file` others can
//! read stops the start unless `allow_readable_secret_files` is set.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::ConfigError;

/// `[fleet]`: what the hub makes real at every start.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FleetConfig {
    /// Accept a `…_file` secret that others can read (mode o+r), with a warning at each
    /// start; by default such a file stops the start.
    #[serde(default)]
    pub allow_readable_secret_files: bool,
    /// `[[fleet.datasources]]`, each created or brought up to date by name.
    #[serde(default)]
    pub datasources: Vec<DeclaredDatasource>,
    /// `[[fleet.clusters]]`, each registered or brought up to date by name.
    #[serde(default)]
    pub clusters: Vec<DeclaredCluster>,
}

/// One declared datasource: the settings of `POST /v1/datasources`, in snake_case, with
/// secrets by reference. Omitted numbers take the API's defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeclaredDatasource {
    pub name: String,
    /// `prometheus` (Prometheus, Thanos, Mimir, VictoriaMetrics).
    #[serde(rename = "type", default = "prometheus")]
    pub kind: String,
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<DeclaredAuth>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<DeclaredHeader>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<DeclaredTls>,
    /// `auto`, `remoteRead` or `queryRange`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_concurrent_queries: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_samples_per_query: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_series_per_query: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_seconds: Option<u64>,
    /// The series label naming the cluster, e.g. `cluster`; unset = no selector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_label: Option<String>,
    /// That label's value; unset = the kerf cluster name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_value: Option<String>,
}

fn prometheus() -> String {
    "prometheus".into()
}

/// `auth`: `none`, `basic` (username + password) or `bearer` (token).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeclaredAuth {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_file: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_env: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_file: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_env: Option<String>,
}

/// One extra header: `value` in the clear, or a secret from `value_file` / `value_env`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeclaredHeader {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_file: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_env: Option<String>,
}

/// `tls`: the CA bundle that signed the datasource's certificate (a PEM file).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeclaredTls {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<PathBuf>,
    #[serde(default)]
    pub insecure_skip_verify: bool,
}

/// One declared cluster, its metadata, its datasource link and, optionally, its agent
/// token (a remote agent and the hub then share one Secret).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeclaredCluster {
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub display_name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// The declared datasource it reads usage from (by name); unset leaves the link to
    /// the API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub datasource: Option<String>,
    /// The agent token (`kerf_ct_` + at least 32 characters); unset leaves the token to
    /// the API (`POST /v1/clusters/{name}/token`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_file: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_env: Option<String>,
}

/// Where one secret comes from, checked: exactly one of a file or a variable.
fn source<'a>(
    key: &str,
    file: &'a Option<PathBuf>,
    env: &'a Option<String>,
) -> Result<Option<Secret<'a>>, ConfigError> {
    match (file, env) {
        (Some(_), Some(_)) => Err(invalid(format!(
            "{key}_file and {key}_env are both set; give one"
        ))),
        (Some(f), None) => Ok(Some(Secret::File(f))),
        (None, Some(v)) if v.trim().is_empty() => {
            Err(invalid(format!("{key}_env must name a variable")))
        }
        // KERF_* variables are kerf's own configuration (KERF_<SECTION>__<KEY>).
        (None, Some(v)) if v.starts_with("KERF_") => Err(invalid(format!(
            "{key}_env {v}: names starting with KERF_ are kerf's configuration; choose another"
        ))),
        (None, Some(v)) => Ok(Some(Secret::Env(v))),
        (None, None) => Ok(None),
    }
}

enum Secret<'a> {
    File(&'a PathBuf),
    Env(&'a str),
}

impl Secret<'_> {
    fn read(
        &self,
        key: &str,
        env: &[(String, String)],
        allow_readable: bool,
    ) -> Result<String, ConfigError> {
        match self {
            Secret::File(path) => read_file(path, &format!("{key}_file"), allow_readable),
            Secret::Env(var) => match env.iter().find(|(k, _)| k == var) {
                Some((_, v)) if !v.trim().is_empty() => Ok(v.trim().to_string()),
                _ => Err(invalid(format!(
                    "{key}_env: the environment variable {var} is unset or empty"
                ))),
            },
        }
    }
}

/// A secret file's value. One that others can read is refused unless `allow_readable`
/// (then only warned about): the mode says who else holds the secret.
fn read_file(path: &Path, key: &str, allow_readable: bool) -> Result<String, ConfigError> {
    #[cfg(unix)]
    if !allow_readable {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path).map_or(0, |m| m.permissions().mode() & 0o7777);
        if mode & 0o004 != 0 {
            return Err(invalid(format!(
                "{key} {} is readable by others (mode {mode:04o}): make it private (chmod 600; \
                 a mounted Secret's defaultMode 0400) or set [fleet] \
                 allow_readable_secret_files = true",
                path.display()
            )));
        }
    }
    super::agent::read_secret(path, key)
}

fn invalid(message: String) -> ConfigError {
    ConfigError::Invalid(message)
}

/// Prefixes a problem with the declaration it belongs to.
fn within(prefix: &str) -> impl Fn(ConfigError) -> ConfigError + '_ {
    move |e| match e {
        ConfigError::Invalid(m) => invalid(format!("{prefix}.{m}")),
        other => other,
    }
}

impl FleetConfig {
    /// True when nothing is declared.
    pub fn is_empty(&self) -> bool {
        self.datasources.is_empty() && self.clusters.is_empty()
    }

    /// The checks that need neither secrets nor the store: unique names, secrets by
    /// reference only, one source per secret, no declarations in `mode = "agent"`.
    pub fn validate(&self, mode: super::Mode) -> Result<(), ConfigError> {
        if mode == super::Mode::Agent && !self.is_empty() {
            return Err(invalid(
                "[fleet] declares datasources and clusters for a hub; mode = \"agent\" has none"
                    .into(),
            ));
        }
        let mut seen = BTreeSet::new();
        for d in &self.datasources {
            if !seen.insert(d.name.as_str()) {
                return Err(invalid(format!(
                    "fleet.datasources: {:?} is declared twice",
                    d.name
                )));
            }
            let prefix = format!("fleet.datasources.{}", d.name);
            d.secret_sources().map_err(within(&prefix))?;
        }
        let mut seen = BTreeSet::new();
        for c in &self.clusters {
            if !seen.insert(c.name.as_str()) {
                return Err(invalid(format!(
                    "fleet.clusters: {:?} is declared twice",
                    c.name
                )));
            }
            let prefix = format!("fleet.clusters.{}", c.name);
            source("token", &c.token_file, &c.token_env).map_err(within(&prefix))?;
            if let Some(d) = &c.datasource {
                if !self.datasources.iter().any(|x| &x.name == d) {
                    return Err(invalid(format!(
                        "{prefix}.datasource: {d:?} is not declared in [[fleet.datasources]]"
                    )));
                }
            }
        }
        Ok(())
    }
}

impl DeclaredDatasource {
    fn secret_sources(&self) -> Result<(), ConfigError> {
        if let Some(a) = &self.auth {
            let password = source("auth.password", &a.password_file, &a.password_env)?;
            let token = source("auth.token", &a.token_file, &a.token_env)?;
            let ok = match a.kind.as_str() {
                "basic" => password.is_some() && token.is_none(),
                "bearer" => token.is_some() && password.is_none() && a.username.is_none(),
                _ => password.is_none() && token.is_none(),
            };
            if !ok {
                return Err(invalid(format!(
                    "auth: type {:?} takes {}",
                    a.kind,
                    match a.kind.as_str() {
                        "basic" => "username and password_file or password_env",
                        "bearer" => "token_file or token_env",
                        _ => "no credentials (basic or bearer do)",
                    }
                )));
            }
        }
        for (i, h) in self.headers.iter().enumerate() {
            let secret = source(&format!("headers[{i}].value"), &h.value_file, &h.value_env)?;
            if secret.is_some() == h.value.is_some() {
                return Err(invalid(format!(
                    "headers[{i}]: give value (in the clear), or value_file or value_env (a secret)"
                )));
            }
        }
        Ok(())
    }

    /// The `POST /v1/datasources` document, secrets read from their files (refusing
    /// one others can read unless `allow_readable`) and variables. It holds secret
    /// values: hand it to the datasource validation only.
    pub fn document(
        &self,
        env: &[(String, String)],
        allow_readable: bool,
    ) -> Result<Value, ConfigError> {
        let prefix = format!("fleet.datasources.{}", self.name);
        self.secret_sources().map_err(within(&prefix))?;
        self.document_unchecked(env, allow_readable)
            .map_err(within(&prefix))
    }

    fn document_unchecked(
        &self,
        env: &[(String, String)],
        allow_readable: bool,
    ) -> Result<Value, ConfigError> {
        let mut doc = Map::new();
        doc.insert("name".into(), json!(self.name));
        doc.insert("type".into(), json!(self.kind));
        doc.insert("url".into(), json!(self.url));
        if let Some(a) = &self.auth {
            let mut auth = json!({ "type": a.kind });
            if let Some(u) = &a.username {
                auth["username"] = json!(u);
            }
            if let Some(s) = source("auth.password", &a.password_file, &a.password_env)? {
                auth["password"] = json!(s.read("auth.password", env, allow_readable)?);
            }
            if let Some(s) = source("auth.token", &a.token_file, &a.token_env)? {
                auth["token"] = json!(s.read("auth.token", env, allow_readable)?);
            }
            doc.insert("auth".into(), auth);
        }
        let mut headers = Vec::new();
        for (i, h) in self.headers.iter().enumerate() {
            let key = format!("headers[{i}].value");
            headers.push(match source(&key, &h.value_file, &h.value_env)? {
                Some(s) => json!({
                    "name": h.name,
                    "secret": true,
                    "value": s.read(&key, env, allow_readable)?,
                }),
                None => json!({ "name": h.name, "secret": false, "value": h.value }),
            });
        }
        doc.insert("headers".into(), Value::Array(headers));
        if let Some(t) = &self.tls {
            let ca = match &t.ca_file {
                Some(p) => Some(
                    std::fs::read_to_string(p)
                        .map_err(|e| invalid(format!("tls.ca_file {}: {e}", p.display())))?,
                ),
                None => None,
            };
            doc.insert(
                "tls".into(),
                json!({ "caPem": ca, "insecureSkipVerify": t.insecure_skip_verify }),
            );
        }
        let numbers = [
            ("timeoutSeconds", self.timeout_seconds),
            ("maxConcurrentQueries", self.max_concurrent_queries),
            ("maxSamplesPerQuery", self.max_samples_per_query),
            ("maxSeriesPerQuery", self.max_series_per_query),
            ("stepSeconds", self.step_seconds),
        ];
        for (key, value) in numbers {
            if let Some(v) = value {
                doc.insert(key.into(), json!(v));
            }
        }
        let texts = [
            ("protocol", &self.protocol),
            ("clusterLabel", &self.cluster_label),
            ("clusterValue", &self.cluster_value),
        ];
        for (key, value) in texts {
            if let Some(v) = value {
                doc.insert(key.into(), json!(v));
            }
        }
        Ok(Value::Object(doc))
    }
}

impl DeclaredCluster {
    /// The declared agent token, read from its file (refusing one others can read
    /// unless `allow_readable`) or variable; `None` when the declaration leaves the
    /// token to the API.
    pub fn token(
        &self,
        env: &[(String, String)],
        allow_readable: bool,
    ) -> Result<Option<String>, ConfigError> {
        let prefix = format!("fleet.clusters.{}", self.name);
        source("token", &self.token_file, &self.token_env)
            .and_then(|s| s.map(|s| s.read("token", env, allow_readable)).transpose())
            .map_err(within(&prefix))
    }
}

#[cfg(test)]
#[path = "declared_tests.rs"]
mod tests;
