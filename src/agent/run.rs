//! The agent's life: start (watch the cluster, read back its records, re-send what the
//! hub never acknowledged), then loop — a full pass every `loopIntervalSeconds`, the
//! changes in flight advanced as the watches see the cluster move, a heartbeat every
//! `heartbeatIntervalSeconds` — while a delivery task sends events to the hub (and,
//! when asked, a collector task ships usage). Stops when asked (the job's `Stop`).
//!
//! The agent owns its parts and lends them to its actions: the link to the hub
//! (`link`), what it keeps per workload (`memory`), the events on their way
//! (`reports`), the kubelets' counters (`counters`); `actions` acts on the cluster.
//!
//! One pass over every workload it sees: read both feeds (or note the hub away), look
//! at the health watches (rollbacks start whatever the hub says), match hub workloads
//! to live ones by namespace, kind and name, advance the changes in flight, decide for
//! the others, report on change, start the changes the decisions allow, release what
//! kerf owned of workloads that left `auto-patch`, keep in-place values on pods created
//! since, and write the records that changed.

use std::sync::Arc;
use std::time::Duration;

use super::actions::Actions;
use super::cluster_policies::PolicySync;
use super::collector::{self, Collector};
use super::counters::Counters;
use super::held_feeds::HeldFeeds;
use super::hub::Hub;
pub use super::link::Options;
use super::link::{situation, HubLink};
use super::memory::Memory;
use super::outbox::{Flushed, Outbox};
use super::reports::Reports;
use super::state::WorkloadState;
use crate::backoff::Backoff;
use crate::clock::Clock;
use crate::cluster::{Cluster, ClusterError, View, WorkloadKey};
use crate::metrics::CollectorMetrics;
use crate::wire::UsageSource;

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
    cluster: Arc<C>,
    view: Arc<C::View>,
    clock: Arc<dyn Clock>,
    link: HubLink<H>,
    memory: Memory,
    reports: Reports,
    counters: Counters,
    /// The hub's feeds as last read (taken for the length of a pass).
    held: HeldFeeds,
    /// Where the hub reads usage, as its last config feed said (the collector's `auto`).
    usage_source: tokio::sync::watch::Sender<UsageSource>,
    /// How to collect usage, when asked to ([`Agent::with_collector`]).
    collector: Option<(collector::Settings, CollectorMetrics)>,
    /// The version of the feeds held, for the long poll (`super::long_poll`).
    feed_version: tokio::sync::watch::Sender<Option<String>>,
    /// The cluster's RightsizingPolicy objects as judged and reported.
    policies: PolicySync,
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
        let mut memory = Memory::default();
        let mut reports = Reports::new(outbox);
        for record in records {
            let Some(key) = super::record::workload_of(&record) else {
                continue;
            };
            let state = super::record::state_of(&record).unwrap_or_default();
            reports.resend(&key, &state.unsent);
            memory.recall(key, state, record);
        }
        let link = HubLink::new(hub, options, kubernetes_version);
        tracing::info!(
            cluster = %link.options().cluster,
            kubernetes = %link.kubernetes_version(),
            records = memory.len(),
            resent = reports.outbox().len(),
            "agent started"
        );
        Ok(Agent {
            cluster: Arc::new(cluster),
            view: Arc::new(view),
            clock,
            link,
            memory,
            reports,
            counters: Counters::default(),
            held: HeldFeeds::default(),
            usage_source: tokio::sync::watch::Sender::new(UsageSource::default()),
            collector: None,
            feed_version: tokio::sync::watch::Sender::new(None),
            policies: PolicySync::default(),
        })
    }

    /// The agent also collects usage for the hub while it runs, as `settings` say
    /// (`[collector]`), counting in `metrics`.
    pub fn with_collector(
        mut self,
        settings: collector::Settings,
        metrics: CollectorMetrics,
    ) -> Self {
        self.collector = Some((settings, metrics));
        self
    }

    /// The memory of one workload (tests, benchmarks).
    pub fn state(&self, key: &WorkloadKey) -> Option<&WorkloadState> {
        self.memory.get(key).map(|t| &t.state)
    }

    /// Every workload's memory (tests, benchmarks, diagnostics).
    pub fn states(&self) -> impl Iterator<Item = (&WorkloadKey, &WorkloadState)> {
        self.memory.states()
    }

    /// The shared event buffer.
    pub fn outbox(&self) -> &Outbox {
        self.reports.outbox()
    }

    /// True while some change is in flight.
    pub fn busy(&self) -> bool {
        self.memory.busy()
    }

    /// True while some change is watched.
    pub fn watching(&self) -> bool {
        self.memory.watching()
    }

    /// Sends a heartbeat when one is due.
    pub async fn heartbeat(&mut self) {
        let now = self.clock.now_ms();
        self.link.heartbeat(now).await;
    }

    /// The parts the actions need, lent for one round.
    fn actions(&mut self) -> Actions<'_, C> {
        Actions::new(
            &self.cluster,
            self.clock.as_ref(),
            &mut self.memory,
            &mut self.reports,
            &mut self.counters,
        )
    }

    /// One pass over every workload.
    pub async fn pass(&mut self) -> PassReport {
        self.reports.settle(&mut self.memory);
        let mut held = std::mem::take(&mut self.held);
        let fetched = self.link.fetch(&mut held, self.clock.now_ms()).await;
        let now = self.clock.now_ms();
        let config = match fetched {
            Ok(()) => held.head(),
            Err(e) => {
                tracing::warn!(error = %e, "the hub cannot be reached; nothing new is applied");
                None
            }
        };
        if let Some(c) = config {
            self.link.adopt(c.agent.clone());
            self.usage_source.send_replace(c.usage_source);
            self.reports
                .outbox()
                .set_capacity(c.agent.event_buffer_size as usize);
        }
        let snap = self.view.snapshot();
        let s = situation(now, config);
        // What the feeds say counts only when the hub answered this pass.
        let feeds = config.map(|_| &held);
        let mut report = PassReport {
            hub_reachable: s.hub_reachable,
            workloads: snap.workloads.len(),
            ..PassReport::default()
        };
        let mut act = self.actions();
        let before = act.queued_events();
        let rolled = act.watch_all(&snap, now).await;
        for w in &snap.workloads {
            // Rolled back just now: the snapshot still shows the values before.
            if rolled.contains(&w.key) {
                continue;
            }
            if act.changing(&w.key) {
                act.advance(&w.key, &snap, now).await;
                continue;
            }
            if let Some((what, error)) = feeds.and_then(|f| f.unreadable_of(&w.key)) {
                act.unreadable(&w.key, what, error, now);
                continue;
            }
            let started = act
                .decide_one(
                    &s,
                    w,
                    &snap,
                    feeds.and_then(|f| f.config_of(&w.key)),
                    feeds.and_then(|f| f.item_of(&w.key)),
                )
                .await;
            report.started += usize::from(started);
        }
        report.events = act.queued_events() - before;
        report.records_written = act.persist().await;
        // After the decisions: a change of the policies moves the hub's feeds, and the
        // long poll starts the next pass on them at once.
        self.policies
            .sync(
                self.cluster.as_ref(),
                self.link.hub().as_ref(),
                &snap.policies,
                s.hub_reachable,
                now,
            )
            .await;
        let version = held.version().map(str::to_string);
        self.feed_version.send_if_modified(|v| {
            let moved = *v != version;
            *v = version;
            moved
        });
        self.held = held;
        report
    }

    /// Advances every change in flight (between passes, as the watches see pods move).
    pub async fn advance_all(&mut self) {
        self.reports.settle(&mut self.memory);
        let snap = self.view.snapshot();
        let now = self.clock.now_ms();
        let mut act = self.actions();
        let rolled = act.watch_all(&snap, now).await;
        for key in act.in_flight() {
            // A rollback the watches started was advanced by them with this snapshot,
            // which still shows the values before: advancing it again would resize
            // each pod a second time.
            if rolled.contains(&key) {
                continue;
            }
            act.advance(&key, &snap, now).await;
        }
        act.persist().await;
    }

    /// The collector's task, unless none was asked for or its settings say `off`.
    fn start_collector(&mut self) -> Option<tokio::task::JoinHandle<()>>
    where
        C: 'static,
    {
        let (settings, metrics) = self.collector.take()?;
        if settings.enabled == collector::Enabled::Off {
            return None;
        }
        let collector = Collector {
            cluster: self.cluster.clone(),
            view: self.view.clone(),
            hub: self.link.hub().clone(),
            clock: self.clock.clone(),
            settings,
            namespaces: self.link.options().namespaces.clone(),
            metrics,
            source: self.usage_source.subscribe(),
        };
        Some(tokio::spawn(collector.run()))
    }

    /// Runs until `stop`: passes, changes in flight, heartbeats; events are delivered,
    /// and usage collected, by tasks of their own.
    pub async fn run(mut self, stop: crate::jobs::Stop)
    where
        C: 'static,
    {
        let mut delivery = tokio::spawn(deliver(
            self.reports.outbox().clone(),
            self.link.hub().clone(),
        ));
        let mut collecting = self.start_collector();
        let feeds_moved = Arc::new(tokio::sync::Notify::new());
        let polling = tokio::spawn(super::long_poll::run(
            self.link.hub().clone(),
            self.feed_version.subscribe(),
            feeds_moved.clone(),
        ));
        let mut stop = std::pin::pin!(stop);
        loop {
            let report = self.pass().await;
            tracing::debug!(?report, "agent pass");
            self.heartbeat().await;
            let interval = self.link.settings().loop_interval_seconds.clamp(1, 3600) as i64 * 1000;
            let next_pass = self.clock.now_ms() + interval;
            while self.clock.now_ms() < next_pass {
                let left = (next_pass - self.clock.now_ms()).max(1) as u64;
                let active = self.busy() || self.watching();
                let wait = left.min(if active { 500 } else { 5_000 });
                let mut moved = false;
                tokio::select! {
                    _ = &mut stop => {
                        delivery.abort();
                        polling.abort();
                        if let Some(c) = &collecting {
                            c.abort();
                        }
                        let _ = self
                            .reports
                            .outbox()
                            .flush(self.link.hub().as_ref())
                            .await;
                        tracing::info!("agent stopped");
                        return;
                    }
                    _ = self.view.changed(Duration::from_millis(wait)) => {}
                    // The hub's feeds moved (the long poll): pass now.
                    _ = feeds_moved.notified() => moved = true,
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
                    // The collector never returns either: a panic in it ends the agent.
                    ended = async {
                        match &mut collecting {
                            Some(task) => task.await,
                            None => std::future::pending().await,
                        }
                    } => {
                        let why = match ended {
                            Err(e) => crate::jobs::panic_message(e),
                            Ok(()) => "it returned".into(),
                        };
                        tracing::error!(cause = %why, "the agent's collector ended");
                        panic!("the agent's collector ended: {why}");
                    }
                }
                if moved {
                    break;
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
    let mut backoff = Backoff::doubling(Duration::from_secs(1), Duration::from_secs(60)).streak();
    let mut failing = false;
    loop {
        match outbox.flush(hub.as_ref()).await {
            Flushed::Empty { delivered } => {
                if failing && delivered > 0 {
                    tracing::info!(delivered, "the hub is back; buffered events delivered");
                }
                failing = false;
                backoff.reset();
                outbox.woken().await;
            }
            Flushed::Stopped(e) => {
                if !failing {
                    tracing::warn!(error = %e, buffered = outbox.len(), "events not delivered; retrying with backoff");
                }
                failing = true;
                tokio::time::sleep(backoff.next_delay()).await;
            }
        }
    }
}
