//! Which datasource a cluster's runs read: the one the cluster points at
//! (`PUT /v1/clusters/{cluster}/datasource`), with its sealed secrets opened by the data
//! dir's key. A cluster without one fails its run with a message that says how to fix
//! it, and never stops the other clusters. `kerf demo` gives every cluster the demo fleet.

use std::path::Path;

use super::RunFailure;
use crate::datasource::{scope_for, ClusterScope, Datasource, DatasourceSettings};
use crate::secret::SecretKey;
use crate::store::Store;

/// The datasource and scope of `cluster`, or why there is none. `fixed` (the demo's
/// fleet) answers for every cluster when set. Messages never contain a secret.
pub async fn resolve(
    store: &Store,
    data_dir: &Path,
    fixed: Option<&Datasource>,
    cluster: &str,
) -> Result<(Datasource, ClusterScope), RunFailure> {
    if let Some(source) = fixed {
        let scope = ClusterScope {
            cluster: cluster.to_string(),
            selector_label: None,
            selector_value: None,
        };
        return Ok((source.clone(), scope));
    }
    let name = cluster.to_string();
    let record = store
        .reading(move |r| r.cluster_datasource(&name))
        .await
        .map_err(RunFailure::ReadDatasource)?
        .ok_or_else(|| RunFailure::NoDatasource {
            cluster: cluster.to_string(),
        })?;
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
    )
    .map_err(|source| RunFailure::Datasource {
        datasource: record.name.clone(),
        source,
    })?;
    Ok((source, scope_for(&settings, cluster)))
}
