//! The usage store's retention job: every hour (and once at start) it deletes the
//! chunks whose newest sample is older than `[usage] retention`, a batch per short
//! write so remote writes interleave with it.

use std::future::Future;
use std::time::Duration;

use crate::runs::Runs;
use crate::store::UsageStore;

/// Longest wait between two prunes.
const EVERY: Duration = Duration::from_secs(3600);
/// Chunks deleted per write.
const BATCH: usize = 2000;

/// Prunes until `stop` resolves (`runs` lends the hub's clock).
pub async fn run(usage: UsageStore, runs: Runs, stop: impl Future<Output = ()>) {
    tokio::pin!(stop);
    loop {
        let cutoff = usage.options().cutoff(runs.clock().now_ms());
        match usage.prune(cutoff, BATCH).await {
            Ok(p) if p.chunks == 0 && p.series == 0 => {}
            Ok(p) => tracing::info!(
                chunks = p.chunks,
                samples = p.samples,
                series = p.series,
                "pruned usage past its retention"
            ),
            Err(e) => tracing::error!(error = %e, "pruning usage failed"),
        }
        tokio::select! {
            _ = &mut stop => return,
            _ = tokio::time::sleep(EVERY) => {}
        }
    }
}
