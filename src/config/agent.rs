//! `[agent]`: the per-cluster agent of `mode = "all-in-one"` and `mode = "agent"`.
//!
//! The cluster token of `mode = "agent"` is a secret: it comes from `token_file` or the
//! environment variable `KERF_AGENT_TOKEN`, never from the config file itself. Kubernetes
//! is reached through the pod's service account, else `KUBECONFIG` (kube-rs' inference).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{ConfigError, Mode};
use crate::secret::destination::is_loopback;

/// The environment variable holding the cluster token (mode = "agent").
pub const TOKEN_ENV: &str = "KERF_AGENT_TOKEN";

/// `[agent]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    /// The cluster's name in the hub (both modes).
    pub cluster: String,
    /// The hub's base URL, e.g. `https://kerf.example` (mode = "agent").
    pub hub_url: String,
    /// A file holding the cluster token (mode = "agent"; or set `KERF_AGENT_TOKEN`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_file: Option<PathBuf>,
    /// PEM bundle of the CA(s) that signed the hub's certificate; unset = system roots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hub_ca_file: Option<PathBuf>,
    /// Namespaces the agent watches and acts in; empty = all.
    pub namespaces: Vec<String>,
    /// Seconds a request to the hub may take.
    pub hub_timeout_seconds: u64,
    /// PEM bundle of the CA(s) that signed the kubelets' serving certificates (CPU
    /// throttling counters); unset = the cluster's CA.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubelet_ca_file: Option<PathBuf>,
    /// Accept any kubelet serving certificate (kubelets with self-signed ones).
    #[serde(default)]
    pub kubelet_insecure_tls: bool,
    /// Send the cluster token over `http://` to a hub that is not on loopback (warned
    /// about at every start). Off: such a `hub_url` is refused.
    #[serde(default)]
    pub allow_insecure_hub: bool,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            cluster: String::new(),
            hub_url: String::new(),
            token_file: None,
            hub_ca_file: None,
            namespaces: Vec::new(),
            hub_timeout_seconds: 30,
            kubelet_ca_file: None,
            kubelet_insecure_tls: false,
            allow_insecure_hub: false,
        }
    }
}

impl AgentConfig {
    /// What the mode needs of this section, each problem in one line.
    pub fn validate(&self, mode: Mode) -> Result<(), ConfigError> {
        let bad = |m: &str| Err(ConfigError::Invalid(m.to_string()));
        if mode == Mode::Hub {
            return Ok(());
        }
        if self.cluster.trim().is_empty() {
            return bad("agent.cluster must name the cluster (as registered in the hub)");
        }
        if !(1..=600).contains(&self.hub_timeout_seconds) {
            return bad("agent.hub_timeout_seconds must be between 1 and 600");
        }
        if mode == Mode::Agent {
            let url_ok = reqwest::Url::parse(&self.hub_url)
                .is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.has_host());
            if !url_ok {
                return bad("agent.hub_url must be the hub's http(s) URL (mode = \"agent\")");
            }
            if self.hub_in_clear() && !self.allow_insecure_hub {
                return bad(
                    "agent.hub_url is http:// to a host that is not loopback: the cluster \
                     token would travel in clear; use https (set agent.hub_ca_file for a \
                     private CA), or set agent.allow_insecure_hub = true",
                );
            }
        }
        Ok(())
    }

    /// `hub_url` is `http://` to a host that is not loopback: the token goes in clear.
    pub fn hub_in_clear(&self) -> bool {
        reqwest::Url::parse(&self.hub_url)
            .is_ok_and(|u| u.scheme() == "http" && !u.host_str().is_some_and(is_loopback))
    }

    /// The cluster token: `token_file`, else `KERF_AGENT_TOKEN` from `env`.
    pub fn token(&self, env: &[(String, String)]) -> Result<String, ConfigError> {
        if let Some(path) = &self.token_file {
            return read_secret(path, "agent.token_file");
        }
        match env.iter().find(|(k, _)| k == TOKEN_ENV) {
            Some((_, v)) if !v.trim().is_empty() => Ok(v.trim().to_string()),
            _ => Err(ConfigError::Invalid(format!(
                "mode = \"agent\" needs the cluster token: set agent.token_file or {TOKEN_ENV}"
            ))),
        }
    }

    /// The hub's CA bundle, when configured.
    pub fn hub_ca(&self) -> Result<Option<String>, ConfigError> {
        self.hub_ca_file
            .as_deref()
            .map(|p| {
                std::fs::read_to_string(p).map_err(|e| {
                    ConfigError::Invalid(format!("agent.hub_ca_file {}: {e}", p.display()))
                })
            })
            .transpose()
    }
}

impl AgentConfig {
    /// The kubelets' CA bundle, when configured.
    pub fn kubelet_ca(&self) -> Result<Option<Vec<u8>>, ConfigError> {
        self.kubelet_ca_file
            .as_deref()
            .map(|p| {
                std::fs::read(p).map_err(|e| {
                    ConfigError::Invalid(format!("agent.kubelet_ca_file {}: {e}", p.display()))
                })
            })
            .transpose()
    }
}

pub(super) fn read_secret(path: &Path, key: &str) -> Result<String, ConfigError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ConfigError::Invalid(format!("{key} {}: {e}", path.display())))?;
    let token = text.trim();
    if token.is_empty() {
        return Err(ConfigError::Invalid(format!(
            "{key} {} is empty",
            path.display()
        )));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(meta) = std::fs::metadata(path) {
            if meta.permissions().mode() & 0o004 != 0 {
                tracing::warn!(file = %path.display(), "{key} is world-readable");
            }
        }
    }
    Ok(token.to_string())
}

/// `[agents]`: what the hub hands every agent in its config feed (the agent's loop and
/// heartbeat intervals and its event buffer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentsConfig {
    /// Seconds between two decision passes of an agent.
    pub loop_interval_seconds: u64,
    /// Seconds between two heartbeats.
    pub heartbeat_interval_seconds: u64,
    /// Events an agent buffers while the hub is away (oldest dropped first).
    pub event_buffer_size: u32,
}

impl Default for AgentsConfig {
    fn default() -> Self {
        AgentsConfig {
            loop_interval_seconds: 30,
            heartbeat_interval_seconds: 30,
            event_buffer_size: 10_000,
        }
    }
}

impl AgentsConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        let checks = [
            (
                (1..=3600).contains(&self.loop_interval_seconds),
                "agents.loop_interval_seconds must be between 1 and 3600",
            ),
            (
                (1..=3600).contains(&self.heartbeat_interval_seconds),
                "agents.heartbeat_interval_seconds must be between 1 and 3600",
            ),
            (
                (10..=1_000_000).contains(&self.event_buffer_size),
                "agents.event_buffer_size must be between 10 and 1000000",
            ),
        ];
        super::bounds::first_failed(&checks)
    }
}
