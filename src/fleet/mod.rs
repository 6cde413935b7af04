//! The fleet's operations, below the API and beside the command line: clusters
//! (`clusters`), automation pauses (`pause`), datasources and their checks
//! (`datasources`, `datasource_check`), policies (`policies`), per-workload overrides,
//! approvals and effective policy (`workloads`, `effective`), the two agent feeds
//! (`feed`, kept and answered by change in `feed_cache`), what agents send (`ingest`; their usage samples: `usage`; the changes they
//! applied or rolled back, folded into each workload's live change: `applied`), where each
//! cluster's usage comes from (`usage_source`) and the ticker job that auto-resumes pauses and
//! re-evaluates readiness (`ticker`), and the fleet the config file declares, applied
//! at start (`declared`). Each operation takes the store, the time, the
//! audit context and a typed input, and returns a typed output or an `OpError`. SQL
//! stays in `store`; HTTP in `api`.

pub mod applied;
pub mod cluster_policies;
pub mod clusters;
pub mod datasource_check;
pub mod datasources;
pub mod declared;
pub mod effective;
pub mod feed;
pub mod feed_cache;
pub mod ingest;
pub mod pause;
pub mod policies;
pub mod ticker;
pub mod usage;
pub mod usage_retention;
pub mod usage_source;
pub mod workloads;

use std::sync::Arc;

/// Shared fleet state: wakes the ticker when a pause changes or a cluster needs its first
/// datasource check, and keeps the agents' feeds as last built (`feed_cache`). Cheap to
/// clone.
#[derive(Clone, Default)]
pub struct Fleet {
    pub wake: Arc<tokio::sync::Notify>,
    pub feeds: Arc<feed_cache::FeedCache>,
}

impl Fleet {
    /// Makes the ticker tick now (and recompute its next wake-up).
    pub fn wake(&self) {
        self.wake.notify_one();
    }
}
