//! The agent's life: start (watch the cluster, read back its records, re-send what the
//! hub never acknowledged), then loop — a full pass every `loopIntervalSeconds`, the
//! changes in flight advanced as the watches see the cluster move, a heartbeat every
//! `heartbeatIntervalSeconds` — while a delivery task sends events to the hub. Stops
//! when asked (the job's `Stop`).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::hub::{FeedItem, Hub, HubError};
use super::outbox::{Flushed, Outbox};
use super::state::WorkloadState;
use crate::clock::Clock;
use crate::cluster::{Cluster, ClusterError, Record, View, WorkloadKey};
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

/// Why the agent cannot start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("cannot watch the cluster: {0}")]
    Watch(ClusterError),
    #[error("cannot read the cluster's version: {0}")]
    Version(ClusterError),
    #[error("the RightsizingRecommendation CRD is not installed (kubectl apply -f packaging/k8s/crds.yaml): {0}")]
    NoCrd(ClusterError),
    #[error("cannot read kerf's RightsizingRecommendations: {0}")]
    Records(ClusterError),
}

/// What the agent keeps about one workload.
#[derive(Debug, Default)]
pub(super) struct Tracked {
    pub state: WorkloadState,
    /// The record as last applied (spec; its status is not kept), once it exists.
    pub record: Option<Record>,
    /// The status needs writing.
    pub dirty: bool,
    /// The spec (or labels) need applying first.
    pub spec_dirty: bool,
    /// Pods kerf resized since an in-place change (not counted twice).
    pub patched: BTreeSet<String>,
}

/// What one pass saw and did (for logs, tests and the benchmark).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PassReport {
    pub hub_reachable: bool,
    pub workloads: usize,
    pub events: usize,
    pub started: usize,
    pub records_written: usize,
}

/// The agent.
pub struct Agent<C: Cluster, H: Hub> {
    pub(super) cluster: C,
    pub(super) hub: Arc<H>,
    pub(super) clock: Arc<dyn Clock>,
    pub(super) options: Options,
    pub(super) view: C::View,
    pub(super) tracked: BTreeMap<WorkloadKey, Tracked>,
    /// Unacknowledged event id → its workload.
    pub(super) unsent: HashMap<String, WorkloadKey>,
    pub(super) outbox: Outbox,
    pub(super) settings: AgentSettings,
    /// The last config feed the hub gave.
    pub(super) last_config: Option<ConfigFeed>,
    /// Kubernetes Events to record once their record exists.
    pub(super) kube_events: Vec<(WorkloadKey, crate::wire::AgentEvent)>,
    /// Events of this pass, handed to the outbox once its records are written.
    pub(super) staged: Vec<crate::wire::AgentEvent>,
    /// The kubelets' CPU counters as last read (health watch, `Throttled`).
    pub(super) counters: super::health::Counters,
    kubernetes_version: String,
    next_heartbeat_ms: i64,
}

impl<C: Cluster, H: Hub> Agent<C, H> {
    /// Watches the cluster and reads back the records: what was decided, the change in
    /// flight, the events the hub never acknowledged (buffered again).
    pub async fn start(
        cluster: C,
        hub: Arc<H>,
        clock: Arc<dyn Clock>,
        options: Options,
        outbox: Outbox,
    ) -> Result<Agent<C, H>, StartError> {
        let records = match cluster.records(&options.namespaces).await {
            Ok(r) => r,
            Err(e) if e.is_not_found() => return Err(StartError::NoCrd(e)),
            Err(e) => return Err(StartError::Records(e)),
        };
        let kubernetes_version = cluster
            .server_version()
            .await
            .map_err(StartError::Version)?;
        let view = cluster
            .watch(&options.namespaces)
            .await
            .map_err(StartError::Watch)?;
        let mut agent = Agent {
            cluster,
            hub,
            clock,
            options,
            view,
            tracked: BTreeMap::new(),
            unsent: HashMap::new(),
            outbox,
            settings: AgentSettings::default(),
            last_config: None,
            kube_events: Vec::new(),
            staged: Vec::new(),
            counters: Default::default(),
            kubernetes_version,
            next_heartbeat_ms: 0,
        };
        for record in records {
            let Some(key) = super::record::workload_of(&record) else {
                continue;
            };
            let state = super::record::state_of(&record).unwrap_or_default();
            for e in &state.unsent {
                agent.unsent.insert(e.id.clone(), key.clone());
                agent.outbox.push(e.clone());
            }
            agent.tracked.insert(
                key,
                Tracked {
                    state,
                    record: Some(record),
                    ..Tracked::default()
                },
            );
        }
        tracing::info!(
            cluster = %agent.options.cluster,
            kubernetes = %agent.kubernetes_version,
            records = agent.tracked.len(),
            resent = agent.outbox.len(),
            "agent started"
        );
        Ok(agent)
    }

