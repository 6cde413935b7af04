//! What kerf's own changes saved, and what is left to save after them: one computation
//! for the workload pages, the overview, the digest and the exports.
//!
//! A workload's *chain* is what kerf changed on it and what of that is still live: per
//! container and resource, the request before kerf's first change (the baseline) and the
//! request kerf set last (in force). Each `applied` or `rolled_back` event the agent
//! sends is folded in as it arrives; a request back at its baseline leaves the chain.
//! The realized saving is the monthly cost of the baseline minus that of the requests
//! in force. The saving still available is the latest recommendation's cost change,
//! moved by every change applied after it was made (the next run reads the new values
//! itself). So, with usage unchanged, realized plus available is what was available
//! before anything was applied, whether the change was whole or partial.
//!
//! Money is priced as the runs price it (`summary::summarize`): requests, at the
//! cluster's prices, [`HOURS_PER_MONTH`] hours, times the replicas.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::summary::HOURS_PER_MONTH;
use crate::events::quantity;
use crate::wire::{ContainerChange, EventResource};

const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

/// Requests per container and resource (`cpu` in millicores, `memory` in bytes; an
/// unset request is 0: it costs nothing).
pub type Requests = BTreeMap<String, BTreeMap<String, f64>>;

/// The `from` (before) or `to` (after) requests an event's containers name.
pub fn requests_of(containers: &[ContainerChange], after: bool) -> Requests {
    let mut out = Requests::new();
    for c in containers {
        let side = if after { &c.to } else { &c.from };
        for (resource, name) in [
            (EventResource::Cpu, "cpu"),
            (EventResource::Memory, "memory"),
        ] {
            let v = side
                .requests
                .get(&resource)
                .and_then(|q| quantity::value(q));
            let touched = c.to.requests.contains_key(&resource);
            if touched {
                let v = v.unwrap_or(0.0) * if name == "cpu" { 1000.0 } else { 1.0 };
                out.entry(c.name.clone())
                    .or_default()
                    .insert(name.to_string(), v);
            }
        }
    }
    out
}

/// The requests a run saw in force, per container and resource (the units of
/// [`Requests`]), each with when it was observed (Unix ms).
pub type Observed = BTreeMap<String, BTreeMap<String, (f64, i64)>>;

/// kerf's live change on one workload.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Chain {
    /// The requests before kerf's first change of the chain.
    pub baseline: Requests,
    /// The requests kerf set last (the latest applied or rolled-back values).
    pub in_force: Requests,
}

/// Two requests closer than this (a thousandth of a millicore, of a byte) are equal.
const SAME: f64 = 1e-3;

impl Chain {
    /// Folds in the containers of one `applied` or `rolled_back` event; requests back at
    /// their baseline leave the chain.
    pub fn fold(&mut self, containers: &[ContainerChange]) {
        let from = requests_of(containers, false);
        for (container, values) in requests_of(containers, true) {
            for (resource, to) in values {
                let before = from
                    .get(&container)
                    .and_then(|r| r.get(&resource))
                    .copied()
                    .unwrap_or(0.0);
                self.baseline
                    .entry(container.clone())
                    .or_default()
                    .entry(resource.clone())
                    .or_insert(before);
                self.in_force
                    .entry(container.clone())
                    .or_default()
                    .insert(resource, to);
            }
        }
        let baseline = &self.baseline;
        for (container, values) in self.in_force.iter_mut() {
            values.retain(|resource, v| {
                let base = baseline.get(container).and_then(|b| b.get(resource));
                base.is_none_or(|b| (b - *v).abs() > SAME)
            });
        }
        self.forget_baselines_of_dropped();
    }

    /// Drops the requests the cluster no longer holds: a request kerf set that a run
    /// observed after `since_ms` at another value was replaced (by a person, a
    /// deployment tool, or a rollout that never reached the pods), so it is no longer
    /// kerf's live change. Observations from before `since_ms` (they may predate kerf's
    /// change) and requests a run did not see change nothing. Returns whether anything
    /// was dropped.
    pub fn keep_observed(&mut self, observed: &Observed, since_ms: i64) -> bool {
        let mut dropped = false;
        for (container, values) in self.in_force.iter_mut() {
            let seen = observed.get(container);
            values.retain(|resource, set| {
                let replaced = seen
                    .and_then(|s| s.get(resource))
                    .is_some_and(|&(value, at)| at > since_ms && !same_request(value, *set));
                dropped |= replaced;
                !replaced
            });
        }
        if dropped {
            self.forget_baselines_of_dropped();
        }
        dropped
    }

    /// Keeps a baseline only for a request still in force, and no empty container.
    fn forget_baselines_of_dropped(&mut self) {
        self.in_force.retain(|_, v| !v.is_empty());
        let in_force = &self.in_force;
        for (container, values) in self.baseline.iter_mut() {
            values.retain(|resource, _| {
                in_force
                    .get(container)
                    .is_some_and(|v| v.contains_key(resource))
            });
        }
        self.baseline.retain(|_, v| !v.is_empty());
    }

    /// Nothing of kerf's changes is live.
    pub fn is_empty(&self) -> bool {
        self.in_force.is_empty()
    }

    /// The monthly saving of the requests in force against the baseline (negative when
    /// kerf raised requests: the extra spend that protects the workload).
    pub fn realized_monthly(&self, prices: (f64, f64), replicas: f64) -> f64 {
        monthly_change(&self.in_force, &self.baseline, prices, replicas)
    }
}

/// A request read back from the cluster is the one kerf set: equal within half a
/// percent (what quantity rounding and unit conversion can move it), or [`SAME`].
fn same_request(observed: f64, set: f64) -> bool {
    (observed - set).abs() <= SAME.max(set.abs() * 0.005)
}

/// The monthly cost of going from `from` to `to`, for the containers and resources `to`
/// names, at `prices` (per vCPU-hour, per GiB-hour) and `replicas`.
pub fn monthly_change(from: &Requests, to: &Requests, prices: (f64, f64), replicas: f64) -> f64 {
    let (cpu_price, memory_price) = prices;
    let mut hourly = 0.0;
    for (container, values) in to {
        for (resource, after) in values {
            let before = from
                .get(container)
                .and_then(|v| v.get(resource))
                .copied()
                .unwrap_or(0.0);
            hourly += match resource.as_str() {
                "cpu" => (after - before) / 1000.0 * cpu_price,
                _ => (after - before) / GIB * memory_price,
            };
        }
    }
    hourly * HOURS_PER_MONTH * replicas
}

#[cfg(test)]
#[path = "realized_tests.rs"]
mod tests;
