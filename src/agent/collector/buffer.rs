//! The collected samples on their way to the hub: a bounded buffer of encoded write
//! requests (bounded by samples, `[collector] buffer_max_samples`), the oldest dropped
//! first when full and counted (`kerf_agent_samples_dropped_total{reason="buffer_full"}`),
//! and its delivery: oldest first, each request sent whole and again after any doubt
//! (the hub takes an exact duplicate as done), with backoff (1 s doubling to 60 s) while
//! the hub is away. A request the hub refuses with a 400 will never be taken: it is
//! dropped and counted (`reason="refused"`).
//!
//! Shared like the events outbox: the collection loop pushes, the delivery loop sends,
//! so no collection waits for the hub.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::Notify;

use crate::agent::hub::{Hub, HubError};
use crate::backoff::Backoff;
use crate::jobs::LogThrottle;
use crate::metrics::{CollectorMetrics, DropLabels, OutcomeLabels};

/// One encoded write request.
struct Pending {
    seq: u64,
    body: Bytes,
    samples: usize,
}

struct Inner {
    queue: VecDeque<Pending>,
    samples: usize,
    capacity: usize,
    next_seq: u64,
    full: LogThrottle,
    refused: LogThrottle,
}

/// What one flush did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Flushed {
    /// Everything buffered was sent (or refused for good).
    Empty,
    /// The hub is away; the rest waits.
    Stopped(HubError),
}

/// The shared buffer.
#[derive(Clone)]
pub struct Buffer {
    inner: Arc<Mutex<Inner>>,
    wake: Arc<Notify>,
    metrics: CollectorMetrics,
}

/// True for the refusals a resend cannot change.
fn refused_for_good(e: &HubError) -> bool {
    matches!(
        e,
        HubError::Refused { status: 400, .. } | HubError::InvalidItems(_) | HubError::TooLarge
    )
}

