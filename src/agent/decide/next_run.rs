//! The health watch of batch work (pure). A CronJob's change is live from its next run,
//! which may be a night away while `watchDuration` is minutes: a watch on the wall clock
//! would pass having judged nothing. So its window starts with the first pod made since
//! the change: until one is, the watch waits (at most [`MAX_WAIT_MS`] after the change,
//! after which it passes, there being nothing to judge), and it then lasts
//! `watchDuration` from that pod's creation.

use crate::agent::state::Watch;
use crate::cluster::{Pod, UpdateStrategy, Workload};
use crate::policy::validate::parse_duration;

/// How long a watch waits for the next run: longer than a weekly schedule.
pub const MAX_WAIT_MS: i64 = 8 * 86_400_000;

/// Sets the end of `w`, the watch of a change to batch work `live` whose pods are
/// `pods`, at `now_ms` (nothing for other workloads, or a rollback's watch).
pub fn follow(w: &mut Watch, live: Option<&Workload>, pods: &[&Pod], now_ms: i64) {
    let batch = live.is_some_and(|l| l.strategy == UpdateStrategy::NextRun);
    let Some(duration) = parse_duration(&w.thresholds.watch_duration) else {
        return;
    };
    if !batch || w.undoing {
        return;
    }
    let duration = duration as i64 * 1000;
    let first_run = pods
        .iter()
        .filter_map(|p| p.created_ms)
        .filter(|c| *c >= w.started_ms)
        .min();
    let until = match first_run {
        Some(created) => created + duration,
        None => now_ms + duration,
    };
    w.until_ms = until.min(w.started_ms + MAX_WAIT_MS);
}
