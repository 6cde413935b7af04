//! Datasource checks for readiness: test a cluster's datasource (reachable, credentials
//! accepted, the metrics kerf needs present), store the result and re-evaluate the
//! cluster's readiness. The fleet ticker repeats them; a datasource test or relink
//! starts one in the background.

use crate::datasource::Source;
use crate::readiness::evaluate;
use crate::runs::Runs;
use crate::store::readiness::{DatasourceCheckRecord, ReadinessRecord};
use crate::store::{Store, StoreError};

/// How long one datasource check may take before it counts as unreachable.
const CHECK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(20);

/// Tests the cluster's datasource (reachable, metrics present), stores the result and
/// re-evaluates readiness.
pub async fn check_datasource(
    store: &Store,
    runs: &Runs,
    cluster: &str,
) -> Result<(ReadinessRecord, bool), StoreError> {
    let check = match runs.source_for(cluster).await {
        Err(why) => (false, Vec::new(), why.to_string()),
        Ok((source, scope)) => match tokio::time::timeout(CHECK_TIMEOUT, source.test(&scope)).await
        {
            Err(_) => (false, Vec::new(), "the check timed out".to_string()),
            Ok(Err(e)) => (false, Vec::new(), e.to_string()),
            Ok(Ok(report)) => (
                report.reachable && report.authenticated,
                report.missing_metrics,
                report.message,
            ),
        },
    };
    let record = DatasourceCheckRecord {
        checked_at: runs.clock().now_ms(),
        reachable: check.0,
        missing_metrics: check.1,
        message: check.2,
    };
    let name = cluster.to_string();
    store
        .writing(move |tx| {
            let cl = tx.active_cluster(&name)?;
            tx.put_datasource_check(cl.id, &record)
        })
        .await?;
    evaluate(store, runs.clock().now_ms(), cluster).await
}

/// Checks in the background and logs failures (after a datasource test or relink).
pub fn spawn_check(store: Store, runs: Runs, cluster: String) {
    tokio::spawn(async move {
        if let Err(e) = check_datasource(&store, &runs, &cluster).await {
            tracing::warn!(%cluster, error = %e, "datasource check for readiness failed");
        }
    });
}
