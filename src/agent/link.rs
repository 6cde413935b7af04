//! The agent's link to the hub: who it is (cluster, namespaces, versions), the settings
//! the hub last sent, both feeds brought up to date by change (`held_feeds`), and the
//! heartbeat when it is due.

use std::sync::Arc;

use serde_json::json;

use super::decide::{ClusterFreeze, Situation};
use super::held_feeds::HeldFeeds;
use super::hub::{Hub, HubError};
use crate::wire::{AgentSettings, ConfigFeed, Heartbeat};

/// How the agent is set up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// The cluster's name in the hub.
    pub cluster: String,
    /// Namespaces in scope; empty = all.
    pub namespaces: Vec<String>,
    pub agent_version: String,
}

/// The hub as this agent reaches it.
pub struct HubLink<H: Hub> {
    hub: Arc<H>,
    options: Options,
    kubernetes_version: String,
    settings: AgentSettings,
    next_heartbeat_ms: i64,
}

impl<H: Hub> HubLink<H> {
    pub fn new(hub: Arc<H>, options: Options, kubernetes_version: String) -> HubLink<H> {
        HubLink {
            hub,
            options,
            kubernetes_version,
            settings: AgentSettings::default(),
            next_heartbeat_ms: 0,
        }
    }

    pub fn hub(&self) -> &Arc<H> {
        &self.hub
    }

    pub fn options(&self) -> &Options {
        &self.options
    }

    pub fn kubernetes_version(&self) -> &str {
        &self.kubernetes_version
    }

    /// The agent's settings as the hub last sent them (defaults until it has).
    pub fn settings(&self) -> &AgentSettings {
        &self.settings
    }

    /// Takes the settings of a config feed just read.
    pub fn adopt(&mut self, settings: AgentSettings) {
        self.settings = settings;
    }

    /// Brings `held` up to date with the hub's feeds at `now` (what changed since the
    /// versions it holds), or says why not.
    pub async fn fetch(&self, held: &mut HeldFeeds, now: i64) -> Result<(), HubError> {
        held.refresh(self.hub.as_ref(), now).await
    }

    /// Sends a heartbeat when one is due at `now`.
    pub async fn heartbeat(&mut self, now: i64) {
        if now < self.next_heartbeat_ms {
            return;
        }
        self.next_heartbeat_ms =
            now + self.settings.heartbeat_interval_seconds.max(1) as i64 * 1000;
        let capabilities = json!({
            "inPlaceResize": true,
            "rollout": true,
            "deferred": true,
            "evictOnDelete": true,
            "hpaCoordination": true,
            "healthWatch": true,
            "release": true,
            "records": crate::cluster::record::API_VERSION,
            "namespaces": self.options.namespaces,
        });
        let hb = Heartbeat {
            agent_version: self.options.agent_version.clone(),
            kubernetes_version: self.kubernetes_version.clone(),
            capabilities: capabilities.as_object().cloned().unwrap_or_default(),
        };
        if let Err(e) = self.hub.heartbeat(&hb).await {
            tracing::warn!(error = %e, "heartbeat not delivered");
        }
    }
}

/// The cluster-wide situation at `now_ms` under `config` (none: the hub is away).
pub fn situation(now_ms: i64, config: Option<&ConfigFeed>) -> Situation {
    let Some(c) = config else {
        return Situation {
            now_ms,
            hub_reachable: false,
            pause: None,
            freeze: None,
            default_tolerance: crate::policy::defaults::CHANGE_TOLERANCE,
        };
    };
    Situation {
        now_ms,
        hub_reachable: true,
        pause: c.flags.paused.then(|| {
            c.flags
                .pause_scope
                .unwrap_or(crate::wire::PauseScope::Cluster)
        }),
        freeze: c.flags.frozen.then(|| ClusterFreeze {
            reason: c.freeze.reason.clone(),
            until_ms: c
                .freeze
                .until
                .clone()
                .flatten()
                .and_then(|u| crate::timestamp::parse_ms(&u)),
        }),
        default_tolerance: c.agent.change_tolerance_default,
    }
}
