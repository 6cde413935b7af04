//! `kerf scan`'s flags and their validation: every bad value is exit 2 with a line
//! naming the flag.

use std::path::PathBuf;

use clap::Args;

use super::render::Format;
use super::{Exit, Scan};
use crate::analysis::{self, Policy};
use crate::datasource::prometheus::{ClientAuth, ClientConfig, PrometheusSource, ProtocolChoice};
use crate::datasource::{Budget, ClusterScope, Window};
use crate::policy::presets;
use crate::runs::recommender::SYSTEM_NAMESPACES;

/// Flags of `kerf scan`.
#[derive(Debug, Clone, Args)]
pub struct ScanArgs {
    /// Prometheus-compatible API (Prometheus, Thanos, Mimir, VictoriaMetrics).
    #[arg(long, value_name = "URL")]
    pub prometheus: String,
    /// Only namespaces matching this (`*` globs; repeat for more). Default: all but
    /// the excluded ones.
    #[arg(long, value_name = "GLOB")]
    pub namespace: Vec<String>,
    /// Namespaces left out (`*` globs; repeat for more). Default: kube-system,
    /// kube-public, kube-node-lease. A namespace named by --namespace is kept.
    #[arg(long, value_name = "GLOB")]
    pub exclude_namespace: Vec<String>,
    /// Leave no namespace out by default (analyze kube-system too).
    #[arg(long)]
    pub include_system: bool,
    /// Analysis policy JSON (the engine's policy, or a RightsizingPolicy document
    /// whose `analysis` is used).
    #[arg(long, value_name = "FILE", conflicts_with = "preset")]
    pub policy: Option<PathBuf>,
    /// A preset: cost-saving, balanced (default), conservative, engine-default.
    #[arg(long, value_name = "NAME")]
    pub preset: Option<String>,
    /// Output: table (default), json, csv or yaml.
    #[arg(long, default_value = "table")]
    pub format: String,
    /// How far back to look, e.g. 7d, 36h.
    #[arg(long, default_value = "7d")]
    pub history: String,
    /// Query resolution, e.g. 60s, 5m.
    #[arg(long, default_value = "60s")]
    pub step: String,
    /// Analyze the window ending at this RFC 3339 time instead of now (freshness is
    /// then judged at it).
    #[arg(long, value_name = "TIME")]
    pub end: Option<String>,
    /// Label telling clusters apart in a shared backend, e.g. `cluster`.
    #[arg(long, value_name = "LABEL", requires = "cluster")]
    pub cluster_label: Option<String>,
    /// The value of --cluster-label to scan.
    #[arg(long, value_name = "VALUE", requires = "cluster_label")]
    pub cluster: Option<String>,
    /// Bearer token, read from this file (first line).
    #[arg(long, value_name = "FILE", conflicts_with = "username")]
    pub bearer_token_file: Option<PathBuf>,
    /// Basic-auth user name (with --password-file).
    #[arg(long, requires = "password_file")]
    pub username: Option<String>,
    /// Basic-auth password, read from this file (first line).
    #[arg(long, value_name = "FILE", requires = "username")]
    pub password_file: Option<PathBuf>,
    /// An extra request header, `Name: value` (repeat for more), e.g. X-Scope-OrgID.
    #[arg(long, value_name = "HEADER")]
    pub header: Vec<String>,
    /// PEM file of the certificate authorities to trust.
    #[arg(long, value_name = "FILE")]
    pub ca_file: Option<PathBuf>,
    /// Do not verify the server's TLS certificate.
    #[arg(long)]
    pub insecure_skip_verify: bool,
    /// How usage is read: auto (remote read when served), remoteRead, vmExport,
    /// queryRange (the query API's range selectors).
    #[arg(long, default_value = "auto")]
    pub protocol: String,
    /// Requests in flight at most.
    #[arg(long, default_value_t = 4)]
    pub max_concurrent_queries: u32,
    /// Price of one vCPU-hour of requests (default: the hub's default, 0.0316).
    #[arg(long, value_name = "PRICE")]
    pub cpu_price: Option<f64>,
    /// Price of one GiB-hour of requests (default: the hub's default, 0.0042).
    #[arg(long, value_name = "PRICE")]
    pub memory_price: Option<f64>,
    /// Colour the table: auto (on a terminal, unless NO_COLOR is set), always, never.
    #[arg(long, default_value = "auto")]
    pub color: String,
    /// No progress on stderr.
    #[arg(long, short)]
    pub quiet: bool,
}

