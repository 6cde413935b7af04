//! Supervised background jobs: the long-running work of the hub besides serving HTTP
//! (the run scheduler, the fleet ticker, retention, the notification dispatcher and the
//! weekly digest; later the in-process agent). Each job has a name and a status; all of them
//! stop together, gracefully, on shutdown. A job that panics (or returns before it was
//! asked to stop) is a failure of the whole appliance: the supervisor reports it with the
//! job's name and the server stops with a non-zero exit, so the pod restarts instead of
//! running half alive. Trouble that repeats is logged through a [`LogThrottle`].

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use serde::Serialize;
use tokio::sync::watch;
use tokio::task::{Id, JoinSet};

/// Resolves when the job is asked to stop. Jobs select on it beside their work.
pub struct Stop(Pin<Box<dyn Future<Output = ()> + Send>>);

impl Future for Stop {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.0.as_mut().poll(cx)
    }
}

/// Where a job is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum JobState {
    Running,
    Stopped,
    Failed,
}

/// One job's status, as `/readyz` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct JobStatus {
    pub name: &'static str,
    pub state: JobState,
    /// Why it failed (the panic message), when it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The shared, read-only view of every job's status. Cheap to clone.
#[derive(Clone, Default)]
pub struct Board(Arc<Mutex<BTreeMap<&'static str, JobStatus>>>);

impl Board {
    /// Every job's status, by name.
    pub fn statuses(&self) -> Vec<JobStatus> {
        self.lock().values().cloned().collect()
    }

    fn set(&self, name: &'static str, state: JobState, error: Option<String>) {
        self.lock().insert(name, JobStatus { name, state, error });
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<&'static str, JobStatus>> {
        // A status map cannot be left half-written: recover it after a panic elsewhere.
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A job that ended without being asked to: the supervisor's report.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("background job {job:?} {cause}")]
pub struct JobFailure {
    pub job: &'static str,
    /// `panicked: <message>` or `ended before it was asked to stop`.
    pub cause: String,
}

/// The running jobs.
pub struct Jobs {
    set: JoinSet<()>,
    names: BTreeMap<Id, &'static str>,
    stop: watch::Sender<bool>,
    board: Board,
}

impl Jobs {
    /// No jobs yet; statuses go to `board`.
    pub fn new(board: Board) -> Jobs {
        Jobs {
            set: JoinSet::new(),
            names: BTreeMap::new(),
            stop: watch::channel(false).0,
            board,
        }
    }

    /// Starts job `name`: `job` gets the [`Stop`] it must honour and returns its work.
    pub fn spawn<F, Fut>(&mut self, name: &'static str, job: F)
    where
        F: FnOnce(Stop) -> Fut,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let mut rx = self.stop.subscribe();
        let stop = Stop(Box::pin(async move {
            // An error means the sender is gone: the runner itself is gone, so stop too.
            let _ = rx.wait_for(|stopped| *stopped).await;
        }));
        let handle = self.set.spawn(job(stop));
        self.names.insert(handle.id(), name);
        self.board.set(name, JobState::Running, None);
        tracing::debug!(job = %name, "job started");
    }

    /// Waits until some job ends on its own (a panic, or a return before stop) and
    /// reports it. Pending forever while every job runs (and when there are none).
    pub async fn failure(&mut self) -> JobFailure {
        loop {
            match self.set.join_next_with_id().await {
                Some(ended) => {
                    if let Some(failure) = self.ended(ended) {
                        return failure;
                    }
                }
                None => std::future::pending::<()>().await,
            }
        }
    }

    /// Asks every job to stop and waits up to `grace` for them; the rest are aborted.
    /// Returns the failures seen while stopping (panics during shutdown included).
    pub async fn stop(mut self, grace: Duration) -> Vec<JobFailure> {
        let _ = self.stop.send(true);
        let mut failures = Vec::new();
        let deadline = tokio::time::Instant::now() + grace;
        loop {
            match tokio::time::timeout_at(deadline, self.set.join_next_with_id()).await {
                Ok(Some(ended)) => failures.extend(self.ended(ended)),
                Ok(None) => break,
                Err(_) => {
                    for name in self.names.values() {
                        tracing::warn!(job = %name, "job did not stop in time; aborted");
                        self.board.set(name, JobState::Stopped, None);
                    }
                    self.set.abort_all();
                    break;
                }
            }
        }
        failures
    }

    /// Books a job's end; a failure unless stop was asked and it returned.
    fn ended(&mut self, ended: Result<(Id, ()), tokio::task::JoinError>) -> Option<JobFailure> {
        let (id, panic) = match ended {
            Ok((id, ())) => (id, None),
            Err(e) => (e.id(), Some(panic_message(e))),
        };
        let job = self.names.remove(&id).unwrap_or("unknown");
        let stopping = *self.stop.borrow();
        let cause = match (panic, stopping) {
            (Some(message), _) => format!("panicked: {message}"),
            (None, false) => "ended before it was asked to stop".to_string(),
            (None, true) => {
                self.board.set(job, JobState::Stopped, None);
                tracing::debug!(job = %job, "job stopped");
                return None;
            }
        };
        tracing::error!(job = %job, cause = %cause, "background job failed; kerf stops so it can be restarted");
        self.board.set(job, JobState::Failed, Some(cause.clone()));
        Some(JobFailure { job, cause })
    }
}

/// What a task that did not finish says: its panic message, or that it was cancelled.
pub fn panic_message(e: tokio::task::JoinError) -> String {
    if e.is_cancelled() {
        return "was cancelled".into();
    }
    let payload = e.into_panic();
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-text panic payload".into())
}

/// A log line for trouble that repeats (a background job retrying, an accept loop out
/// of descriptors): written at most once per period, saying how often it was held back,
/// so no failure that persists can flood the log.
pub struct LogThrottle {
    every: Duration,
    last: Option<tokio::time::Instant>,
    suppressed: u64,
}

impl LogThrottle {
    pub const fn new(every: Duration) -> Self {
        LogThrottle {
            every,
            last: None,
            suppressed: 0,
        }
    }

    /// `Some(times held back since the last line)` when a line is due now.
    pub fn due(&mut self) -> Option<u64> {
        let now = tokio::time::Instant::now();
        if self.last.is_some_and(|t| now - t < self.every) {
            self.suppressed += 1;
            return None;
        }
        self.last = Some(now);
        Some(std::mem::take(&mut self.suppressed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn until_stopped(stop: Stop) {
        stop.await;
    }

    #[tokio::test]
    async fn jobs_stop_together_and_show_their_status() {
        let board = Board::default();
        let mut jobs = Jobs::new(board.clone());
        jobs.spawn("a", until_stopped);
        jobs.spawn("b", until_stopped);
        let states: Vec<_> = board.statuses().iter().map(|s| (s.name, s.state)).collect();
        assert_eq!(states, [("a", JobState::Running), ("b", JobState::Running)]);
        let failures = jobs.stop(Duration::from_secs(5)).await;
        assert!(failures.is_empty(), "{failures:?}");
        assert!(board
            .statuses()
            .iter()
            .all(|s| s.state == JobState::Stopped));
    }

    #[tokio::test]
    async fn a_panicking_job_is_reported_by_name() {
        let board = Board::default();
        let mut jobs = Jobs::new(board.clone());
        jobs.spawn("quiet", until_stopped);
        jobs.spawn("explode", |_stop| async { panic!("boom") });
        let failure = jobs.failure().await;
        assert_eq!(failure.job, "explode");
        assert_eq!(failure.cause, "panicked: boom");
        let failed = board.statuses().into_iter().find(|s| s.name == "explode");
        assert_eq!(failed.map(|s| s.state), Some(JobState::Failed));
        assert!(jobs.stop(Duration::from_secs(5)).await.is_empty());
    }

    #[tokio::test]
    async fn a_job_that_returns_early_is_a_failure() {
        let mut jobs = Jobs::new(Board::default());
        jobs.spawn("lazy", |_stop| async {});
        let failure = jobs.failure().await;
        assert_eq!(
            (failure.job, failure.cause.as_str()),
            ("lazy", "ended before it was asked to stop")
        );
    }

    #[tokio::test]
    async fn a_job_that_ignores_stop_is_aborted_after_the_grace() {
        let board = Board::default();
        let mut jobs = Jobs::new(board.clone());
        jobs.spawn("stubborn", |_stop| std::future::pending::<()>());
        assert!(jobs.stop(Duration::from_millis(50)).await.is_empty());
        assert_eq!(board.statuses()[0].state, JobState::Stopped);
    }

    #[tokio::test(start_paused = true)]
    async fn a_throttled_line_is_due_once_per_period_and_counts_the_rest() {
        let mut log = LogThrottle::new(Duration::from_secs(60));
        assert_eq!(log.due(), Some(0));
        assert_eq!(log.due(), None);
        assert_eq!(log.due(), None);
        tokio::time::advance(Duration::from_secs(59)).await;
        assert_eq!(log.due(), None);
        tokio::time::advance(Duration::from_secs(1)).await;
        assert_eq!(log.due(), Some(3));
        assert_eq!(log.due(), None);
    }
}
