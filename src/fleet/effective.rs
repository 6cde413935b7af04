//! Per-workload effective mode and policy identity for a cluster's config feed.
//!
//! SEAM: the policy store lands from the `policies` branch. Until then [`stored_policies`]
//! returns no policies and no overrides, so every workload resolves to the defaults plus
//! the recommender's analysis policy. Switching to the stored policies and overrides is
//! this one function.

use crate::policy::{resolve, EffectivePolicy, OverrideSpec, StoredPolicy, WorkloadRef};
use crate::runs::Runs;
use crate::store::{Store, StoreError, WorkloadFilter, WorkloadRow, WorkloadSort};

/// One workload's resolution, as the agent needs it.
#[derive(Debug, Clone)]
pub struct WorkloadEffective {
    pub workload: WorkloadRow,
    pub effective: EffectivePolicy,
    pub identity: String,
}

/// The live policies and the overrides (workload id → spec, expiry) resolution uses.
/// SEAM (see the module docs): empty until the policy store lands.
async fn stored_policies(
    _store: &Store,
) -> Result<(Vec<StoredPolicy>, Vec<(String, OverrideSpec, Option<i64>)>), StoreError> {
    Ok((Vec::new(), Vec::new()))
}

/// Every workload of `cluster` (stale ones included: the agent may still hold them)
/// with its effective policy and identity, by workload id.
pub async fn effective_for_cluster(
    store: &Store,
    runs: &Runs,
    cluster: &str,
) -> Result<Vec<WorkloadEffective>, StoreError> {
    let settings = runs
        .recommender()
        .await
        .map_err(|e| StoreError::Task(e.to_string()))?;
    let default_analysis =
        serde_json::to_value(&settings.policy).map_err(|e| StoreError::Task(e.to_string()))?;
    let (policies, overrides) = stored_policies(store).await?;
    let now = runs.clock().now_ms();
    let mut out = Vec::new();
    for w in all_workloads(store, cluster).await? {
        let labels = serde_json::from_str(&w.seen.labels).unwrap_or_default();
        let wref = WorkloadRef {
            cluster: w.seen.cluster.clone(),
            namespace: w.seen.namespace.clone(),
            kind: w.seen.kind.clone(),
            name: w.seen.name.clone(),
            labels,
        };
        let ov = overrides
            .iter()
            .find(|(id, _, _)| *id == w.seen.id)
            .map(|(_, spec, exp)| (spec, *exp));
        let r = resolve(&wref, &policies, ov, &default_analysis, now);
        out.push(WorkloadEffective {
            workload: w,
            effective: r.effective,
            identity: r.identity,
        });
    }
    Ok(out)
}

async fn all_workloads(store: &Store, cluster: &str) -> Result<Vec<WorkloadRow>, StoreError> {
    const PAGE: usize = 1000;
    let mut out: Vec<WorkloadRow> = Vec::new();
    loop {
        let filter = WorkloadFilter {
            cluster: Some(cluster.to_string()),
            after: out.last().map(|w| {
                (
                    rusqlite::types::Value::Text(w.seen.name.clone()),
                    w.seen.id.clone(),
                )
            }),
            limit: PAGE,
            namespace: None,
            kind: None,
            search: None,
            has_recommendation: None,
            data_quality: None,
            notice: None,
            stale: None,
            sort: WorkloadSort::Name,
            descending: false,
        };
        let (page, more) = store.list_workloads(filter).await?;
        out.extend(page);
        if !more {
            return Ok(out);
        }
    }
}
