//! Which datasource a cluster's runs read. Each cluster points at one datasource (the
//! link is the datasource work's); a cluster without one fails its run with a message
//! that says how to fix it, and never stops the other clusters.

use crate::analysis::Series;
use crate::datasource::{
    ClusterScope, Collection, DatasourceError, Source, TestReport, UsageResource, Window,
};
use crate::store::Store;

/// Placeholder until clusters can be linked to a datasource: no value exists, so every
/// run resolves to "no datasource".
#[derive(Debug)]
pub enum Unlinked {}

impl Source for Unlinked {
    async fn collect(
        &self,
        _scope: &ClusterScope,
        _window: Window,
    ) -> Result<Collection, DatasourceError> {
        match *self {}
    }

    async fn usage(
        &self,
        _scope: &ClusterScope,
        _workload: (&str, &str, &str),
        _container: &str,
        _resource: UsageResource,
        _window: Window,
    ) -> Result<Vec<Series>, DatasourceError> {
        match *self {}
    }

    async fn test(&self, _scope: &ClusterScope) -> Result<TestReport, DatasourceError> {
        match *self {}
    }
}

/// The datasource type runs use.
pub type ClusterSource = Unlinked;

/// The datasource and scope of `cluster`, or why there is none.
pub async fn resolve(
    _store: &Store,
    cluster: &str,
) -> Result<(ClusterSource, ClusterScope), String> {
    Err(format!(
        "cluster {cluster:?} has no datasource; create one with POST /v1/datasources and link the cluster to it"
    ))
}
