//! Which datasource a cluster's runs read: the one the cluster points at
//! (`PUT /v1/clusters/{cluster}/datasource`), with its sealed secrets opened by the data
//! dir's key. A cluster without one fails its run with a message that says how to fix
//! it, and never stops the other clusters. When the hub keeps an embedded usage store
//! (`kerf serve`), a cluster without a datasource reads what its agent's collector or a
//! remote writer sent there, once anything was sent. `kerf demo` gives every cluster the
//! demo fleet.

use std::path::Path;
use std::sync::Arc;

use super::RunFailure;
use crate::datasource::{scope_for, ClusterScope, Datasource, DatasourceSettings};
use crate::outbound::Policy;
use crate::secret::SecretKey;
use crate::store::{Store, UsageStore};

/// Where a cluster's usage comes from besides a linked datasource, and where a linked
/// one may connect.
#[derive(Clone, Copy)]
pub struct Fallbacks<'a> {
    /// `[outbound] datasource_allow`: what a linked datasource may reach.
    pub outbound: &'a Arc<Policy>,
    /// Answers for every cluster when set (the demo's fleet).
    pub fixed: Option<&'a Datasource>,
    /// The hub's embedded usage store, read for a cluster that links no datasource.
    pub usage: Option<&'a UsageStore>,
}

/// The datasource and scope of `cluster`, or why there is none. Messages never contain
/// a secret.
pub async fn resolve(
    store: &Store,
    data_dir: &Path,
    fallbacks: Fallbacks<'_>,
    cluster: &str,
) -> Result<(Datasource, ClusterScope), RunFailure> {
    let whole_cluster = || ClusterScope {
        cluster: cluster.to_string(),
        selector_label: None,
        selector_value: None,
    };
    if let Some(source) = fallbacks.fixed {
        return Ok((source.clone(), whole_cluster()));
    }
    let name = cluster.to_string();
    let record = store
        .reading(move |r| r.cluster_datasource(&name))
        .await
        .map_err(RunFailure::ReadDatasource)?;
    let Some(record) = record else {
        return match fallbacks.usage {
            Some(usage) => embedded(usage, cluster)
                .await
                .map(|source| (source, whole_cluster())),
            None => Err(RunFailure::NoDatasource {
                cluster: cluster.to_string(),
            }),
        };
    };
    let settings: DatasourceSettings =
        serde_json::from_str(&record.settings_json).map_err(|source| {
            RunFailure::UnreadableSettings {
                datasource: record.name.clone(),
                source,
            }
        })?;
    let key =
        SecretKey::load_or_create(data_dir).map_err(|e| RunFailure::SecretKey(e.to_string()))?;
    let source = Datasource::from_sealed(
        &settings,
        &record.settings_json,
        &record.secrets_sealed,
        &key,
        fallbacks.outbound,
    )
    .map_err(|source| RunFailure::Datasource {
        datasource: record.name.clone(),
        source,
    })?;
    Ok((source, scope_for(&settings, cluster)))
}

/// The embedded usage store as `cluster`'s datasource, once it holds a series of it.
async fn embedded(usage: &UsageStore, cluster: &str) -> Result<Datasource, RunFailure> {
    let name = cluster.to_string();
    let stats = usage
        .reading(move |r| r.stats(&name))
        .await
        .map_err(RunFailure::ReadDatasource)?;
    if stats.series == 0 {
        return Err(RunFailure::NoUsageYet {
            cluster: cluster.to_string(),
        });
    }
    Ok(Datasource::embedded(usage.clone(), cluster))
}
