//! The one typed boot configuration and where its values come from.
//!
//! Precedence, lowest first: built-in defaults < TOML file (`--config` / `KERF_CONFIG`)
//! < environment `KERF_<SECTION>__<KEY>` (top-level keys: `KERF_<KEY>`) < command-line
//! flags. Unknown keys are errors wherever they come from. Boot config is read-only at
//! runtime; what users change in the UI is data in the database.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub mod agent;
mod bounds;
pub mod collector;
pub mod declared;
pub mod oidc;
pub mod outbound;
pub mod usage;
pub use agent::{AgentConfig, AgentsConfig};
pub use collector::{CollectorConfig, CollectorEnabled};
pub use declared::FleetConfig;
pub use outbound::OutboundConfig;
pub use usage::UsageConfig;

/// Environment variables that are not config keys (they steer the loader or logging).
const RESERVED_ENV: &[&str] = &[
    "KERF_CONFIG",
    "KERF_LOG",
    "KERF_BLESS",
    "KERF_TEST_BIN",
    agent::TOKEN_ENV,
    oidc::CLIENT_SECRET_ENV,
];

/// What this process runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Hub only: API, UI, store, scheduler. Agents connect over HTTPS.
    Hub,
    /// Hub plus the in-process agent for the cluster the pod runs in.
    AllInOne,
    /// Agent only, talking to a remote hub.
    Agent,
}

impl std::fmt::Display for Mode {
    /// As written in the config: `hub`, `all-in-one`, `agent`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Mode::Hub => "hub",
            Mode::AllInOne => "all-in-one",
            Mode::Agent => "agent",
        })
    }
}

/// Log output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    Text,
    Json,
}

/// The whole boot configuration. `config/kerf.example.toml` lists every key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// `hub`, `all-in-one` or `agent`.
    pub mode: Mode,
    /// Address the HTTP API and UI listen on. Port 0 picks a free port.
    pub listen: SocketAddr,
    /// Directory holding the database, backups and keys.
    pub data_dir: PathBuf,
    pub log: LogConfig,
    pub tls: TlsConfig,
    pub http: HttpConfig,
    pub store: StoreConfig,
    pub auth: AuthConfig,
    pub notifications: NotificationsConfig,
    #[serde(default)]
    pub agent: AgentConfig,
    #[serde(default)]
    pub agents: AgentsConfig,
    /// The agent as collector of usage (`config/collector.rs`).
    #[serde(default)]
    pub collector: CollectorConfig,
    /// The hub's embedded usage store (`config/usage.rs`).
    #[serde(default)]
    pub usage: UsageConfig,
    pub audit: AuditConfig,
    /// Datasources and clusters declared here, applied at start (`config/declared.rs`).
    #[serde(default)]
    pub fleet: FleetConfig,
    /// Where channels and datasources may send (`config/outbound.rs`).
    #[serde(default)]
    pub outbound: OutboundConfig,
}

/// `[log]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogConfig {
    /// Filter directives (tracing `EnvFilter` syntax); `KERF_LOG` overrides it.
    pub level: String,
    /// `text` or `json`.
    pub format: LogFormat,
}

/// `[tls]`: both files set enables HTTPS through rustls.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsConfig {
    /// PEM certificate chain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cert_file: Option<PathBuf>,
    /// PEM private key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_file: Option<PathBuf>,
}

/// `[http]`: what one client may hold of the server (docs/security.md says what each
/// limit defends).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpConfig {
    /// Largest request body accepted on any route, in bytes (routes may take less: event
    /// batches 1 MiB, admin JSON 64 KiB).
    pub max_body_bytes: usize,
    /// Seconds in-flight requests get to finish after SIGTERM.
    pub shutdown_grace_seconds: u64,
    /// Connections held at once. At the cap, a new connection closes the longest-idle
    /// one (no request in flight); when every connection is busy it is refused.
    pub max_connections: usize,
    /// Seconds a client has to send a request's head; also how long a kept-alive
    /// HTTP/1 connection waits for its next request.
    pub header_read_timeout_seconds: u64,
    /// Seconds a connection may sit with no request in flight and no bytes moving.
    pub idle_timeout_seconds: u64,
    /// Seconds a TLS handshake may take.
    pub tls_handshake_timeout_seconds: u64,
    /// Seconds a request body may take to arrive, whole.
    pub body_read_timeout_seconds: u64,
    /// When true, `/metrics` needs a bearer token of any fleet role (it names clusters).
    pub metrics_require_token: bool,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            max_body_bytes: 1024 * 1024,
            shutdown_grace_seconds: 20,
            max_connections: 1024,
            header_read_timeout_seconds: 10,
            idle_timeout_seconds: 60,
            tls_handshake_timeout_seconds: 10,
            body_read_timeout_seconds: 30,
            metrics_require_token: false,
        }
    }
}