    /// The memory of one workload (tests, benchmarks).
    pub fn state(&self, key: &WorkloadKey) -> Option<&WorkloadState> {
        self.tracked.get(key).map(|t| &t.state)
    }

    /// Every workload's memory (tests, benchmarks, diagnostics).
    pub fn states(&self) -> impl Iterator<Item = (&WorkloadKey, &WorkloadState)> {
        self.tracked.iter().map(|(k, t)| (k, &t.state))
    }

    /// The shared event buffer.
    pub fn outbox(&self) -> &Outbox {
        &self.outbox
    }

    /// True while some change is in flight.
    pub fn busy(&self) -> bool {
        self.tracked.values().any(|t| t.state.operation.is_some())
    }

    /// Both feeds at once (the recommendation feed paged through), or why not.
    pub(super) async fn fetch(&self) -> Result<(ConfigFeed, Vec<FeedItem>), HubError> {
        let config = self.hub.config().await?;
        let mut items = Vec::new();
        let mut next = None;
        loop {
            let page = self.hub.recommendations(next).await?;
            items.extend(page.items);
            match page.next {
                Some(n) => next = Some(n),
                None => break,
            }
        }
        Ok((config, items))
    }

    /// Sends a heartbeat when one is due.
    pub async fn heartbeat(&mut self) {
        let now = self.clock.now_ms();
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

    /// Runs until `stop`: passes, changes in flight, heartbeats; events are delivered by
    /// a task of their own.
    pub async fn run(mut self, stop: crate::jobs::Stop) {
        let mut delivery = tokio::spawn(deliver(self.outbox.clone(), self.hub.clone()));
        let mut stop = std::pin::pin!(stop);
        loop {
            let report = self.pass().await;
            tracing::debug!(?report, "agent pass");
            self.heartbeat().await;
            let interval = self.settings.loop_interval_seconds.clamp(1, 3600) as i64 * 1000;
            let next_pass = self.clock.now_ms() + interval;
            while self.clock.now_ms() < next_pass {
                let left = (next_pass - self.clock.now_ms()).max(1) as u64;
                let active = self.busy() || self.watching();
                let wait = left.min(if active { 500 } else { 5_000 });
                tokio::select! {
                    _ = &mut stop => {
                        delivery.abort();
                        let _ = self.outbox.flush(self.hub.as_ref()).await;
                        tracing::info!("agent stopped");
                        return;
                    }
                    _ = self.view.changed(Duration::from_millis(wait)) => {}
                    // Delivery never returns: ending means it panicked. The agent must
                    // not go on deciding with nobody delivering, so it ends too (as a
                    // job, the process stops loudly, naming it).
                    ended = &mut delivery => {
                        let why = match ended {
                            Err(e) => crate::jobs::panic_message(e),
                            Ok(()) => "it returned".into(),
                        };
                        tracing::error!(cause = %why, "the agent's event delivery ended");
                        panic!("the agent's event delivery ended: {why}");
                    }
                }
                if self.busy() || self.watching() {
                    self.advance_all().await;
                }
                self.heartbeat().await;
            }
        }
    }
}

/// The delivery task: flushes when woken and retries with backoff (1 s doubling to 60 s)
/// while the hub is away; the first failure of a streak is logged, not every retry.
async fn deliver<H: Hub>(outbox: Outbox, hub: Arc<H>) {
    let mut backoff = Duration::from_secs(1);
    let mut failing = false;
    loop {
        match outbox.flush(hub.as_ref()).await {
            Flushed::Empty { delivered } => {
                if failing && delivered > 0 {
                    tracing::info!(delivered, "the hub is back; buffered events delivered");
                }
                failing = false;
                backoff = Duration::from_secs(1);
                outbox.woken().await;
            }
            Flushed::Stopped(e) => {
                if !failing {
                    tracing::warn!(error = %e, buffered = outbox.len(), "events not delivered; retrying with backoff");
                }
                failing = true;
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(60));
            }
        }
    }
}
