//! The retention job: prunes recommendation and run history older than the recommender
//! settings' `retentionDays` (always keeping each workload's latest recommendation and
//! each cluster's latest run), forgets workloads gone from their cluster for longer than
//! that, and at least a week (they leave the lists and the agents' feeds), and the audit
//! log's rows
//! past `[audit]`'s retention:
//! workload events and configuration changes, each by arrival time. It prunes after
//! every run and at least hourly, so a shortened retention takes effect without
//! waiting. Every delete is a small batch in its own short write, so the writer is
//! never held for long and agents' ingest interleaves with pruning.

use std::future::Future;
use std::time::Duration;

use futures_util::FutureExt;

use super::engine::ABSENT_REASON;
use super::Runs;
use crate::store::{AuditRows, Store, StoreError};

/// Longest wait between two prunes.
const EVERY: Duration = Duration::from_secs(3600);
/// Recommendations deleted per write.
const HISTORY_BATCH: usize = 2000;
/// A workload gone from its cluster is forgotten after the retention, and never sooner
/// than this (`retentionDays: 0` keeps no history, but a workload away for a day is
/// not forgotten).
pub const GONE_AT_LEAST_MS: i64 = 7 * DAY_MS;
/// Gone workloads forgotten per write.
const WORKLOAD_BATCH: usize = 200;
/// Audit rows deleted per write.
pub const AUDIT_BATCH: usize = 100;
const DAY_MS: i64 = 86_400_000;

/// How long the audit log keeps its rows; `None` keeps them forever.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AuditRetention {
    pub events_ms: Option<i64>,
    pub config_changes_ms: Option<i64>,
}

impl AuditRetention {
    /// From days (0 = forever), as `[audit]` gives them.
    pub fn from_days(events: u32, config_changes: u32) -> AuditRetention {
        let ms = |days: u32| (days > 0).then(|| i64::from(days) * DAY_MS);
        AuditRetention {
            events_ms: ms(events),
            config_changes_ms: ms(config_changes),
        }
    }
}

/// Deletes history older than `retention_ms` before `now`, and forgets workloads gone
/// from their cluster for that long (at least [`GONE_AT_LEAST_MS`]); logs what it did.
pub async fn prune(store: &Store, now: i64, retention_ms: i64) {
    let cutoff_ms = now - retention_ms;
    let gone_before = now - retention_ms.max(GONE_AT_LEAST_MS);
    match prune_history(store, cutoff_ms, gone_before).await {
        Ok((0, 0, 0)) => {}
        Ok((recs, runs, workloads)) => {
            tracing::info!(recommendations = recs, runs, workloads, "pruned history")
        }
        Err(e) => tracing::error!(error = %e, "pruning history failed"),
    }
}

/// Deletes recommendations and runs older than `cutoff_ms`, always keeping each
/// workload's latest recommendation and each cluster's latest run, and forgets the
/// workloads no run has seen since before `gone_before`. Returns (recommendations,
/// runs, workloads) deleted.
async fn prune_history(
    store: &Store,
    cutoff_ms: i64,
    gone_before: i64,
) -> Result<(usize, usize, usize), StoreError> {
    // One short write per batch: other writers get the writer between batches.
    let mut recs = 0;
    loop {
        let n = store
            .writing(move |tx| tx.prune_recommendations(cutoff_ms, HISTORY_BATCH))
            .await?;
        recs += n;
        if n < HISTORY_BATCH {
            break;
        }
        tokio::task::yield_now().await;
    }
    let runs = store.writing(move |tx| tx.prune_runs(cutoff_ms)).await?;
    let mut workloads = 0;
    loop {
        let n = store
            .writing(move |tx| tx.forget_gone_workloads(gone_before, ABSENT_REASON, WORKLOAD_BATCH))
            .await?;
        workloads += n;
        if n < WORKLOAD_BATCH {
            break;
        }
        tokio::task::yield_now().await;
    }
    store.writing(|tx| tx.prune_feed_changes()).await?;
    Ok((recs, runs, workloads))
}

/// Deletes the audit rows that arrived before `now` less their retention, a batch at a
/// time, until done or `stop` resolves (checked between batches); returns (events,
/// configuration changes) deleted.
pub async fn prune_audit<S>(
    store: &Store,
    now: i64,
    keep: AuditRetention,
    mut stop: std::pin::Pin<&mut S>,
) -> (usize, usize)
where
    S: Future<Output = ()>,
{
    let mut pruned = [0usize; 2];
    let kinds = [
        (AuditRows::Events, keep.events_ms),
        (AuditRows::ConfigChanges, keep.config_changes_ms),
    ];
    for (i, (rows, keep_ms)) in kinds.into_iter().enumerate() {
        let Some(keep_ms) = keep_ms else { continue };
        loop {
            let cutoff = now - keep_ms;
            let n = match store
                .writing(move |tx| tx.prune_audit_batch(rows, cutoff, AUDIT_BATCH))
                .await
            {
                Ok(n) => n,
                Err(e) => {
                    tracing::error!(error = %e, "pruning the audit log failed");
                    break;
                }
            };
            pruned[i] += n;
            if n < AUDIT_BATCH || stop.as_mut().now_or_never().is_some() {
                break;
            }
            tokio::task::yield_now().await;
        }
    }
    if pruned != [0, 0] {
        tracing::info!(
            events = pruned[0],
            config_changes = pruned[1],
            "pruned the audit log"
        );
    }
    (pruned[0], pruned[1])
}

/// Prunes until `stop` completes: at start, after every run, and hourly.
pub async fn run(runs: Runs, store: Store, audit: AuditRetention, stop: impl Future<Output = ()>) {
    tokio::pin!(stop);
    loop {
        match runs.recommender().await {
            Ok(settings) => prune(&store, runs.clock().now_ms(), settings.retention_ms()).await,
            Err(e) => tracing::error!(error = %e, "retention cannot read the settings"),
        }
        prune_audit(&store, runs.clock().now_ms(), audit, stop.as_mut()).await;
        tokio::select! {
            _ = &mut stop => return,
            _ = runs.finished().notified() => {}
            _ = tokio::time::sleep(EVERY) => {}
        }
    }
}
