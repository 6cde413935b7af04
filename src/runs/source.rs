//! Which datasource a cluster's runs read. Each cluster points at one datasource; a
//! cluster without one fails its run with a message that says how to fix it, and never
//! stops the other clusters. `kerf demo` gives every cluster the built-in demo fleet.

use crate::datasource::{ClusterScope, Datasource};
use crate::store::Store;

/// The datasource and scope of `cluster`, or why there is none. `fixed` (the demo's
/// fleet) answers for every cluster when set.
pub async fn resolve(
    _store: &Store,
    fixed: Option<&Datasource>,
    cluster: &str,
) -> Result<(Datasource, ClusterScope), String> {
    let scope = ClusterScope {
        cluster: cluster.to_string(),
        selector_label: None,
        selector_value: None,
    };
    if let Some(source) = fixed {
        return Ok((source.clone(), scope));
    }
    // SEAM(datasource-link): look the cluster's datasource up in the store once clusters
    // can point at one (`/v1/datasources`), building its scope from the link.
    Err(format!(
        "cluster {cluster:?} has no datasource; create one with POST /v1/datasources and link the cluster to it"
    ))
}
