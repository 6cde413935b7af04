//! Where kerf's outbound calls may go (`[outbound]`): notification channels (Slack,
//! Teams, webhooks, SMTP) and datasources. An editor who may point a channel anywhere
//! must not make the hub call cloud metadata services, link-local addresses or the hub
//! itself, nor read what answers there.
//!
//! - Refused unless allowed: link-local addresses (169.254.0.0/16, fe80::/10), metadata
//!   services (169.254.169.254, fd00:ec2::254, 100.100.100.200), the unspecified
//!   address, and the hub's own listen address.
//! - Slack and Teams URLs must be on their vendors' hosts unless allowed.
//! - `allow` lists hosts (`hooks.corp.example`, `*.corp.example`), addresses and CIDRs
//!   that lift these refusals; with `allow_only`, nothing else is reached.
//! - Checked on the host name before sending and on every address after DNS resolution,
//!   at each connect ([`resolver::Vetted`]): a name that resolves to a refused address
//!   is refused however often it changes its answer (no DNS rebinding).

pub mod resolver;
mod rule;

use std::net::{IpAddr, SocketAddr};

pub use rule::Rule;

/// Hosts Slack's incoming webhooks live on.
const SLACK_HOSTS: &[&str] = &["hooks.slack.com"];
/// Hosts Teams' incoming webhooks and Workflows live on (suffixes after `*.`).
const TEAMS_HOSTS: &[&str] = &[
    "*.webhook.office.com",
    "*.logic.azure.com",
    "*.api.powerplatform.com",
];

/// Whose call it is: the vendor rule applies to Slack and Teams only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    Slack,
    Teams,
    /// Webhooks, SMTP and datasources.
    Any,
}

/// Why a destination is refused (the one-line reason answers and logs carry).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("refused by the outbound policy: {0}")]
pub struct Refused(pub String);

/// One outbound policy (one for channels, one for datasources).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Policy {
    pub allow: Vec<Rule>,
    /// Reach only what `allow` lists (and the vendors' hosts for Slack and Teams).
    pub allow_only: bool,
    /// The hub's own listen address (its port on loopback when it listens on all).
    pub hub: Option<SocketAddr>,
}

fn metadata(ip: IpAddr) -> bool {
    const V4: [[u8; 4]; 2] = [[169, 254, 169, 254], [100, 100, 100, 200]];
    match ip {
        IpAddr::V4(a) => V4.contains(&a.octets()),
        IpAddr::V6(a) => a.segments() == [0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254],
    }
}

fn link_local(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(a) => a.is_link_local(),
        IpAddr::V6(a) => (a.segments()[0] & 0xffc0) == 0xfe80,
    }
}

/// An IPv4-mapped IPv6 address as the IPv4 address it is.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(a) => a.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

impl Policy {
    fn allowed_host(&self, host: &str) -> bool {
        self.allow.iter().any(|r| r.matches_host(host))
    }

    /// The checks of an http(s) URL before anything is sent ([`Policy::check_host`]).
    pub fn check_url(&self, url: &str, purpose: Purpose) -> Result<(), Refused> {
        let u = reqwest::Url::parse(url).map_err(|_| Refused("not a URL".into()))?;
        let host = u
            .host_str()
            .ok_or_else(|| Refused("a URL without a host".into()))?;
        let port = u.port_or_known_default().unwrap_or(0);
        self.check_host(host, port, purpose)
    }

    /// [`Policy::check_url`], and for a host name on the hub's port, its addresses too
    /// (the resolver of each connection cannot see the port).
    pub async fn vet_url(&self, url: &str, purpose: Purpose) -> Result<(), Refused> {
        self.check_url(url, purpose)?;
        let u = reqwest::Url::parse(url).map_err(|_| Refused("not a URL".into()))?;
        let (Some(host), Some(port)) = (u.host_str(), u.port_or_known_default()) else {
            return Ok(());
        };
        if self.hub.is_some_and(|h| h.port() == port) && host.parse::<IpAddr>().is_err() {
            resolver::resolve(self, host, port).await?;
        }
        Ok(())
    }

    /// The host-name checks, before anything is sent: the vendor rule and `allow_only`
    /// (an address written as the host is checked as an address too).
    pub fn check_host(&self, host: &str, port: u16, purpose: Purpose) -> Result<(), Refused> {
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_ascii_lowercase();
        if self.allowed_host(&host) {
            return Ok(());
        }
        let vendor = match purpose {
            Purpose::Slack => Some(("Slack", SLACK_HOSTS)),
            Purpose::Teams => Some(("Teams", TEAMS_HOSTS)),
            Purpose::Any => None,
        };
        if let Some((name, hosts)) = vendor {
            if !hosts.iter().any(|h| Rule::host(h).matches_host(&host)) {
                return Err(Refused(format!(
                    "{host} is not a {name} host ({}); add it to [outbound] allow to use it",
                    hosts.join(", ")
                )));
            }
            return Ok(());
        }
        if let Ok(ip) = host.parse::<IpAddr>() {
            return self.check_addr(&host, SocketAddr::new(ip, port));
        }
        if self.allow_only {
            return Err(Refused(format!(
                "{host} is not in [outbound] allow (allow_only is set)"
            )));
        }
        Ok(())
    }

    /// The address checks, after resolution: `host` resolved to `addr`.
    pub fn check_addr(&self, host: &str, addr: SocketAddr) -> Result<(), Refused> {
        let (ip, port) = (canonical(addr.ip()), addr.port());
        if self.allowed_host(host) || self.allow.iter().any(|r| r.matches_ip(ip)) {
            return Ok(());
        }
        let why = if metadata(ip) {
            Some("a cloud metadata address")
        } else if link_local(ip) {
            Some("a link-local address")
        } else if ip.is_unspecified() {
            Some("the unspecified address")
        } else if self.is_hub(ip, port) {
            Some("the hub's own address")
        } else if self.allow_only {
            Some("not in [outbound] allow (allow_only is set)")
        } else {
            None
        };
        match why {
            Some(why) => Err(Refused(format!(
                "{host} ({ip}) is {why}; add it to [outbound] allow to use it"
            ))),
            None => Ok(()),
        }
    }

    fn is_hub(&self, ip: IpAddr, port: u16) -> bool {
        let Some(hub) = self.hub else {
            return false;
        };
        if port != hub.port() {
            return false;
        }
        let listen = canonical(hub.ip());
        ip == listen || (listen.is_unspecified() && ip.is_loopback())
    }
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod tests;
