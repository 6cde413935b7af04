//! The agent's long poll: a task that holds one request open on the hub's config feed
//! while the feeds are still at the version the agent holds, and wakes the agent's loop
//! as soon as they move, so a change (an approval, a pause, a new recommendation) reaches
//! the agent in about a second instead of at its next pass. The pass then reads what
//! changed as it always does; the long poll only says when.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{watch, Notify};

use super::hub::Hub;

/// How long one request is held (the hub holds at most 20 s).
pub const HOLD: Duration = Duration::from_secs(20);
/// After a failure, or an answer that came back at once without a change (a hub that
/// does not hold requests), the next request waits this long.
const PAUSE: Duration = Duration::from_secs(5);
/// After waking the loop, how long to wait for the pass to take the new version before
/// asking again with the version held.
const TAKE_WITHIN: Duration = Duration::from_secs(30);

/// Runs until dropped (aborted): asks the hub to answer when its feeds move past the
/// version in `held` (the agent's loop publishes it after each pass), and notifies `moved`
/// when they did.
pub async fn run<H: Hub>(
    hub: Arc<H>,
    mut held: watch::Receiver<Option<String>>,
    moved: Arc<Notify>,
) {
    loop {
        let Some(version) = held.borrow_and_update().clone() else {
            // Nothing read yet (or a hub without versions): wait for a pass to read one.
            if held.changed().await.is_err() {
                return;
            }
            continue;
        };
        let asked = tokio::time::Instant::now();
        match hub.feeds_after(&version, HOLD).await {
            Ok(Some(now)) if now != version => {
                moved.notify_one();
                // The pass reads the feeds and publishes the new version.
                let _ = tokio::time::timeout(TAKE_WITHIN, held.changed()).await;
            }
            Ok(_) => {
                if asked.elapsed() < Duration::from_secs(1) {
                    tokio::time::sleep(PAUSE).await;
                }
            }
            Err(e) => {
                tracing::debug!(error = %e, "long poll failed; the passes go on");
                tokio::time::sleep(PAUSE).await;
            }
        }
    }
}
