//! `[outbound]`: where notification channels and datasources may send (the rules are
//! `crate::outbound`'s). Entries are hosts (`hooks.corp.example`), domains
//! (`*.corp.example`), addresses or CIDRs (`10.0.0.0/8`).

use std::net::SocketAddr;

use serde::{Deserialize, Serialize};

use super::ConfigError;
use crate::outbound::{Policy, Rule};

/// `[outbound]`
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutboundConfig {
    /// What notification channels may reach although refused by default (link-local
    /// and metadata addresses, the hub itself, Slack and Teams off their vendors' hosts).
    pub allow: Vec<String>,
    /// Channels reach only `allow` (and Slack's and Teams' own hosts).
    pub allow_only: bool,
    /// As `allow`, for datasources.
    pub datasource_allow: Vec<String>,
    /// Datasources reach only `datasource_allow`.
    pub datasource_allow_only: bool,
}

fn rules(key: &str, entries: &[String]) -> Result<Vec<Rule>, ConfigError> {
    entries
        .iter()
        .map(|e| {
            Rule::parse(e).ok_or_else(|| {
                ConfigError::Invalid(format!(
                    "outbound.{key}: {e:?} is not a host, *.domain, address or CIDR"
                ))
            })
        })
        .collect()
}

impl OutboundConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        rules("allow", &self.allow)?;
        rules("datasource_allow", &self.datasource_allow)?;
        Ok(())
    }

    /// The policy of notification channels, for a hub listening on `hub` (entries
    /// were checked by [`OutboundConfig::validate`] at load).
    pub fn channels(&self, hub: SocketAddr) -> Policy {
        policy(&self.allow, self.allow_only, hub)
    }

    /// The policy of datasources, for a hub listening on `hub`.
    pub fn datasources(&self, hub: SocketAddr) -> Policy {
        policy(&self.datasource_allow, self.datasource_allow_only, hub)
    }
}

fn policy(entries: &[String], allow_only: bool, hub: SocketAddr) -> Policy {
    Policy {
        allow: entries.iter().filter_map(|e| Rule::parse(e)).collect(),
        allow_only,
        hub: Some(hub),
    }
}
