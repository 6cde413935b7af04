//! The embedded datasource (issue 30): usage and kube-state-metrics series that agents
//! and Prometheus remote writers sent the hub, read from its usage store
//! (`store::usage`) instead of a Prometheus. It answers every query of
//! docs/contracts/datasource.md from the stored raw samples with the semantics
//! Prometheus gives them (`promql`, `steps`), into the same raw answers (`raw`), so the
//! shared `mapping` makes the engine's input as it does for Prometheus and the demo:
//! the inventory (`inventory`) plans the groups, each group's settings and OOM kills
//! (`settings`) come in one read, and usage streams workload by workload (`stream`).
//! Every read runs on a store reader, off the async runtime, bounded by one group's
//! namespaces and pods or one workload's pods; long ranges are read slot by slot.

mod chart;
mod inventory;
mod promql;
mod report;
mod selection;
mod settings;
mod steps;
mod stream;

use std::sync::Arc;
use std::time::Instant;

use crate::analysis::Series;
use crate::datasource::mapping::PodIndex;
use crate::datasource::plan::{plan_groups, MAX_GROUP_PODS};
use crate::datasource::{
    ClusterScope, CollectPlan, CollectStats, Collection, DatasourceError, Sink, Source, TestReport,
    UsageResource, Window,
};
use crate::store::usage::UsageStore;
use crate::store::{StoreError, UsageRead};
use selection::Selection;

/// How usage is read, as run records and `/metrics` name it.
pub const PROTOCOL: &str = "embedded";

/// The usage store of one kerf cluster as a datasource.
#[derive(Clone)]
pub struct EmbeddedSource {
    store: UsageStore,
    cluster: String,
}

impl std::fmt::Debug for EmbeddedSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddedSource")
            .field("store", &self.store.path())
            .field("cluster", &self.cluster)
            .finish()
    }
}

/// The window's length in milliseconds: the `[W]` of the queries, whole seconds as the
/// Prometheus client writes it.
fn check(window: Window) -> Result<i64, DatasourceError> {
    if window.end_ms <= window.start_ms || window.step_seconds == 0 {
        return Err(DatasourceError::Invalid(
            "window must have end > start and a positive step".into(),
        ));
    }
    Ok(((window.end_ms - window.start_ms) / 1000).max(1) * 1000)
}

fn ms(since: Instant) -> u64 {
    since.elapsed().as_millis() as u64
}

impl EmbeddedSource {
    /// The series cluster `cluster` sent, in `store`.
    pub fn new(store: UsageStore, cluster: &str) -> EmbeddedSource {
        EmbeddedSource {
            store,
            cluster: cluster.to_string(),
        }
    }

    /// The kerf cluster whose series are read.
    pub fn cluster(&self) -> &str {
        &self.cluster
    }

    /// The datasource as faults and errors name it.
    pub fn name(&self) -> String {
        format!("embedded usage store (cluster {})", self.cluster)
    }

    /// A scope of another cluster is a wiring mistake: this store holds one cluster.
    fn check_scope(&self, scope: &ClusterScope) -> Result<(), DatasourceError> {
        if scope.cluster == self.cluster {
            return Ok(());
        }
        Err(DatasourceError::Invalid(format!(
            "the embedded datasource of cluster {:?} was asked for cluster {:?}",
            self.cluster, scope.cluster
        )))
    }

    /// Runs `f` on a store reader, off the async runtime.
    async fn read<T, F>(&self, f: F) -> Result<T, DatasourceError>
    where
        T: Send + 'static,
        F: FnOnce(&UsageRead<'_>) -> Result<T, StoreError> + Send + 'static,
    {
        self.store
            .reading(f)
            .await
            .map_err(|e| DatasourceError::Query(format!("{}: {e}", self.name())))
    }
}

impl Source for EmbeddedSource {
    async fn plan(
        &self,
        scope: &ClusterScope,
        window: Window,
    ) -> Result<CollectPlan, DatasourceError> {
        let window_ms = check(window)?;
        self.check_scope(scope)?;
        let started = Instant::now();
        let sel = Selection::new(&self.cluster, scope, &[]);
        let end = window.end_ms;
        let inventory = self
            .read(move |r| inventory::inventory(r, &sel, end, window_ms))
            .await?;
        let pods = PodIndex::build(&inventory);
        drop(inventory);
        // Usage is read per workload, so a group only bounds the settings read.
        let groups = plan_groups(&pods, MAX_GROUP_PODS);
        Ok(CollectPlan {
            scope: scope.clone(),
            window,
            groups,
            pods: Arc::new(pods),
            stats: CollectStats {
                queries: 1,
                protocol: PROTOCOL.into(),
                phase_ms: vec![("inventory".into(), ms(started))],
                ..CollectStats::default()
            },
        })
    }

    async fn collect_group(
        &self,
        plan: &CollectPlan,
        index: usize,
    ) -> Result<Collection, DatasourceError> {
        crate::datasource::gather_streamed(self, plan, index).await
    }

    async fn stream_group(
        &self,
        plan: &CollectPlan,
        index: usize,
        sink: &Sink,
    ) -> Result<CollectStats, DatasourceError> {
        stream::stream_group(self, plan, index, sink).await
    }

    async fn usage(
        &self,
        scope: &ClusterScope,
        workload: &crate::workload::WorkloadKey,
        container: &str,
        resource: UsageResource,
        window: Window,
    ) -> Result<Vec<Series>, DatasourceError> {
        chart::usage(self, scope, workload, (container, resource), window).await
    }

    async fn test(&self, scope: &ClusterScope) -> Result<TestReport, DatasourceError> {
        report::test(self, scope).await
    }
}

#[cfg(test)]
mod fixture;
#[cfg(test)]
mod promql_tests;
#[cfg(test)]
mod tests;
