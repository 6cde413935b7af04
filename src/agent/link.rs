//! The agent's link to the hub: who it is (cluster, namespaces, versions), the settings
//! the hub last sent, both feeds brought up to date by change (`held_feeds`),
//! what they say this pass indexed by workload, and the heartbeat when it is due.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::json;

use super::decide::{ClusterFreeze, Situation};
use super::held_feeds::HeldFeeds;
use super::hub::{FeedItem, Hub, HubError};
use crate::cluster::WorkloadKey;
use crate::wire::{AgentSettings, ConfigFeed, Heartbeat, RecommendationItem, WorkloadConfig};

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

/// A workload as both feeds name it (the one workload identity, kind as text).
pub type Name = crate::workload::WorkloadKey;

pub fn name_of(key: &WorkloadKey) -> Name {
    key.into()
}

/// What the hub said this pass, by workload.
#[derive(Default)]
pub struct Feeds<'a> {
    pub config: HashMap<Name, &'a WorkloadConfig>,
    pub items: HashMap<Name, &'a RecommendationItem>,
    /// What could not be read ("recommendation" or "config") and why.
    pub bad: HashMap<Name, (&'static str, &'a str)>,
}

impl<'a> Feeds<'a> {
    /// What `held` says (nothing when the hub is away this pass).
    pub fn index(held: Option<&'a HeldFeeds>) -> Feeds<'a> {
        let mut f = Feeds::default();
        let Some(held) = held else {
            return f;
        };
        for w in held.workloads() {
            f.config
                .insert(Name::new(&w.namespace, w.kind.clone(), &w.name), w);
        }
        for u in held.unreadable() {
            let name = Name::new(&u.namespace, u.kind.clone(), &u.name);
            f.bad.insert(name, ("config", u.error.as_str()));
        }
        for item in held.items() {
            match item {
                FeedItem::Ok(i) => {
                    let w = &i.workload;
                    f.items
                        .insert(Name::new(&w.namespace, w.kind.clone(), &w.name), i);
                }
                FeedItem::Bad {
                    workload: Some(name),
                    error,
                    ..
                } => {
                    f.bad
                        .insert(name.clone(), ("recommendation", error.as_str()));
                }
                FeedItem::Bad { error, .. } => {
                    tracing::warn!(%error, "a recommendation feed item without a workload was ignored")
                }
            }
        }
        f
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