fn bad(flag: &str, message: impl std::fmt::Display) -> Exit {
    Exit::usage(format!("--{flag}: {message}"))
}

fn first_line(flag: &str, path: &PathBuf) -> Result<String, Exit> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| bad(flag, format!("cannot read {}: {e}", path.display())))?;
    let line = text.lines().next().unwrap_or("").trim().to_string();
    if line.is_empty() {
        return Err(bad(flag, format!("{} is empty", path.display())));
    }
    Ok(line)
}

fn seconds(flag: &str, text: &str, range: std::ops::RangeInclusive<u64>) -> Result<u64, Exit> {
    let s = crate::policy::validate::parse_duration(text).ok_or_else(|| {
        bad(
            flag,
            format!("{text:?} is not a duration such as 60s, 36h or 7d"),
        )
    })?;
    if !range.contains(&s) {
        return Err(bad(
            flag,
            format!("must be from {}s to {}s", range.start(), range.end()),
        ));
    }
    Ok(s)
}

fn glob(flag: &str, pattern: &str) -> Result<String, Exit> {
    let ok = !pattern.is_empty()
        && pattern
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '*');
    if !ok {
        return Err(bad(
            flag,
            format!("{pattern:?} is not a namespace name or `*` glob"),
        ));
    }
    Ok(pattern.to_string())
}

/// The analysis policy: a preset, a policy file, or the fleet default.
fn policy_of(args: &ScanArgs) -> Result<(Policy, String), Exit> {
    if let Some(path) = &args.policy {
        let text = std::fs::read(path)
            .map_err(|e| bad("policy", format!("cannot read {}: {e}", path.display())))?;
        let doc: serde_json::Value = serde_json::from_slice(&text)
            .map_err(|e| bad("policy", format!("{} is not JSON: {e}", path.display())))?;
        let engine = match doc.get("analysis") {
            Some(a) if doc.get("name").is_some() || doc.get("selector").is_some() => a.clone(),
            _ => doc,
        };
        let p: Policy = serde_json::from_value(engine)
            .map_err(|e| bad("policy", format!("{}: {e}", path.display())))?;
        let p = analysis::normalize_policy(&p)
            .map_err(|e| bad("policy", format!("{}: {e}", path.display())))?;
        return Ok((p, path.display().to_string()));
    }
    let name = args.preset.as_deref().unwrap_or(presets::FLEET_DEFAULT);
    let preset = presets::get(name).ok_or_else(|| {
        bad(
            "preset",
            format!(
                "unknown preset {name:?}; one of {}",
                presets::NAMES.join(", ")
            ),
        )
    })?;
    Ok((preset.analysis, format!("preset {name}")))
}

fn auth(args: &ScanArgs) -> Result<ClientAuth, Exit> {
    if let Some(path) = &args.bearer_token_file {
        return Ok(ClientAuth::Bearer(
            first_line("bearer-token-file", path)?.into(),
        ));
    }
    match (&args.username, &args.password_file) {
        (Some(user), Some(path)) => Ok(ClientAuth::Basic {
            username: user.clone(),
            password: first_line("password-file", path)?.into(),
        }),
        _ => Ok(ClientAuth::None),
    }
}

fn headers(args: &ScanArgs) -> Result<Vec<(String, String)>, Exit> {
    args.header
        .iter()
        .map(|h| {
            let (name, value) = h
                .split_once(':')
                .ok_or_else(|| bad("header", format!("{h:?} is not `Name: value`")))?;
            let name = name.trim();
            let valid = !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b));
            if !valid {
                return Err(bad("header", format!("{name:?} is not a header name")));
            }
            Ok((name.to_string(), value.trim().to_string()))
        })
        .collect()
}

