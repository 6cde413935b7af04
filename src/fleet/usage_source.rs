//! Where each cluster's usage comes from, as the cluster list and the UI show it: a
//! linked Prometheus-compatible datasource, the hub's embedded usage store (what the
//! cluster's agent collects or a remote writer sends, with how much history it holds),
//! or the demo fleet. It follows the same rule runs follow (`runs::source`), so what a
//! cluster shows is what its next run reads.

use std::collections::BTreeMap;

use serde::Serialize;

use super::clusters::ClusterWithReadiness;
use crate::operation::OpError;
use crate::runs::Runs;
use crate::store::Store;
use crate::timestamp::format_ms;

/// A cluster's source of usage.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterUsageSource {
    /// `datasource` (the linked datasource), `embedded` (the hub's usage store: the
    /// agent's collector or a Prometheus remote writer), `demo` (`kerf demo`'s fleet)
    /// or `none` (no datasource linked, and this hub keeps no usage store).
    pub kind: &'static str,
    /// The linked datasource's name (`kind` datasource).
    pub datasource: Option<String>,
    /// What the usage store holds of the cluster (`kind` embedded).
    pub embedded: Option<EmbeddedHistory>,
}

/// What the embedded usage store holds of one cluster.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct EmbeddedHistory {
    pub series: u64,
    /// The cluster's series limit (`[usage] max_series_per_cluster`).
    pub series_limit: u64,
    pub samples: u64,
    /// The oldest and newest stored sample (RFC 3339); null before the first write.
    pub oldest_sample_at: Option<String>,
    pub newest_sample_at: Option<String>,
    /// Seconds from the oldest to the newest sample.
    pub history_seconds: u64,
    /// Series refused whole (past the series limit, bad labels) that the hub remembers;
    /// the cluster's readiness names them.
    pub refused_series: u64,
}

/// Sets `usage` on each active cluster of `clusters` (retired ones read nothing).
pub async fn attach(
    runs: &Runs,
    store: &Store,
    clusters: &mut [ClusterWithReadiness],
) -> Result<(), OpError> {
    let active: Vec<String> = clusters
        .iter()
        .filter(|c| c.cluster.retired_at.is_none())
        .map(|c| c.cluster.name.clone())
        .collect();
    let sources = sources_of(runs, store, active).await?;
    for c in clusters {
        c.usage = sources.get(&c.cluster.name).cloned();
    }
    Ok(())
}

async fn sources_of(
    runs: &Runs,
    store: &Store,
    names: Vec<String>,
) -> Result<BTreeMap<String, ClusterUsageSource>, OpError> {
    if runs.has_fixed_source() {
        let demo = ClusterUsageSource {
            kind: "demo",
            datasource: None,
            embedded: None,
        };
        return Ok(names.into_iter().map(|n| (n, demo.clone())).collect());
    }
    let linked: Vec<(String, Option<String>)> = store
        .reading(move |r| {
            names
                .into_iter()
                .map(|n| Ok((n.clone(), r.cluster_datasource(&n)?.map(|d| d.name))))
                .collect()
        })
        .await?;
    let mut out = BTreeMap::new();
    for (name, datasource) in linked {
        let source = match (datasource, runs.usage()) {
            (Some(d), _) => ClusterUsageSource {
                kind: "datasource",
                datasource: Some(d),
                embedded: None,
            },
            (None, Some(usage)) => {
                let cluster = name.clone();
                let stats = usage.reading(move |r| r.stats(&cluster)).await?;
                let span = match (stats.oldest_ms, stats.newest_ms) {
                    (Some(a), Some(b)) => (b - a).max(0) as u64 / 1000,
                    _ => 0,
                };
                ClusterUsageSource {
                    kind: "embedded",
                    datasource: None,
                    embedded: Some(EmbeddedHistory {
                        series: stats.series,
                        series_limit: stats.series_limit,
                        samples: stats.samples,
                        oldest_sample_at: stats.oldest_ms.map(format_ms),
                        newest_sample_at: stats.newest_ms.map(format_ms),
                        history_seconds: span,
                        refused_series: stats.refused.len() as u64,
                    }),
                }
            }
            (None, None) => ClusterUsageSource {
                kind: "none",
                datasource: None,
                embedded: None,
            },
        };
        out.insert(name, source);
    }
    Ok(out)
}
