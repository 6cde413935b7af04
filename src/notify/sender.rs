//! One sender per channel with pending deliveries: sends them oldest first, at most
//! `max_per_minute` a minute, and books every attempt. A failed attempt is retried with
//! exponential backoff (the receiver's `Retry-After` wins when longer) until
//! `max_attempts`; an answer that retrying cannot change (a 404 webhook, a refused
//! recipient) fails at once. Each channel's sender is its own task, so a receiver that
//! is down or hangs never holds another channel back. A channel whose secrets do not
//! open fails its attempts on the same schedule; it never spins.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::message::Message;
use super::transport::{Outcome, Target};
use super::Notifier;
use crate::backoff::Backoff;
use crate::clock::Clock;
use crate::jobs::LogThrottle;
use crate::metrics::{Metrics, NotifyLabels};
use crate::store::notify_deliveries::{Attempt, DeliveryRecord};

/// Longest wait between retries.
pub const MAX_BACKOFF_MS: i64 = 5 * 60 * 1000;
/// Deliveries fetched per look.
const FETCH: usize = 20;
/// How long a sender with nothing due waits before looking again (real time).
const IDLE: Duration = Duration::from_secs(5);
/// At most one log line per this period says a channel cannot be opened.
const UNOPENED_LOG_EVERY: Duration = Duration::from_secs(60);

/// What a sender needs.
#[derive(Clone)]
pub struct Ctx {
    pub clock: Arc<dyn Clock>,
    pub notifier: Notifier,
    pub metrics: Arc<Metrics>,
}

/// Delay before attempt `attempts + 1` after `attempts` failed ones: base × 2^(n−1),
/// at most [`MAX_BACKOFF_MS`].
pub fn backoff_ms(base_ms: u64, attempts: i64) -> i64 {
    let backoff = Backoff::doubling(
        Duration::from_millis(base_ms),
        Duration::from_millis(MAX_BACKOFF_MS as u64),
    );
    backoff
        .delay(attempts.clamp(1, i64::from(u32::MAX)) as u32)
        .as_millis() as i64
}

/// A sliding one-minute window of sends to one channel (real time: it protects the
/// receiver, whatever the hub's clock says).
pub struct RateWindow {
    max: usize,
    sent: VecDeque<Instant>,
}

impl RateWindow {
    pub fn new(max_per_minute: u32) -> RateWindow {
        RateWindow {
            max: max_per_minute.max(1) as usize,
            sent: VecDeque::new(),
        }
    }

    /// Waits until one more send fits in the window, and books it.
    pub async fn admit(&mut self) {
        let minute = Duration::from_secs(60);
        loop {
            let now = Instant::now();
            while self
                .sent
                .front()
                .is_some_and(|t| now.duration_since(*t) >= minute)
            {
                self.sent.pop_front();
            }
            if self.sent.len() < self.max {
                self.sent.push_back(now);
                return;
            }
            if let Some(oldest) = self.sent.front() {
                tokio::time::sleep_until(*oldest + minute).await;
            }
        }
    }
}

/// What one channel's sender keeps between its runs (a sender ends when nothing is
/// pending and starts again with the next delivery): the rate window and the
/// throttled "cannot open" log line.
pub struct Lane {
    rate: tokio::sync::Mutex<RateWindow>,
    unopened_log: std::sync::Mutex<LogThrottle>,
}

impl Lane {
    pub fn new(max_per_minute: u32) -> Lane {
        Lane {
            rate: tokio::sync::Mutex::new(RateWindow::new(max_per_minute)),
            unopened_log: std::sync::Mutex::new(LogThrottle::new(UNOPENED_LOG_EVERY)),
        }
    }

    /// `Some(lines held back)` when the "cannot open" line is due.
    fn unopened_log_due(&self) -> Option<u64> {
        // A poisoned throttle only ever held a timestamp: keep using it.
        self.unopened_log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .due()
    }
}

