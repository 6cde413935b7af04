//! The scheduler job: starts a run of every active cluster whenever the recommender
//! schedule fires. A cluster that is still running is skipped for that tick, never
//! queued; a failing cluster never holds the others back (each run is its own task).
//! Settings changes wake it at once. History retention is its own job (`retention`).

use std::future::Future;
use std::time::Duration;

use super::schedule::{next_due, parse};
use super::{RunError, Runs, Trigger};
use crate::store::Store;

/// Starts one run per active cluster; returns the run ids started.
pub async fn tick(runs: &Runs, store: &Store) -> Vec<String> {
    let clusters = match store.reading(|r| r.active_cluster_names()).await {
        Ok(c) => c,
        Err(e) => {
            tracing::error!(error = %e, "scheduler cannot list clusters");
            return Vec::new();
        }
    };
    let mut started = Vec::new();
    for cluster in clusters {
        match runs.start(&cluster, Trigger::Scheduled).await {
            Ok((run, _task)) => started.push(run.id),
            Err(RunError::AlreadyRunning { run_id, .. }) => {
                tracing::info!(%cluster, %run_id, "still running; skipping this tick")
            }
            Err(e) => tracing::error!(%cluster, error = %e, "cannot start scheduled run"),
        }
    }
    started
}

/// Runs the schedule until `stop` completes.
pub async fn run(runs: Runs, store: Store, stop: impl Future<Output = ()>) {
    tokio::pin!(stop);
    let now = runs.clock().now_ms();
    match store.writing(move |tx| tx.fail_interrupted_runs(now)).await {
        Ok(0) => {}
        Ok(n) => tracing::warn!(runs = n, "marked runs interrupted by a restart as failed"),
        Err(e) => tracing::error!(error = %e, "cannot mark interrupted runs"),
    }
    let mut after = runs.clock().now_ms();
    loop {
        let settings = match runs.recommender().await {
            Ok(s) => s,
            Err(e) => {
                tracing::error!(error = %e, "scheduler uses the default settings");
                Default::default()
            }
        };
        let due = parse(&settings.schedule)
            .ok()
            .and_then(|cron| next_due(&cron, after));
        let wait = due.map(|d| (d - runs.clock().now_ms()).max(0) as u64);
        // A schedule that never fires again is re-checked daily (and on every settings change).
        let sleep = tokio::time::sleep(Duration::from_millis(wait.unwrap_or(86_400_000)));
        tokio::select! {
            _ = &mut stop => return,
            _ = runs.wake().notified() => {
                after = runs.clock().now_ms();
                continue;
            }
            _ = sleep => {}
        }
        let Some(due) = due else { continue };
        // A late wake-up skips the missed firings instead of running them back to back.
        after = runs.clock().now_ms().max(due);
        tick(&runs, &store).await;
    }
}
