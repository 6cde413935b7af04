//! The kubelets' CPU counters as the agent reads them: at most every [`READ_EVERY`]
//! per node, only for nodes running pods that a health watch or a CPU decrease needs,
//! their readings kept for the `Throttled` guardrail's recent window (in memory: after
//! a restart the first window is the containers' lifetime), and the throttling ratios
//! read from them.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::{Duration, Instant};

use super::decide::watch::MIN_PERIODS;
use super::state::WorkloadState;
use crate::clock::Clock;
use crate::cluster::{Cluster, CpuCounters, Pod, Snapshot, Workload};
use crate::wire::{EventResource, RecommendationItem, WorkloadConfig};

/// A node's kubelet is read at most this often.
pub const READ_EVERY: Duration = Duration::from_secs(5);

/// Readings kept per container for the recent window.
const KEEP: usize = 512;

type ContainerKey = (String, String, String);

/// The kubelets' counters as last read, and each container's recent readings.
#[derive(Default)]
pub struct Counters {
    nodes: HashMap<String, (Instant, Vec<CpuCounters>)>,
    history: HashMap<ContainerKey, VecDeque<(i64, u64, u64)>>,
    /// Nodes whose kubelet failed, and when that was last logged.
    failing: HashMap<String, Instant>,
}

impl Counters {
    /// The recent throttling ratio of `container` over `pods`, looking back `window_ms`
    /// from `now_ms` (the highest over the pods), from the readings kept.
    pub fn ratio(
        &self,
        pods: &[&Pod],
        container: &str,
        now_ms: i64,
        window_ms: i64,
    ) -> Option<f64> {
        pods.iter()
            .filter_map(|p| {
                let key = (
                    p.pod.namespace.clone(),
                    p.pod.name.clone(),
                    container.to_string(),
                );
                let h = self.history.get(&key)?;
                let last = h.back()?;
                let first = h.iter().find(|r| r.0 >= now_ms - window_ms).unwrap_or(last);
                let (periods, throttled) = if last.1 > first.1 && last.1 - first.1 >= MIN_PERIODS {
                    (last.1 - first.1, last.2.saturating_sub(first.2))
                } else {
                    // One reading (or a restarted counter): the container's lifetime.
                    (last.1, last.2)
                };
                (periods >= MIN_PERIODS).then(|| throttled as f64 / periods as f64)
            })
            .fold(None, |acc: Option<f64>, r| {
                Some(acc.map_or(r, |a| a.max(r)))
            })
    }

    fn remember(&mut self, now_ms: i64, counters: &[CpuCounters]) {
        for c in counters {
            let key = (
                c.pod.namespace.clone(),
                c.pod.name.clone(),
                c.container.clone(),
            );
            let h = self.history.entry(key).or_default();
            if h.back().is_some_and(|r| r.0 == now_ms) {
                h.pop_back();
            }
            h.push_back((now_ms, c.periods, c.throttled_periods));
            while h.len() > KEEP {
                h.pop_front();
            }
        }
    }

    /// The counters of the containers of `pods` (read from their nodes' kubelets when
    /// the last reading is older than [`READ_EVERY`]); empty when no kubelet answers.
    pub async fn read<C: Cluster>(
        &mut self,
        cluster: &C,
        clock: &dyn Clock,
        snap: &Snapshot,
        pods: &[&Pod],
    ) -> Vec<CpuCounters> {
        let mut nodes: Vec<&str> = pods.iter().filter_map(|p| p.node.as_deref()).collect();
        nodes.sort();
        nodes.dedup();
        let now_ms = clock.now_ms();
        let mut out = Vec::new();
        for name in nodes {
            let fresh = self
                .nodes
                .get(name)
                .is_some_and(|(at, _)| at.elapsed() < READ_EVERY);
            if !fresh {
                let Some(node) = snap.nodes.iter().find(|n| n.name == name) else {
                    continue;
                };
                let read = match cluster.cpu_counters(node).await {
                    Ok(c) => {
                        self.failing.remove(name);
                        c
                    }
                    Err(e) => {
                        let quiet = self
                            .failing
                            .get(name)
                            .is_some_and(|at| at.elapsed() < Duration::from_secs(60));
                        if !quiet {
                            tracing::warn!(node = %name, error = %e, "cannot read the kubelet's CPU counters; throttling is unknown there");
                            self.failing.insert(name.to_string(), Instant::now());
                        }
                        Vec::new()
                    }
                };
                self.remember(now_ms, &read);
                self.nodes.insert(name.to_string(), (Instant::now(), read));
            }
            if let Some((_, c)) = self.nodes.get(name) {
                out.extend(
                    c.iter()
                        .filter(|c| pods.iter().any(|p| p.pod == c.pod))
                        .cloned(),
                );
            }
        }
        out
    }

    /// The throttling ratios the `Throttled` guardrail needs for `live`: read only when
    /// the recommendation lowers the CPU of a container with a CPU limit (the only
    /// ones the kernel throttles) and kerf may change CPU.
    #[allow(clippy::too_many_arguments)]
    pub async fn throttling<C: Cluster>(
        &mut self,
        cluster: &C,
        clock: &dyn Clock,
        live: &Workload,
        snap: &Snapshot,
        pods: &[&Pod],
        config: Option<&WorkloadConfig>,
        rec: Option<&RecommendationItem>,
        state: &WorkloadState,
    ) -> BTreeMap<String, f64> {
        let (Some(config), Some(rec)) = (config, rec) else {
            return BTreeMap::new();
        };
        let policy = &config.policy;
        let may = match policy.mode.cpu {
            crate::policy::Mode::AutoPatch => true,
            crate::policy::Mode::Audit => rec.approval.is_some(),
            crate::policy::Mode::Off => false,
        };
        if !may || policy.guardrails.rollback.throttling_ratio <= 0.0 {
            return BTreeMap::new();
        }
        let current = state.current(&live.containers);
        let proposal =
            super::decide::values::propose(&current, &rec.containers, &policy.excluded_containers);
        let lowered: Vec<String> = proposal
            .containers
            .iter()
            .filter(|c| c.current.cpu_limit.is_some())
            .filter(|c| {
                super::decide::values::fields_of(EventResource::Cpu)
                    .iter()
                    .any(|f| matches!((c.current.get(*f), c.target.get(*f)), (Some(a), Some(b)) if b < a))
            })
            .map(|c| c.name.clone())
            .collect();
        if lowered.is_empty() {
            return BTreeMap::new();
        }
        self.read(cluster, clock, snap, pods).await;
        let window_ms =
            crate::policy::validate::parse_duration(&policy.guardrails.rollback.watch_duration)
                .map_or(30 * 60_000, |s| s as i64 * 1000);
        ratios(self, pods, &lowered, clock.now_ms(), window_ms)
    }
}

/// The throttling ratio per container of `live`'s pods the `Throttled` guardrail reads.
pub fn ratios(
    counters: &Counters,
    pods: &[&Pod],
    containers: &[String],
    now_ms: i64,
    window_ms: i64,
) -> BTreeMap<String, f64> {
    containers
        .iter()
        .filter_map(|c| {
            counters
                .ratio(pods, c, now_ms, window_ms)
                .map(|r| (c.clone(), r))
        })
        .collect()
}