/// `[audit]`: how long the audit log keeps its rows (0 = forever).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditConfig {
    /// Days workload events (what agents report) are kept, by arrival time.
    pub event_retention_days: u32,
    /// Days configuration changes (`config_changed`) are kept.
    pub config_change_retention_days: u32,
}

impl Default for AuditConfig {
    fn default() -> Self {
        AuditConfig {
            event_retention_days: 365,
            config_change_retention_days: 1825,
        }
    }
}

/// `[store]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreConfig {
    /// Read-only SQLite connections kept open beside the one writer.
    pub readers: usize,
    /// Milliseconds a connection waits on a lock before failing.
    pub busy_timeout_ms: u64,
}

/// `[auth]`: sessions, login limits and password hashing cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthConfig {
    /// A session ends after this many seconds without a request.
    pub session_idle_seconds: u64,
    /// A session ends this many seconds after login, active or not.
    pub session_absolute_seconds: u64,
    /// Failed logins of one account from one client address inside the window before
    /// that account is locked for that address (other addresses are unaffected).
    pub login_max_failures: u32,
    /// Failed logins per client address inside the window before the address is locked.
    pub login_max_failures_per_address: u32,
    /// Failed logins of one account from all addresses inside the window after which
    /// the account is slowed (never locked): one attempt per
    /// `login_account_slowdown_seconds`, except from addresses it signed in from before.
    pub login_account_slowdown_after: u32,
    /// Seconds between two attempts on a slowed account.
    pub login_account_slowdown_seconds: u32,
    /// The sliding window of the failure limits, in seconds; a lock lifts when it passes.
    pub login_window_seconds: u64,
    /// Password hashes computed at once; more logins wait (then get 503).
    pub max_concurrent_password_checks: u32,
    /// argon2id memory cost in KiB.
    pub argon2_memory_kib: u32,
    /// argon2id passes.
    pub argon2_iterations: u32,
    /// Who may sign in with a password: `everyone`, or `break-glass-only` (the users
    /// in `break_glass_users`; everyone else through `[auth.oidc]`).
    #[serde(default)]
    pub password_login: oidc::PasswordLogin,
    /// Local users who keep password sign-in under `password_login = "break-glass-only"`.
    #[serde(default)]
    pub break_glass_users: Vec<String>,
    /// Sign-in through an OpenID Connect provider.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oidc: Option<oidc::OidcConfig>,
}

impl Default for AuthConfig {
    fn default() -> Self {
        AuthConfig {
            session_idle_seconds: 1800,
            session_absolute_seconds: 43_200,
            login_max_failures: 5,
            login_max_failures_per_address: 50,
            login_account_slowdown_after: 20,
            login_account_slowdown_seconds: 5,
            login_window_seconds: 900,
            max_concurrent_password_checks: 2,
            argon2_memory_kib: 65_536,
            argon2_iterations: 3,
            password_login: oidc::PasswordLogin::Everyone,
            break_glass_users: Vec::new(),
            oidc: None,
        }
    }
}

/// `[notifications]`: how messages reach channels (channels and rules themselves are data).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NotificationsConfig {
    /// Base URL of the web UI for links in messages; empty = `http://<listen>`.
    pub public_url: String,
    /// The hub's IANA time zone: the default zone of new digest schedules.
    pub time_zone: String,
    /// Attempts per message before it is marked failed.
    pub max_attempts: u32,
    /// Delay before the first retry, in ms; it doubles per attempt, up to 5 minutes.
    pub retry_base_ms: u64,
    /// Seconds a receiver may take to accept a message.
    pub send_timeout_seconds: u64,
    /// Messages per minute to one channel, at most.
    pub max_per_minute: u32,
    /// Events arriving within this many ms of each other are grouped into one message.
    pub group_window_ms: u64,
    /// Messages being sent at once over all channels (each holds a connection); lowered
    /// at start to fit the open-file limit.
    #[serde(default = "default_max_concurrent_sends")]
    pub max_concurrent_sends: usize,
    /// Notification channels in the whole fleet, at most.
    #[serde(default = "default_max_channels")]
    pub max_channels: usize,
    /// Notification channels of one team, at most.
    #[serde(default = "default_max_channels_per_team")]
    pub max_channels_per_team: usize,
}

