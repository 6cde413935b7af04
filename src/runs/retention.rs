//! The retention job: prunes recommendation and run history older than the recommender
//! settings' `retentionDays`, always keeping each workload's latest recommendation and
//! each cluster's latest run. It prunes after every run and at least hourly, so a
//! shortened retention takes effect without waiting for the next run.

use std::future::Future;
use std::time::Duration;

use super::Runs;
use crate::store::Store;

/// Longest wait between two prunes.
const EVERY: Duration = Duration::from_secs(3600);

/// Deletes history older than `cutoff_ms`; logs what it did.
pub async fn prune(store: &Store, cutoff_ms: i64) {
    match store.prune_history(cutoff_ms).await {
        Ok((0, 0)) => {}
        Ok((recs, runs)) => tracing::info!(recommendations = recs, runs, "pruned history"),
        Err(e) => tracing::error!(error = %e, "pruning history failed"),
    }
}

/// Prunes until `stop` completes: at start, after every run, and hourly.
pub async fn run(runs: Runs, store: Store, stop: impl Future<Output = ()>) {
    tokio::pin!(stop);
    loop {
        match runs.recommender().await {
            Ok(settings) => prune(&store, runs.clock().now_ms() - settings.retention_ms()).await,
            Err(e) => tracing::error!(error = %e, "retention cannot read the settings"),
        }
        tokio::select! {
            _ = &mut stop => return,
            _ = runs.finished().notified() => {}
            _ = tokio::time::sleep(EVERY) => {}
        }
    }
}
