//! The fleet ticker: a sibling of the run scheduler, on the same injected clock. Each
//! tick ends pauses whose `resumeAt` has come, re-checks stale datasource checks and
//! re-evaluates every active cluster's readiness (heartbeat freshness). It sleeps until
//! the next tick or the earliest `resumeAt`, and wakes at once when a pause changes.

use std::future::Future;
use std::time::Duration;

use super::{datasource_check, pause, Fleet};
use crate::runs::Runs;
use crate::store::Store;

/// Longest sleep between ticks.
pub const TICK: Duration = Duration::from_secs(15);
/// Shortest sleep between ticks.
const MIN_WAIT: Duration = Duration::from_millis(200);
/// A datasource check older than this is repeated.
pub const DATASOURCE_CHECK_INTERVAL_MS: i64 = 5 * 60 * 1000;

/// What one tick did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct TickReport {
    /// Scopes auto-resumed (cluster names or `*`).
    pub resumed: Vec<String>,
    /// Clusters whose readiness state changed.
    pub readiness_changed: Vec<String>,
}

/// One tick at the clock's now.
pub async fn tick(store: &Store, runs: &Runs) -> TickReport {
    let mut report = TickReport::default();
    match pause::auto_resume(store, runs.clock().now_ms()).await {
        Ok(r) => {
            for scope in &r {
                tracing::info!(%scope, "automation resumed at its resumeAt");
            }
            report.resumed = r;
        }
        Err(e) => tracing::error!(error = %e, "auto-resume failed"),
    }
    let clusters = match store.reading(|r| r.active_cluster_names()).await {
        Ok(c) => c,
        Err(e) => {
            tracing::error!(error = %e, "fleet ticker cannot list clusters");
            return report;
        }
    };
    for cluster in clusters {
        let now = runs.clock().now_ms();
        let name = cluster.clone();
        let checked = store
            .reading(move |r| {
                let cl = r.active_cluster(&name)?;
                Ok(r.readiness_inputs(cl.id, &cl.name)?
                    .datasource
                    .map(|d| d.checked_at))
            })
            .await;
        let due = !matches!(checked, Ok(Some(t)) if now - t < DATASOURCE_CHECK_INTERVAL_MS);
        let result = if due {
            datasource_check::check_datasource(store, runs, &cluster).await
        } else {
            crate::readiness::evaluate(store, now, &cluster).await
        };
        match result {
            Ok((_, true)) => report.readiness_changed.push(cluster),
            Ok(_) => {}
            Err(e) => tracing::warn!(%cluster, error = %e, "readiness evaluation failed"),
        }
    }
    report
}

/// Ticks until `stop` completes.
pub async fn run(store: Store, runs: Runs, fleet: Fleet, stop: impl Future<Output = ()>) {
    tokio::pin!(stop);
    loop {
        tick(&store, &runs).await;
        let next = store.reading(|r| r.next_resume_at()).await.ok().flatten();
        let mut wait = TICK;
        if let Some(at) = next {
            let until = (at - runs.clock().now_ms()).max(0) as u64;
            wait = wait.min(Duration::from_millis(until));
        }
        // Never spin: a resumeAt that could not be processed is retried shortly.
        let wait = wait.max(MIN_WAIT);
        tokio::select! {
            _ = &mut stop => return,
            _ = fleet.wake.notified() => {}
            _ = tokio::time::sleep(wait) => {}
        }
    }
}