fn default_max_concurrent_sends() -> usize {
    32
}

fn default_max_channels() -> usize {
    200
}

fn default_max_channels_per_team() -> usize {
    50
}

impl Default for NotificationsConfig {
    fn default() -> Self {
        NotificationsConfig {
            public_url: String::new(),
            time_zone: "UTC".into(),
            max_attempts: 10,
            retry_base_ms: 1000,
            send_timeout_seconds: 10,
            max_per_minute: 30,
            group_window_ms: 1000,
            max_concurrent_sends: default_max_concurrent_sends(),
            max_channels: default_max_channels(),
            max_channels_per_team: default_max_channels_per_team(),
        }
    }
}

/// Problems with the configuration. Each names the key or file at fault.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("config file {path}: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("environment variable {var}: {message}")]
    Env { var: String, message: String },
    #[error("invalid configuration: {0}")]
    Invalid(String),
}

/// Values given on the command line; `None` leaves the lower layers alone.
#[derive(Debug, Default, Clone)]
pub struct Overrides {
    pub config_file: Option<PathBuf>,
    pub data_dir: Option<PathBuf>,
    pub listen: Option<SocketAddr>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            mode: Mode::Hub,
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            data_dir: PathBuf::from("kerf-data"),
            log: LogConfig {
                level: "info".into(),
                format: LogFormat::Text,
            },
            tls: TlsConfig::default(),
            http: HttpConfig::default(),
            store: StoreConfig {
                readers: 4,
                busy_timeout_ms: 5000,
            },
            auth: AuthConfig::default(),
            notifications: NotificationsConfig::default(),
            agent: AgentConfig::default(),
            agents: AgentsConfig::default(),
            collector: CollectorConfig::default(),
            usage: UsageConfig::default(),
            audit: AuditConfig::default(),
            fleet: FleetConfig::default(),
            outbound: OutboundConfig::default(),
        }
    }
}

impl Config {
    /// Loads defaults, then the file, then `env`, then `overrides`, and validates.
    pub fn load(
        overrides: &Overrides,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Config, ConfigError> {
        let env: Vec<(String, String)> = env.into_iter().collect();
        let mut tree = toml::Value::try_from(Config::default())
            .map_err(|e| ConfigError::Invalid(e.to_string()))?;
        let file = overrides.config_file.clone().or_else(|| {
            env.iter()
                .find(|(k, _)| k == "KERF_CONFIG")
                .map(|(_, v)| PathBuf::from(v))
        });
        if let Some(path) = &file {
            merge(&mut tree, read_file(path)?);
        }
        for (var, value) in &env {
            apply_env(&mut tree, var, value)?;
        }
        let mut config: Config = tree
            .try_into()
            .map_err(|e: toml::de::Error| ConfigError::Invalid(e.message().trim().to_string()))?;
        if let Some(dir) = &overrides.data_dir {
            config.data_dir = dir.clone();
        }
        if let Some(listen) = overrides.listen {
            config.listen = listen;
        }
        config.validate()?;
        Ok(config)
    }

    /// Checks that cannot be expressed by types alone.
    pub fn validate(&self) -> Result<(), ConfigError> {
        match (&self.tls.cert_file, &self.tls.key_file) {
            (Some(_), None) | (None, Some(_)) => {
                return Err(ConfigError::Invalid(
                    "tls.cert_file and tls.key_file must be set together".into(),
                ))
            }
            _ => {}
        }
        if self.store.readers == 0 || self.store.readers > 64 {
            return Err(ConfigError::Invalid(
                "store.readers must be between 1 and 64".into(),
            ));
        }
        self.validate_http()?;
        self.validate_auth()?;
        self.validate_notifications()?;
        self.agent.validate(self.mode)?;
        self.agents.validate()?;
        self.collector.validate()?;
        self.usage.validate()?;
        self.fleet.validate(self.mode)?;
        self.outbound.validate()?;
        if self.data_dir.as_os_str().is_empty() {
            return Err(ConfigError::Invalid("data_dir must not be empty".into()));
        }
        Ok(())
    }

    /// The base URL of the web UI, for links in messages.
    pub fn public_url(&self) -> String {
        let configured = self.notifications.public_url.trim_end_matches('/');
        if !configured.is_empty() {
            return configured.to_string();
        }
        let scheme = if self.tls_enabled() { "https" } else { "http" };
        format!("{scheme}://{}", self.listen)
    }

    /// True when HTTPS is configured.
    pub fn tls_enabled(&self) -> bool {
        self.tls.cert_file.is_some()
    }

    /// The SQLite database file inside the data dir.
    pub fn database_path(&self) -> PathBuf {
        self.data_dir.join("kerf.db")
    }

    /// The effective configuration as TOML. It holds no secret (secrets are named by
    /// file or variable); one that did would be a `crate::secret::Secret`, which
    /// prints as `***`.
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).unwrap_or_else(|e| format!("# cannot render: {e}\n"))
    }
}

