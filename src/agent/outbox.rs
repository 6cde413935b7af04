//! Delivery of events to the hub: a bounded buffer (`eventBufferSize`), oldest dropped
//! first and counted in `kerf_agent_events_dropped_total{reason="buffer_full"}`; whole
//! batches sent and retried with backoff while the hub is away; a 400 `invalid_item`
//! drops exactly the listed items (`reason="invalid"`) and sends the rest; a 413 splits
//! the batch. Exactly-once storage is the hub's (it ignores an id it stored), so a batch
//! is simply sent again after any doubt.
//!
//! The buffer is shared: the decision loop pushes, a delivery task flushes, so no
//! decision (and, later, no rollback) ever waits for the hub.

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex};

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use tokio::sync::Notify;

use super::hub::{Hub, HubError};
use crate::metrics::DropLabels;
use crate::wire::AgentEvent;

/// Most events in one request (the hub accepts up to 1,000).
pub const BATCH: usize = 500;

#[derive(Default)]
struct Inner {
    queue: VecDeque<AgentEvent>,
    /// The ids in `queue`: a push and a settle look an id up, not scan the buffer (an
    /// agent starting on a large cluster buffers thousands of events at once).
    ids: HashSet<String>,
    capacity: usize,
    /// Ids the hub stored (or refused for good) or the buffer dropped since the loop
    /// last asked: the loop forgets them in the workloads' records.
    settled: Vec<String>,
}

/// The shared buffer.
#[derive(Clone)]
pub struct Outbox {
    inner: Arc<Mutex<Inner>>,
    wake: Arc<Notify>,
    dropped: Family<DropLabels, Counter>,
}

/// What one flush did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Flushed {
    /// Everything buffered was delivered (or dropped as invalid).
    Empty { delivered: usize },
    /// The hub is away or refused; the rest waits.
    Stopped(HubError),
}

impl Outbox {
    pub fn new(capacity: usize, dropped: Family<DropLabels, Counter>) -> Outbox {
        Outbox {
            inner: Arc::new(Mutex::new(Inner {
                capacity: capacity.max(1),
                ..Inner::default()
            })),
            wake: Arc::new(Notify::new()),
            dropped,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Resizes the buffer (the hub's `eventBufferSize`), dropping the oldest if needed.
    pub fn set_capacity(&self, capacity: usize) {
        let mut inner = self.lock();
        inner.capacity = capacity.max(1);
        self.trim(&mut inner);
    }

    fn trim(&self, inner: &mut Inner) {
        while inner.queue.len() > inner.capacity {
            if let Some(old) = inner.queue.pop_front() {
                inner.ids.remove(&old.id);
                tracing::warn!(id = %old.id, reason = %old.reason.as_str(), "event buffer full; oldest event dropped");
                self.count_drop("buffer_full");
                inner.settled.push(old.id);
            }
        }
    }

    fn count_drop(&self, reason: &str) {
        self.dropped
            .get_or_create(&DropLabels {
                reason: reason.into(),
            })
            .inc();
    }

    /// Buffers `event` (unless an event with its id is buffered already) and wakes
    /// the delivery task.
    pub fn push(&self, event: AgentEvent) {
        {
            let mut inner = self.lock();
            if !inner.ids.insert(event.id.clone()) {
                return;
            }
            inner.queue.push_back(event);
            self.trim(&mut inner);
        }
        self.wake.notify_one();
    }

    pub fn len(&self) -> usize {
        self.lock().queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Ids settled since the last call (delivered, refused as invalid, or dropped).
    pub fn take_settled(&self) -> Vec<String> {
        std::mem::take(&mut self.lock().settled)
    }

    /// Resolves when something was pushed.
    pub async fn woken(&self) {
        self.wake.notified().await;
    }

    /// Removes the events with `ids` (delivered or refused), marking them settled.
    fn settle(&self, ids: &[String]) {
        let mut inner = self.lock();
        let gone: HashSet<&str> = ids.iter().map(String::as_str).collect();
        inner.queue.retain(|e| !gone.contains(e.id.as_str()));
        for id in ids {
            inner.ids.remove(id);
        }
        inner.settled.extend(ids.iter().cloned());
    }

    /// Sends everything buffered, oldest first, in batches.
    pub async fn flush<H: Hub>(&self, hub: &H) -> Flushed {
        let mut size = BATCH;
        let mut delivered = 0;
        loop {
            let batch: Vec<AgentEvent> = self.lock().queue.iter().take(size).cloned().collect();
            if batch.is_empty() {
                return Flushed::Empty { delivered };
            }
            let ids: Vec<String> = batch.iter().map(|e| e.id.clone()).collect();
            match hub.send_events(&batch).await {
                Ok(()) => {
                    delivered += ids.len();
                    self.settle(&ids);
                    size = BATCH;
                }
                Err(HubError::InvalidItems(indexes)) if !indexes.is_empty() => {
                    // The hub lists each problem; an item with several is listed as
                    // often, but dropped (and counted) once.
                    let mut indexes = indexes;
                    indexes.sort_unstable();
                    indexes.dedup();
                    let bad: Vec<String> = indexes
                        .iter()
                        .filter_map(|i| ids.get(*i).cloned())
                        .collect();
                    if bad.is_empty() {
                        // Indexes outside the batch: nothing to drop, so resending would
                        // only be refused again.
                        return Flushed::Stopped(HubError::InvalidItems(indexes));
                    }
                    for id in &bad {
                        tracing::error!(%id, "the hub refused an event as invalid; dropped");
                        self.count_drop("invalid");
                    }
                    self.settle(&bad);
                }
                Err(HubError::TooLarge) if batch.len() > 1 => size = batch.len() / 2,
                Err(HubError::TooLarge) => {
                    tracing::error!(id = %ids[0], "the hub refused an event as too large; dropped");
                    self.count_drop("invalid");
                    self.settle(&ids);
                }
                Err(e) => return Flushed::Stopped(e),
            }
        }
    }
}
