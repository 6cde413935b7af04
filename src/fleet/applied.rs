//! What an agent's `applied` and `rolled_back` events change on the hub at once, in the
//! transaction that stores them: the workload's live change (`runs::realized`: the
//! requests before kerf's first change and those in force), and its available saving,
//! when the change landed after its latest recommendation was made (a run made later
//! read the new values itself).

use crate::events::ValidEvent;
use crate::runs::realized::{self, Chain};
use crate::store::live_changes::LiveChange;
use crate::store::{StoreError, Tx};
use crate::wire::EventType;

/// Folds the newly stored event `v` of `cluster` in; `prices` are the cluster's (per
/// vCPU-hour, per GiB-hour). Events of other types, and of workloads no run has seen,
/// change nothing.
pub fn fold(
    tx: &Tx<'_>,
    cluster: &str,
    v: &ValidEvent,
    prices: (f64, f64),
) -> Result<(), StoreError> {
    let e = &v.event;
    if !matches!(e.event_type, EventType::Applied | EventType::RolledBack) {
        return Ok(());
    }
    let Some(target) = tx.fold_target(cluster, &e.workload)? else {
        return Ok(());
    };
    let mut chain: Chain = target
        .chain
        .as_deref()
        .and_then(|c| serde_json::from_str(c).ok())
        .unwrap_or_default();
    chain.fold(&e.containers);
    if let Some(replicas) = target.replicas {
        if target.recommended_at.is_some_and(|at| at < v.time_ms) {
            let moved = realized::monthly_change(
                &realized::requests_of(&e.containers, false),
                &realized::requests_of(&e.containers, true),
                prices,
                replicas as f64,
            );
            tx.shift_available(&target.workload_id, moved)?;
        }
    }
    let realized = target
        .replicas
        .map_or(0.0, |n| chain.realized_monthly(prices, n as f64));
    let chain_json = serde_json::to_string(&chain).map_err(|e| StoreError::Task(e.to_string()))?;
    if chain.is_empty() {
        return tx.delete_live_change(&target.workload_id);
    }
    if e.event_type == EventType::RolledBack {
        return tx.update_live_chain(&target.workload_id, &chain_json, realized, v.time_ms);
    }
    let containers =
        serde_json::to_string(&e.containers).map_err(|e| StoreError::Task(e.to_string()))?;
    tx.put_live_change(&LiveChange {
        workload_id: target.workload_id,
        chain: chain_json,
        realized_monthly: realized,
        applied_at: v.time_ms,
        event_id: e.id.clone(),
        reason: e.reason.as_str().to_string(),
        approved_by: e.details.get("approvedBy").cloned(),
        strategy: e
            .strategy
            .and_then(|s| serde_json::to_value(s).ok())
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
        recommendation_id: e.recommendation_id.clone(),
        containers,
        updated_at: v.time_ms,
    })
}
