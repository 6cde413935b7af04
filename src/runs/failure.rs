//! Why a run that started failed, or a part of it: the datasource it could not open,
//! the collection, the store or the analysis task. Its text is what the run's `errors`
//! show (and what `GET /v1/workloads/{id}/usage` and the datasource check answer when a
//! cluster's datasource cannot be opened), so each variant keeps its wording.

use crate::datasource::DatasourceError;
use crate::store::StoreError;

/// A failure met by a run (or by opening a cluster's datasource).
#[derive(Debug, thiserror::Error)]
pub enum RunFailure {
    #[error("cannot read the cluster's datasource: {0}")]
    ReadDatasource(StoreError),
    #[error(
        "cluster {cluster:?} has no datasource; create one with POST /v1/datasources \
         and point the cluster at it with PUT /v1/clusters/{cluster}/datasource"
    )]
    NoDatasource { cluster: String },
    /// No datasource, and nothing in the embedded usage store yet.
    #[error(
        "cluster {cluster:?} has no datasource and has sent no usage yet: its agent \
         collects usage itself ([collector] enabled, the default without a datasource) and \
         any Prometheus remote writer can send to POST /v1/clusters/{cluster}/write; or \
         point the cluster at a Prometheus with PUT /v1/clusters/{cluster}/datasource"
    )]
    NoUsageYet { cluster: String },
    #[error("datasource {datasource:?} has unreadable settings: {source}")]
    UnreadableSettings {
        datasource: String,
        source: serde_json::Error,
    },
    /// The data dir's secret key (its error kept as text: it names the file).
    #[error("cannot open the datasource secret key: {0}")]
    SecretKey(String),
    #[error("datasource {datasource:?}: {source}")]
    Datasource {
        datasource: String,
        source: DatasourceError,
    },
    /// The plan, or a group, could not be collected.
    #[error("collect: {0}")]
    Collect(DatasourceError),
    #[error("store: {0}")]
    Store(StoreError),
    #[error("analysis task failed: {0}")]
    AnalysisTask(tokio::task::JoinError),
    #[error("backtest task failed: {0}")]
    BacktestTask(tokio::task::JoinError),
}