impl Buffer {
    pub fn new(capacity_samples: usize, metrics: CollectorMetrics) -> Buffer {
        Buffer {
            inner: Arc::new(Mutex::new(Inner {
                queue: VecDeque::new(),
                samples: 0,
                capacity: capacity_samples.max(1),
                next_seq: 0,
                full: LogThrottle::new(Duration::from_secs(60)),
                refused: LogThrottle::new(Duration::from_secs(60)),
            })),
            wake: Arc::new(Notify::new()),
            metrics,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn drop_samples(&self, reason: &str, n: usize) {
        let labels = DropLabels {
            reason: reason.into(),
        };
        self.metrics.dropped.get_or_create(&labels).inc_by(n as u64);
    }

    fn count_write(&self, outcome: &str) {
        let labels = OutcomeLabels {
            outcome: outcome.into(),
        };
        self.metrics.writes.get_or_create(&labels).inc();
    }

    /// Buffers one encoded request of `samples` samples, dropping the oldest while the
    /// buffer holds more than its capacity, and wakes the delivery.
    pub fn push(&self, body: Bytes, samples: usize) {
        {
            let mut inner = self.lock();
            let seq = inner.next_seq;
            inner.next_seq += 1;
            inner.queue.push_back(Pending { seq, body, samples });
            inner.samples += samples;
            let mut dropped = 0;
            while inner.samples > inner.capacity {
                let Some(old) = inner.queue.pop_front() else {
                    break;
                };
                inner.samples -= old.samples;
                dropped += old.samples;
            }
            if dropped > 0 {
                self.drop_samples("buffer_full", dropped);
                if let Some(held) = inner.full.due() {
                    tracing::warn!(
                        dropped,
                        held_back = held,
                        capacity = inner.capacity,
                        "collector buffer full; the oldest samples were dropped"
                    );
                }
            }
        }
        self.wake.notify_one();
    }

    /// Samples buffered.
    pub fn samples(&self) -> usize {
        self.lock().samples
    }

    /// Requests buffered.
    #[cfg(test)]
    fn requests(&self) -> usize {
        self.lock().queue.len()
    }

    /// Resolves when something was pushed.
    pub async fn woken(&self) {
        self.wake.notified().await;
    }

    /// Removes request `seq` if it is still buffered (a full buffer may have dropped it
    /// while it was on its way); the samples it held.
    fn settle(&self, seq: u64) -> usize {
        let mut inner = self.lock();
        match inner.queue.iter().position(|p| p.seq == seq) {
            Some(i) => {
                let done = inner.queue.remove(i).map_or(0, |p| p.samples);
                inner.samples -= done;
                done
            }
            None => 0,
        }
    }

    /// Sends everything buffered, oldest first.
    pub async fn flush<H: Hub>(&self, hub: &H) -> Flushed {
        loop {
            let front = self.lock().queue.front().map(|p| (p.seq, p.body.clone()));
            let Some((seq, body)) = front else {
                return Flushed::Empty;
            };
            match hub.write(body).await {
                Ok(()) => {
                    self.count_write("ok");
                    self.settle(seq);
                }
                Err(e) if refused_for_good(&e) => {
                    self.count_write("refused");
                    let n = self.settle(seq);
                    self.drop_samples("refused", n);
                    if let Some(held) = self.lock().refused.due() {
                        tracing::error!(error = %e, samples = n, held_back = held, "the hub refused collected samples; dropped");
                    }
                }
                Err(e) => {
                    self.count_write("retry");
                    return Flushed::Stopped(e);
                }
            }
        }
    }
}

/// The delivery loop: flushes when woken and retries with backoff while the hub is
/// away; the first failure of a streak is logged, not every retry. Never returns.
pub async fn deliver<H: Hub>(buffer: Buffer, hub: Arc<H>) {
    let mut backoff = Backoff::doubling(Duration::from_secs(1), Duration::from_secs(60)).streak();
    let mut failing = false;
    loop {
        match buffer.flush(hub.as_ref()).await {
            Flushed::Empty => {
                if failing {
                    tracing::info!("the hub is back; buffered samples delivered");
                }
                failing = false;
                backoff.reset();
                buffer.woken().await;
            }
            Flushed::Stopped(e) => {
                if !failing {
                    tracing::warn!(error = %e, buffered = buffer.samples(), "collected samples not delivered; retrying with backoff");
                }
                failing = true;
                tokio::time::sleep(backoff.next_delay()).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{AgentEvent, ConfigFeed, Heartbeat, Readiness};

    /// A hub that answers writes from a script and keeps what it took.
    struct Scripted {
        answers: Mutex<VecDeque<Result<(), HubError>>>,
        taken: Mutex<Vec<Bytes>>,
    }

    impl Scripted {
        fn new(answers: Vec<Result<(), HubError>>) -> Scripted {
            Scripted {
                answers: Mutex::new(answers.into()),
                taken: Mutex::new(Vec::new()),
            }
        }
    }

    impl Hub for Scripted {
        async fn config(&self, _: Option<String>) -> Result<ConfigFeed, HubError> {
            Err(HubError::Unreachable("feeds are not scripted".into()))
        }
        async fn recommendations(
            &self,
            _: Option<String>,
            _: Option<String>,
        ) -> Result<crate::agent::FeedPage, HubError> {
            Err(HubError::Unreachable("feeds are not scripted".into()))
        }
        async fn heartbeat(&self, _: &Heartbeat) -> Result<Readiness, HubError> {
            Err(HubError::Unreachable("not scripted".into()))
        }
        async fn send_events(&self, _: &[AgentEvent]) -> Result<(), HubError> {
            Ok(())
        }
        async fn write(&self, body: Bytes) -> Result<(), HubError> {
            let answer = self.answers.lock().unwrap().pop_front().unwrap_or(Ok(()));
            if answer.is_ok() {
                self.taken.lock().unwrap().push(body);
            }
            answer
        }

        async fn report_policies(
            &self,
            _: &crate::wire::cluster_policies::ClusterPolicies,
        ) -> Result<crate::wire::cluster_policies::ClusterPolicyVerdicts, HubError> {
            Ok(Default::default())
        }
    }

    fn count(
        family: &prometheus_client::metrics::family::Family<
            DropLabels,
            prometheus_client::metrics::counter::Counter,
        >,
        reason: &str,
    ) -> u64 {
        family
            .get_or_create(&DropLabels {
                reason: reason.into(),
            })
            .get()
    }

    #[test]
    fn a_full_buffer_drops_the_oldest_requests_and_counts_their_samples() {
        let metrics = CollectorMetrics::default();
        let buffer = Buffer::new(10, metrics.clone());
        for (name, n) in [("a", 4), ("b", 4), ("c", 4)] {
            buffer.push(Bytes::from(name), n);
        }
        // 12 > 10: `a` went.
        assert_eq!((buffer.requests(), buffer.samples()), (2, 8));
        buffer.push(Bytes::from("big"), 9);
        assert_eq!((buffer.requests(), buffer.samples()), (1, 9));
        assert_eq!(count(&metrics.dropped, "buffer_full"), 12);
    }

    #[tokio::test]
    async fn a_hub_away_keeps_the_requests_and_a_retry_resends_the_same_bytes() {
        let metrics = CollectorMetrics::default();
        let buffer = Buffer::new(100, metrics.clone());
        buffer.push(Bytes::from("first"), 3);
        buffer.push(Bytes::from("second"), 3);
        let hub = Scripted::new(vec![
            Ok(()),
            Err(HubError::Unreachable("429 slow down".into())),
            Ok(()),
        ]);
        let stopped = buffer.flush(&hub).await;
        assert!(matches!(
            stopped,
            Flushed::Stopped(HubError::Unreachable(_))
        ));
        assert_eq!(buffer.samples(), 3);
        assert_eq!(buffer.flush(&hub).await, Flushed::Empty);
        let taken = hub.taken.lock().unwrap().clone();
        assert_eq!(taken, [Bytes::from("first"), Bytes::from("second")]);
        let writes = |o: &str| {
            metrics
                .writes
                .get_or_create(&OutcomeLabels { outcome: o.into() })
                .get()
        };
        assert_eq!((writes("ok"), writes("retry")), (2, 1));
    }

    #[tokio::test]
    async fn a_request_refused_with_400_is_dropped_and_counted_and_the_rest_go_on() {
        let metrics = CollectorMetrics::default();
        let buffer = Buffer::new(100, metrics.clone());
        buffer.push(Bytes::from("bad"), 7);
        buffer.push(Bytes::from("good"), 2);
        let refused = HubError::Refused {
            status: 400,
            code: "out_of_order".into(),
            message: "sample too old".into(),
        };
        let hub = Scripted::new(vec![Err(refused), Ok(())]);
        assert_eq!(buffer.flush(&hub).await, Flushed::Empty);
        assert_eq!(*hub.taken.lock().unwrap(), [Bytes::from("good")]);
        assert_eq!(count(&metrics.dropped, "refused"), 7);
        // Any other refusal (a token not yet valid, an unknown cluster) is tried again.
        buffer.push(Bytes::from("later"), 1);
        let forbidden = HubError::Refused {
            status: 403,
            code: "forbidden".into(),
            message: String::new(),
        };
        let hub = Scripted::new(vec![Err(forbidden)]);
        assert!(matches!(buffer.flush(&hub).await, Flushed::Stopped(_)));
        assert_eq!(buffer.samples(), 1);
    }
}