/// The running senders, one per channel.
#[derive(Default)]
pub struct Senders {
    tasks: HashMap<i64, JoinHandle<()>>,
}

impl Senders {
    /// Starts `make()` for `channel_id` unless its sender is running.
    pub fn ensure<F, Fut>(&mut self, channel_id: i64, make: F)
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = ()> + Send + 'static,
    {
        if self
            .tasks
            .get(&channel_id)
            .is_some_and(|t| !t.is_finished())
        {
            return;
        }
        self.tasks.insert(channel_id, tokio::spawn(make()));
    }

    /// Forgets finished senders. A sender that panicked takes the dispatcher job down
    /// with it, so the supervisor stops the hub instead of leaving a channel silent.
    pub fn reap(&mut self) {
        let done: Vec<i64> = self
            .tasks
            .iter()
            .filter(|(_, t)| t.is_finished())
            .map(|(id, _)| *id)
            .collect();
        for id in done {
            if let Some(task) = self.tasks.remove(&id) {
                if let Some(Err(e)) = finished_result(task) {
                    if e.is_panic() {
                        std::panic::resume_unwind(e.into_panic());
                    }
                }
            }
        }
    }

    /// Stops every sender (an attempt in flight is abandoned and retried after restart).
    pub async fn stop(self) {
        for (_, t) in self.tasks {
            t.abort();
            let _ = t.await;
        }
    }
}

/// The result of a finished task, without awaiting.
fn finished_result(task: JoinHandle<()>) -> Option<Result<(), tokio::task::JoinError>> {
    let waker = std::task::Waker::noop();
    let mut cx = std::task::Context::from_waker(waker);
    let mut task = task;
    match std::pin::Pin::new(&mut task).poll(&mut cx) {
        std::task::Poll::Ready(r) => Some(r),
        std::task::Poll::Pending => None,
    }
}

/// Sends channel `channel_id`'s due deliveries until none is pending. A channel that
/// cannot be opened (its sealed secret does not open: `secret.key` replaced, the record
/// changed outside kerf) fails each due delivery's attempt on the usual retry schedule,
/// and says so in the log at most once per [`UNOPENED_LOG_EVERY`].
pub async fn run(ctx: Ctx, channel_id: i64, lane: Arc<Lane>) {
    loop {
        let now = ctx.clock.now_ms();
        let due = match ctx
            .notifier
            .store
            .reading(move |r| r.due_deliveries(channel_id, now, FETCH))
            .await
        {
            Ok(d) => d,
            Err(e) => {
                tracing::error!(channel = channel_id, error = %e, "cannot read due notifications");
                return;
            }
        };
        if due.is_empty() {
            let next = match ctx.notifier.store.reading(|r| r.pending_channels()).await {
                Ok(p) => p
                    .into_iter()
                    .find(|(c, _)| *c == channel_id)
                    .map(|(_, at)| at),
                Err(_) => None,
            };
            let Some(at) = next else { return };
            super::wait_until(ctx.clock.as_ref(), Some(at), &ctx.notifier.wake, IDLE).await;
            continue;
        }
        let target = match ctx.notifier.target(channel_id).await {
            Ok(Some(t)) => t,
            Ok(None) => return,
            Err(e) => {
                if let Some(suppressed) = lane.unopened_log_due() {
                    tracing::error!(
                        channel = channel_id, error = %e, pending = due.len(), suppressed,
                        "cannot open the notification channel; its notifications fail until it is fixed"
                    );
                }
                let kind = channel_kind(&ctx, channel_id).await;
                let out = Outcome::failed(format!("the channel cannot be opened: {e}"), false);
                for d in due {
                    if book(&ctx, &kind, &d, out.clone()).await.is_none() {
                        return;
                    }
                }
                continue;
            }
        };
        for d in due {
            lane.rate.lock().await.admit().await;
            attempt(&ctx, &target, d).await;
        }
    }
}