impl ScanArgs {
    /// Checks every flag; `stdout_tty` decides `--color auto`.
    pub fn validated(&self, stdout_tty: bool) -> Result<Scan, Exit> {
        let url = self.prometheus.trim().to_string();
        match reqwest::Url::parse(&url) {
            Ok(u) if matches!(u.scheme(), "http" | "https") => {}
            _ => return Err(bad("prometheus", format!("{url:?} is not an http(s) URL"))),
        }
        let format = Format::parse(&self.format)
            .ok_or_else(|| bad("format", "must be table, json, csv or yaml"))?;
        let history = seconds("history", &self.history, 3_600..=90 * 86_400)?;
        let step = seconds("step", &self.step, 10..=3_600)?;
        let end_ms = match &self.end {
            Some(text) => crate::timestamp::parse_ms(text)
                .ok_or_else(|| bad("end", format!("{text:?} is not an RFC 3339 time")))?,
            None => crate::clock::Clock::now_ms(&crate::clock::SystemClock),
        };
        let step_ms = step as i64 * 1000;
        let end_ms = end_ms - end_ms.rem_euclid(step_ms);
        let window = Window {
            end_ms,
            start_ms: end_ms - history as i64 * 1000,
            step_seconds: step as u32,
        };
        let (policy, policy_name) = policy_of(self)?;
        let namespaces = self
            .namespace
            .iter()
            .map(|n| glob("namespace", n))
            .collect::<Result<Vec<_>, _>>()?;
        let mut excluded = self
            .exclude_namespace
            .iter()
            .map(|n| glob("exclude-namespace", n))
            .collect::<Result<Vec<_>, _>>()?;
        if !self.include_system {
            excluded.extend(SYSTEM_NAMESPACES.iter().map(|n| n.to_string()));
        }
        let protocol = ProtocolChoice::parse(&self.protocol)
            .ok_or_else(|| bad("protocol", "must be auto, remoteRead or queryRange"))?;
        if !(1..=64).contains(&self.max_concurrent_queries) {
            return Err(bad("max-concurrent-queries", "must be from 1 to 64"));
        }
        let defaults = crate::runs::Pricing::default();
        let price = |flag: &str, v: Option<f64>, d: f64| match v {
            Some(p) if !(p.is_finite() && p >= 0.0) => Err(bad(flag, "must be a price ≥ 0")),
            Some(p) => Ok(p),
            None => Ok(d),
        };
        let prices = (
            price("cpu-price", self.cpu_price, defaults.cpu_per_vcpu_hour)?,
            price(
                "memory-price",
                self.memory_price,
                defaults.memory_per_gib_hour,
            )?,
        );
        let color = match self.color.as_str() {
            "auto" => stdout_tty && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
            "always" => true,
            "never" => false,
            _ => return Err(bad("color", "must be auto, always or never")),
        };
        let ca_pem = match &self.ca_file {
            Some(p) => Some(
                std::fs::read_to_string(p)
                    .map_err(|e| bad("ca-file", format!("cannot read {}: {e}", p.display())))?,
            ),
            None => None,
        };
        let config = ClientConfig {
            url: url.clone(),
            auth: auth(self)?,
            headers: headers(self)?,
            ca_pem,
            insecure_skip_verify: self.insecure_skip_verify,
            timeout: std::time::Duration::from_secs(60),
            max_concurrent_queries: self.max_concurrent_queries as usize,
            outbound: Default::default(),
        };
        let source = PrometheusSource::new(config)
            .map_err(|e| bad("prometheus", e))?
            .with_budget(Budget::default())
            .with_protocol(protocol);
        let scope = ClusterScope {
            cluster: self.cluster.clone().unwrap_or_else(|| "scan".into()),
            selector_label: self.cluster_label.clone(),
            selector_value: self.cluster.clone(),
        };
        Ok(Scan {
            source,
            url,
            scope,
            window,
            policy,
            policy_name,
            namespaces,
            excluded,
            prices,
            format,
            progress: !self.quiet,
            color,
        })
    }
}
