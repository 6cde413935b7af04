//! The agent as collector of usage, for a hub that reads a cluster's usage from its
//! own store instead of a Prometheus (`[collector]`; `auto`: when the config feed says
//! `usageSource: embedded`). Every `interval` it takes the cluster as the agent's
//! watches see it and turns it into kube-state-metrics-shaped series (`kube_state`),
//! scrapes every node's kubelet for CPU usage and memory working set (`scrape`), keeps
//! only samples newer than what it sent of each series, cuts them into remote-write
//! requests (`series`) and buffers them, bounded, for a delivery loop that ships them to
//! the hub (`buffer`).
//!
//! It runs as a task of the agent, supervised as event delivery is: trouble (a kubelet
//! that does not answer, the hub away) is logged (throttled), counted in `/metrics`, and
//! never stops the agent; a panic ends the agent loudly.

mod buffer;
mod kube_state;
mod scrape;
mod series;

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use super::hub::Hub;
use crate::clock::Clock;
use crate::cluster::{Cluster, View};
use crate::jobs::LogThrottle;
use crate::metrics::{CollectorMetrics, SourceLabels};
use crate::wire::UsageSource;
use buffer::Buffer;

/// Whether the agent collects (`[collector] enabled`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Enabled {
    /// When the hub reads the cluster's usage from its embedded store.
    #[default]
    Auto,
    On,
    Off,
}

/// How the agent collects (`[collector]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    pub enabled: Enabled,
    pub interval: Duration,
    pub scrape_timeout: Duration,
    pub max_concurrent_nodes: usize,
    pub buffer_max_samples: usize,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            enabled: Enabled::Auto,
            interval: Duration::from_secs(30),
            scrape_timeout: Duration::from_secs(10),
            max_concurrent_nodes: 4,
            buffer_max_samples: 1_000_000,
        }
    }
}

/// The collector of one agent.
pub struct Collector<C: Cluster, H: Hub> {
    pub cluster: Arc<C>,
    pub view: Arc<C::View>,
    pub hub: Arc<H>,
    pub clock: Arc<dyn Clock>,
    pub settings: Settings,
    /// Namespaces in scope (empty = all): a kubelet serves every pod of its node.
    pub namespaces: Vec<String>,
    pub metrics: CollectorMetrics,
    /// Where the hub reads usage, as its last config feed said.
    pub source: watch::Receiver<UsageSource>,
}

/// What one collection keeps from the one before.
struct Rounds {
    fresh: series::Fresh,
    failures: LogThrottle,
    collecting: bool,
}

impl<C: Cluster, H: Hub> Collector<C, H> {
    /// Collects and delivers until dropped (never returns).
    pub async fn run(self) {
        let buffer = Buffer::new(self.settings.buffer_max_samples, self.metrics.clone());
        tokio::join!(
            buffer::deliver(buffer.clone(), self.hub.clone()),
            self.collect_every_interval(&buffer)
        );
    }

    fn wanted(&self) -> bool {
        match self.settings.enabled {
            Enabled::On => true,
            Enabled::Off => false,
            Enabled::Auto => *self.source.borrow() == UsageSource::Embedded,
        }
    }

    /// One collection per `interval` of the agent's clock.
    async fn collect_every_interval(&self, buffer: &Buffer) {
        let interval = self.settings.interval.as_millis().max(1) as i64;
        let mut rounds = Rounds {
            fresh: series::Fresh::default(),
            failures: LogThrottle::new(Duration::from_secs(60)),
            collecting: false,
        };
        let mut due = self.clock.now_ms();
        loop {
            // Until the next interval, or at once when the hub's feed switches
            // collection on (or off): a cluster unlinked from its Prometheus is collected
            // for from that moment, not an interval later.
            loop {
                let left = due - self.clock.now_ms();
                if left <= 0 || self.wanted() != rounds.collecting {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(left.min(200) as u64)).await;
            }
            let now = self.clock.now_ms();
            due = if due <= now {
                (due + interval).max(now + 1)
            } else {
                now + interval
            };
            let wanted = self.wanted();
            if wanted != rounds.collecting {
                tracing::info!(
                    collecting = wanted,
                    "the agent {} usage for the hub",
                    if wanted {
                        "collects"
                    } else {
                        "no longer collects"
                    }
                );
                rounds.collecting = wanted;
            }
            if wanted {
                self.collect(now, &mut rounds, buffer).await;
            }
        }
    }

    /// One collection at `now`: the watches' series and every kubelet's usage, into the
    /// buffer.
    async fn collect(&self, now: i64, rounds: &mut Rounds, buffer: &Buffer) {
        let snap = self.view.snapshot();
        let limits = scrape::Limits {
            timeout: self.settings.scrape_timeout,
            concurrent: self.settings.max_concurrent_nodes,
        };
        let usage = scrape::usage(
            self.cluster.as_ref(),
            &snap.nodes,
            &self.namespaces,
            now,
            limits,
            &self.metrics,
            &mut rounds.failures,
        )
        .await;
        let kube_state = rounds.fresh.keep(kube_state::series(&snap, now), now);
        let cadvisor = rounds
            .fresh
            .keep(usage.iter().map(scrape::series).collect(), now);
        for (source, n) in [
            ("kube-state", kube_state.len()),
            ("cadvisor", cadvisor.len()),
        ] {
            let labels = SourceLabels {
                source: source.into(),
            };
            self.metrics.samples.get_or_create(&labels).inc_by(n as u64);
        }
        match series::requests(kube_state.into_iter().chain(cadvisor).collect()) {
            Ok(requests) => {
                for (body, samples) in requests {
                    buffer.push(body, samples);
                }
            }
            Err(e) => {
                tracing::error!(error = %e, "collected samples cannot be encoded; this collection is lost")
            }
        }
    }
}
