//! Per-workload effective mode and policy identity for a cluster's config feed, resolved
//! from the stored policies and overrides exactly as runs resolve them, so the identity
//! the feed shows equals the one each recommendation records.

use crate::policy::{EffectivePolicy, WorkloadRef};
use crate::runs::Runs;
use crate::store::{Store, StoreError, WorkloadFilter, WorkloadRow};

/// One workload's resolution, as the agent needs it.
#[derive(Debug, Clone)]
pub struct WorkloadEffective {
    pub workload: WorkloadRow,
    pub effective: EffectivePolicy,
    pub identity: String,
}

/// Every workload of `cluster` (stale ones included: the agent may still hold them)
/// with its effective policy and identity, by workload id.
pub async fn effective_for_cluster(
    store: &Store,
    runs: &Runs,
    now: i64,
    cluster: &str,
) -> Result<Vec<WorkloadEffective>, StoreError> {
    let settings = runs
        .recommender()
        .await
        .map_err(|e| StoreError::Task(e.to_string()))?;
    let set = runs
        .policy_set(Some(cluster), &settings)
        .await
        .map_err(|e| StoreError::Task(e.to_string()))?;
    let mut out = Vec::new();
    for w in all_workloads(store, cluster).await? {
        let r = set.resolve(&w.seen.id, &workload_ref(&w), now);
        out.push(WorkloadEffective {
            workload: w,
            effective: r.effective,
            identity: r.identity,
        });
    }
    Ok(out)
}

/// The reference resolution matches on.
pub fn workload_ref(w: &WorkloadRow) -> WorkloadRef {
    let s = &w.seen;
    WorkloadRef::from_columns(&s.cluster, &s.namespace, &s.kind, &s.name, &s.labels)
}

async fn all_workloads(store: &Store, cluster: &str) -> Result<Vec<WorkloadRow>, StoreError> {
    const PAGE: usize = 1000;
    let mut out: Vec<WorkloadRow> = Vec::new();
    let mut after = None;
    loop {
        let filter = WorkloadFilter {
            cluster: Some(cluster.to_string()),
            after,
            limit: PAGE,
            ..Default::default()
        };
        let page = store.reading(move |r| r.list_workloads(&filter)).await?;
        out.extend(page.items);
        match page.next {
            Some(next) => after = Some(next),
            None => return Ok(out),
        }
    }
}