fn read_file(path: &Path) -> Result<toml::Value, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let table: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| ConfigError::Parse {
            path: path.to_path_buf(),
            message: e.message().trim().to_string(),
        })?;
    Ok(toml::Value::Table(table))
}

/// Deep-merges `upper` into `base`; tables merge, everything else replaces.
fn merge(base: &mut toml::Value, upper: toml::Value) {
    match (base, upper) {
        (toml::Value::Table(b), toml::Value::Table(u)) => {
            for (k, v) in u {
                match b.get_mut(&k) {
                    Some(existing) => merge(existing, v),
                    None => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (b, u) => *b = u,
    }
}

/// Applies `KERF_SECTION__KEY=value`. The value is read as a TOML literal when it parses
/// as one of the key's current type (number, bool), else as a string.
fn apply_env(tree: &mut toml::Value, var: &str, value: &str) -> Result<(), ConfigError> {
    let Some(rest) = var.strip_prefix("KERF_") else {
        return Ok(());
    };
    if RESERVED_ENV.contains(&var) {
        return Ok(());
    }
    let path: Vec<String> = rest.split("__").map(|p| p.to_ascii_lowercase()).collect();
    let env_err = |message: String| ConfigError::Env {
        var: var.to_string(),
        message,
    };
    let mut node = tree;
    for (i, key) in path.iter().enumerate() {
        let table = node
            .as_table_mut()
            .ok_or_else(|| env_err(format!("{key} is not a section")))?;
        if !table.contains_key(key) {
            let known = i == path.len() - 1 && is_optional_key(&path);
            if !known {
                return Err(env_err(format!("unknown config key {}", path.join("."))));
            }
            table.insert(key.clone(), toml::Value::String(value.to_string()));
            return Ok(());
        }
        let child = table.get_mut(key).expect("presence checked above");
        if i == path.len() - 1 {
            *child = typed_like(child, value).map_err(env_err)?;
            return Ok(());
        }
        node = child;
    }
    Ok(())
}

/// Keys that default to absent and so are missing from the default tree.
fn is_optional_key(path: &[String]) -> bool {
    matches!(
        path.iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .as_slice(),
        ["tls", "cert_file"]
            | ["tls", "key_file"]
            | ["agent", "token_file"]
            | ["agent", "hub_ca_file"]
            | ["agent", "kubelet_ca_file"]
    )
}

fn typed_like(current: &toml::Value, raw: &str) -> Result<toml::Value, String> {
    Ok(match current {
        toml::Value::Integer(_) => toml::Value::Integer(
            raw.parse()
                .map_err(|_| format!("expected an integer, got {raw:?}"))?,
        ),
        toml::Value::Float(_) => toml::Value::Float(
            raw.parse()
                .map_err(|_| format!("expected a number, got {raw:?}"))?,
        ),
        toml::Value::Boolean(_) => toml::Value::Boolean(
            raw.parse()
                .map_err(|_| format!("expected true or false, got {raw:?}"))?,
        ),
        // Lists of names (agent.namespaces) are comma-separated.
        toml::Value::Array(_) => toml::Value::Array(
            raw.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| toml::Value::String(s.to_string()))
                .collect(),
        ),
        toml::Value::Table(_) => {
            return Err("is a section; set its keys with KERF_<SECTION>__<KEY>".into())
        }
        _ => toml::Value::String(raw.to_string()),
    })
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
