//! A run's look at the requests in force, against kerf's live changes: a request kerf
//! set that the cluster no longer holds (a person or a deployment tool replaced it after
//! kerf, or the pods never took it) stops counting as kerf's, so the workload pages stop
//! showing it applied and the realized saving stops counting it. Events fold kerf's own
//! changes in as they arrive (`fleet::applied`); only a run sees the changes of others.

use super::realized::{Chain, Observed};
use crate::analysis::{ContainerObservation, Signal};
use crate::store::{StoreError, Tx, WorkloadSeen};

/// How long after kerf's last change a run's reading may still show the values before
/// it: a rollout's new pods, and kube-state-metrics' next scrape of them.
pub const SETTLE_MS: i64 = 5 * 60_000;

/// What a run saw in force on one workload.
#[derive(Debug, Clone)]
pub struct SeenRequests {
    pub workload_id: String,
    pub replicas: Option<u32>,
    pub requests: Observed,
}

/// The requests of `containers` as the run read them (an unset request is 0, as the
/// chain counts it; a request the source did not give is left out).
pub fn seen(
    workload: &WorkloadSeen,
    replicas: Option<u32>,
    containers: &[ContainerObservation],
) -> SeenRequests {
    let mut requests = Observed::new();
    for c in containers {
        for (resource, signal) in [
            ("cpu", &c.cpu.current_request),
            ("memory", &c.memory.current_request),
        ] {
            if let Some(v) = read(signal) {
                requests
                    .entry(c.target.container.clone())
                    .or_default()
                    .insert(resource.to_string(), v);
            }
        }
    }
    SeenRequests {
        workload_id: workload.id.clone(),
        replicas,
        requests,
    }
}

fn read(s: &Signal) -> Option<(f64, i64)> {
    let value = if s.unset { 0.0 } else { s.value };
    s.available.then_some((value, s.timestamp))
}

/// Checks the live changes of the workloads in `seen` against what the run read, in the
/// transaction that stores the run's recommendations; `prices` are the cluster's (per
/// vCPU-hour, per GiB-hour).
pub fn reconcile(tx: &Tx<'_>, seen: &[SeenRequests], prices: (f64, f64)) -> Result<(), StoreError> {
    let ids: Vec<String> = seen.iter().map(|s| s.workload_id.clone()).collect();
    for live in tx.live_changes_of(&ids)? {
        let Some(s) = seen.iter().find(|s| s.workload_id == live.workload_id) else {
            continue;
        };
        let mut chain: Chain = serde_json::from_str(&live.chain)
            .map_err(|e| StoreError::Task(format!("live change of {}: {e}", live.workload_id)))?;
        if !chain.keep_observed(&s.requests, live.updated_at + SETTLE_MS) {
            continue;
        }
        if chain.is_empty() {
            tx.delete_live_change(&live.workload_id)?;
            continue;
        }
        let realized = s
            .replicas
            .map_or(0.0, |n| chain.realized_monthly(prices, f64::from(n)));
        let json = serde_json::to_string(&chain).map_err(|e| StoreError::Task(e.to_string()))?;
        tx.update_live_chain(&live.workload_id, &json, realized, live.updated_at)?;
    }
    Ok(())
}
