//! The pure half of a backtest: the values a policy would have set for one workload
//! (from the engine's results), and how the recorded usage of a scoring window fares
//! against them: the share of CPU samples above the request (borrowed from idle
//! neighbours, or contended), above the limit (throttled), and the times memory would
//! have crossed the limit (would-be OOM kills). docs/contracts/policy.md, "Backtest".

use serde::Serialize;

use crate::analysis::{
    normalize_samples, ContainerObservation, Resource, ResourceAnalysis, Setting, Signal,
};

/// A request and a limit in force (`None`: not set).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Values {
    pub request: Option<f64>,
    pub limit: Option<f64>,
}

/// One resource of one container: what is set today and what the policy would set.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Change {
    pub current: Values,
    pub recommended: Values,
}

/// One container's values under the policy (CPU in millicores, memory in bytes).
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct ContainerValues {
    pub name: String,
    pub cpu: Change,
    pub memory: Change,
}

fn known(s: &Signal) -> Option<f64> {
    (s.available && !s.unset).then_some(s.value)
}

/// The values of each container of `observations` once `results` (their engine
/// output) were applied: a recommended setting takes its suggestion, any other keeps
/// today's value.
pub fn values(
    observations: &[ContainerObservation],
    results: &[&ResourceAnalysis],
) -> Vec<ContainerValues> {
    let mut out: Vec<ContainerValues> = observations
        .iter()
        .map(|c| {
            let current = |o: &crate::analysis::ResourceObservation| Values {
                request: known(&o.current_request),
                limit: known(&o.current_limit),
            };
            let (cpu, memory) = (current(&c.cpu), current(&c.memory));
            ContainerValues {
                name: c.target.container.clone(),
                cpu: Change {
                    current: cpu,
                    recommended: cpu,
                },
                memory: Change {
                    current: memory,
                    recommended: memory,
                },
            }
        })
        .collect();
    for r in results {
        let Some(c) = out.iter_mut().find(|c| c.name == r.target.container) else {
            continue;
        };
        let change = match r.resource {
            Resource::Cpu => &mut c.cpu,
            Resource::Memory => &mut c.memory,
        };
        for rec in &r.recommendations {
            match rec.setting {
                Setting::Requests => change.recommended.request = Some(rec.suggested_value),
                Setting::Limits => change.recommended.limit = Some(rec.suggested_value),
            }
        }
    }
    out
}

/// Counts over a scoring window; shares are counts over samples, so they add up
/// across containers and workloads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Counts {
    /// CPU usage samples scored (per pod and container, one per step).
    pub cpu_samples: u64,
    /// … of which above the request.
    pub cpu_above_request: u64,
    /// … of which at or above the limit (throttled there: recorded usage that reached
    /// today's limit wanted more).
    pub cpu_above_limit: u64,
    /// Memory samples scored.
    pub memory_samples: u64,
    /// … of which above the request (first in line for eviction under node pressure).
    pub memory_above_request: u64,
    /// Times memory would have reached the limit: recorded container lifetimes that
    /// reach it (once each), plus recorded OOM kills at a limit no higher than it.
    pub would_be_oom_kills: u64,
    /// OOM kills recorded in the window (at today's limits).
    pub recorded_oom_kills: u64,
}

impl Counts {
    pub fn add(&mut self, o: &Counts) {
        self.cpu_samples += o.cpu_samples;
        self.cpu_above_request += o.cpu_above_request;
        self.cpu_above_limit += o.cpu_above_limit;
        self.memory_samples += o.memory_samples;
        self.memory_above_request += o.memory_above_request;
        self.would_be_oom_kills += o.would_be_oom_kills;
        self.recorded_oom_kills += o.recorded_oom_kills;
    }

    /// Share of CPU samples above the request, 0..=1 (`None` without samples).
    pub fn cpu_above_request_share(&self) -> Option<f64> {
        share(self.cpu_above_request, self.cpu_samples)
    }

    /// Share of CPU samples above the limit (time throttled), 0..=1.
    pub fn cpu_throttled_share(&self) -> Option<f64> {
        share(self.cpu_above_limit, self.cpu_samples)
    }

    /// Share of memory samples above the request, 0..=1.
    pub fn memory_above_request_share(&self) -> Option<f64> {
        share(self.memory_above_request, self.memory_samples)
    }
}

fn share(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

/// A kill this soon after a lifetime reached the limit is that lifetime's kill.
const SAME_KILL_MS: i64 = 5 * 60_000;

/// Scores `c`'s recorded usage in `(from_ms, to_ms]` against `v` (its values under
/// the policy).
pub fn score(c: &ContainerObservation, v: &ContainerValues, from_ms: i64, to_ms: i64) -> Counts {
    let mut out = Counts::default();
    for s in &c.cpu.series {
        let Ok(rates) = normalize_samples(s, from_ms, to_ms) else {
            continue;
        };
        for x in rates.iter().filter(|x| x.timestamp > from_ms) {
            out.cpu_samples += 1;
            let request = v.cpu.recommended.request.unwrap_or(0.0);
            out.cpu_above_request += u64::from(x.value > request);
            if let Some(limit) = v.cpu.recommended.limit {
                // Counters turn a pinned rate into float noise around the limit.
                out.cpu_above_limit += u64::from(x.value >= limit * (1.0 - 1e-9));
            }
        }
    }
    let limit = v.memory.recommended.limit;
    // (pod, time of the would-be kill) per series: at most one per recorded container
    // lifetime, since after a kill the recording no longer says what the restarted
    // container would have used.
    let mut excursions: Vec<(String, i64)> = Vec::new();
    for s in &c.memory.series {
        let Ok(samples) = normalize_samples(s, from_ms, to_ms) else {
            continue;
        };
        let request = v.memory.recommended.request.unwrap_or(0.0);
        let mut killed = false;
        for x in samples.iter().filter(|x| x.timestamp > from_ms) {
            out.memory_samples += 1;
            out.memory_above_request += u64::from(x.value > request);
            if !killed && limit.is_some_and(|l| x.value >= l) {
                killed = true;
                out.would_be_oom_kills += 1;
                excursions.push((pod_of(&s.pod_uid, &s.id), x.timestamp));
            }
        }
    }
    for k in c
        .oom_kills
        .iter()
        .filter(|k| k.timestamp > from_ms && k.timestamp <= to_ms)
    {
        out.recorded_oom_kills += 1;
        // Usage reached the limit in force at the kill; a limit no higher fails too.
        // An unknown limit counts: the kill is not shown to be avoided.
        let fails = match limit {
            None => false,
            Some(l) => k.memory_limit_bytes <= 0.0 || l <= k.memory_limit_bytes,
        };
        // The recorded kill ends the lifetime whose climb was already counted.
        let seen = excursions.iter().any(|(pod, at)| {
            *pod == k.pod_uid && *at <= k.timestamp && k.timestamp - at <= SAME_KILL_MS
        });
        if fails && !seen {
            out.would_be_oom_kills += 1;
        }
    }
    out
}

fn pod_of(pod_uid: &str, id: &str) -> String {
    if pod_uid.is_empty() {
        id.to_string()
    } else {
        pod_uid.to_string()
    }
}

#[cfg(test)]
#[path = "backtest_score_tests.rs"]
mod tests;
