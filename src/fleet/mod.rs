//! Fleet configuration: clusters' automation pauses (`pause`), readiness (`readiness`),
//! the agent settings (`agent_settings`), per-workload effective policy for the config feed
//! (`effective`) and the ticker that auto-resumes pauses and re-evaluates readiness on
//! the runs' clock (`ticker`). SQL stays in `store`; HTTP in `api::clusters`,
//! `api::automation` and `api::agent`.

pub mod agent_settings;
pub mod clusters;
pub mod effective;
pub mod feed;
pub mod pause;
pub mod readiness;
pub mod ticker;

use std::sync::Arc;

/// Shared fleet state: wakes the ticker when a pause changes or a cluster needs its first
/// datasource check. Cheap to clone.
#[derive(Clone, Default)]
pub struct Fleet {
    pub wake: Arc<tokio::sync::Notify>,
}

impl Fleet {
    /// Makes the ticker tick now (and recompute its next wake-up).
    pub fn wake(&self) {
        self.wake.notify_one();
    }
}