/// The channel's type as stored (for the metric's label), when it can be read.
async fn channel_kind(ctx: &Ctx, channel_id: i64) -> String {
    match ctx
        .notifier
        .store
        .reading(move |r| r.channel(channel_id, &None))
        .await
    {
        Ok(Some(rec)) => rec.kind,
        _ => "unknown".into(),
    }
}

async fn attempt(ctx: &Ctx, target: &Target, d: DeliveryRecord) {
    let message: Message = match serde_json::from_str(&d.message_json) {
        Ok(m) => m,
        Err(e) => {
            let a = Attempt {
                delivered: false,
                status: None,
                error: Some(format!("stored message unreadable: {e}")),
                retry_at: None,
            };
            let now = ctx.clock.now_ms();
            let _ = ctx
                .notifier
                .store
                .writing(move |tx| tx.record_attempt(&d.id, &a, now))
                .await;
            return;
        }
    };
    let now = ctx.clock.now_ms();
    let out = ctx
        .notifier
        .transport
        .send(target, &message, &d.id, now / 1000)
        .await;
    let error = out.error.clone();
    let Some((attempts, outcome)) = book(ctx, target.kind.as_str(), &d, out).await else {
        return;
    };
    match outcome {
        "delivered" => {
            tracing::info!(channel = target.id, delivery = %d.id, kind = %d.kind, attempts, "notification delivered")
        }
        _ => tracing::warn!(
            channel = target.id, delivery = %d.id, attempts, outcome,
            error = error.as_deref().unwrap_or(""), "notification not delivered"
        ),
    }
}

/// Books attempt `d.attempts + 1` as `out` says (a retry at the backoff, or the final
/// failure at `max_attempts`), counts it in the metrics; returns the attempt number and
/// outcome, or `None` when the store refused the record.
async fn book(
    ctx: &Ctx,
    channel_type: &str,
    d: &DeliveryRecord,
    out: Outcome,
) -> Option<(i64, &'static str)> {
    let s = &ctx.notifier.settings;
    let attempts = d.attempts + 1;
    let retry_at =
        (!out.delivered && !out.permanent && attempts < i64::from(s.max_attempts)).then(|| {
            let wait = backoff_ms(s.retry_base_ms, attempts).max(out.retry_after_ms.unwrap_or(0));
            ctx.clock.now_ms() + wait
        });
    let outcome = match (out.delivered, retry_at) {
        (true, _) => "delivered",
        (false, Some(_)) => "retry",
        (false, None) => "failed",
    };
    ctx.metrics
        .notifications_sent
        .get_or_create(&NotifyLabels {
            channel_type: channel_type.into(),
            outcome: outcome.into(),
        })
        .inc();
    let a = Attempt {
        delivered: out.delivered,
        status: out.status,
        error: out.error,
        retry_at,
    };
    let (id, now) = (d.id.clone(), ctx.clock.now_ms());
    match ctx
        .notifier
        .store
        .writing(move |tx| tx.record_attempt(&id, &a, now))
        .await
    {
        Ok(()) => Some((attempts, outcome)),
        Err(e) => {
            tracing::error!(delivery = %d.id, error = %e, "cannot record a notification attempt");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_from_the_base_up_to_five_minutes() {
        let b: Vec<i64> = (1..=12).map(|n| backoff_ms(1000, n)).collect();
        assert_eq!(&b[..5], [1000, 2000, 4000, 8000, 16000]);
        assert_eq!(b[11], MAX_BACKOFF_MS);
    }

    #[tokio::test(start_paused = true)]
    async fn the_rate_window_holds_the_next_send_for_the_rest_of_the_minute() {
        let mut w = RateWindow::new(2);
        let t0 = Instant::now();
        w.admit().await;
        w.admit().await;
        assert_eq!(t0.elapsed(), Duration::ZERO);
        w.admit().await;
        assert_eq!(t0.elapsed(), Duration::from_secs(60));
    }
}
