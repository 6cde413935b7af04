//! The backtest queue: one backtest runs at a time (each reads the whole window of its
//! workloads), at most [`MAX_WAITING_BACKTESTS`] wait behind it, each for at most
//! [`MAX_BACKTEST_WAIT`]. Past either bound the caller hears at once that it is busy
//! (the API's 429 with `Retry-After`) instead of holding a connection in a queue
//! without end. A caller that goes away leaves its place.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Backtests that may wait behind the running one.
pub const MAX_WAITING_BACKTESTS: usize = 4;

/// How long a backtest may wait for its turn.
pub const MAX_BACKTEST_WAIT: Duration = Duration::from_secs(60);

/// When a refused backtest may try again (about one demo-fleet backtest).
pub const BACKTEST_RETRY_AFTER: Duration = Duration::from_secs(15);

/// Why a backtest did not start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Busy {
    #[error("a backtest runs and {0} wait behind it, the most that may; try again later")]
    QueueFull(usize),
    #[error("no backtest turn came within {0} seconds; try again later")]
    WaitedTooLong(u64),
}

impl Busy {
    /// The stable name of the reason (`details.reason` in the API).
    pub fn reason(&self) -> &'static str {
        match self {
            Busy::QueueFull(_) => "queue_full",
            Busy::WaitedTooLong(_) => "waited_too_long",
        }
    }
}

/// The queue; clones share it.
#[derive(Debug, Clone)]
pub struct BacktestQueue {
    /// The running backtest and those waiting: a place is taken without waiting.
    places: Arc<Semaphore>,
    /// The running backtest.
    turn: Arc<Semaphore>,
    waiting: usize,
    wait: Duration,
}

/// A backtest's turn: holds its place and the turn until dropped.
#[derive(Debug)]
pub struct Turn {
    _place: OwnedSemaphorePermit,
    _turn: OwnedSemaphorePermit,
}

impl Default for BacktestQueue {
    fn default() -> Self {
        BacktestQueue::new(MAX_WAITING_BACKTESTS, MAX_BACKTEST_WAIT)
    }
}

impl BacktestQueue {
    /// One running, `waiting` behind it, each waiting at most `wait`.
    pub fn new(waiting: usize, wait: Duration) -> Self {
        BacktestQueue {
            places: Arc::new(Semaphore::new(waiting + 1)),
            turn: Arc::new(Semaphore::new(1)),
            waiting,
            wait,
        }
    }

    /// Waits for the turn, or says why not: no place is free, or none came in time.
    pub async fn enter(&self) -> Result<Turn, Busy> {
        let place =
            (self.places.clone().try_acquire_owned()).map_err(|_| Busy::QueueFull(self.waiting))?;
        let turn = tokio::time::timeout(self.wait, self.turn.clone().acquire_owned())
            .await
            .map_err(|_| Busy::WaitedTooLong(self.wait.as_secs()))?
            .expect("the backtest queue's semaphore is never closed");
        Ok(Turn {
            _place: place,
            _turn: turn,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn one_runs_a_few_wait_for_a_while_and_the_rest_hear_so_at_once() {
        let q = BacktestQueue::new(2, Duration::from_secs(60));
        let running = q.enter().await.expect("the first runs");
        let waiters: Vec<_> = (0..2)
            .map(|_| {
                let q = q.clone();
                tokio::spawn(async move { q.enter().await })
            })
            .collect();
        tokio::task::yield_now().await;
        assert_eq!(q.enter().await.unwrap_err(), Busy::QueueFull(2));
        // Past the wait, a waiting backtest gives up (paused time runs on).
        tokio::time::advance(Duration::from_secs(61)).await;
        for w in waiters {
            let refused = w.await.expect("task").unwrap_err();
            assert_eq!(refused, Busy::WaitedTooLong(60));
            assert_eq!(refused.reason(), "waited_too_long");
        }
        // The places it held are free again; the turn comes when the runner ends.
        let next = {
            let q = q.clone();
            tokio::spawn(async move { q.enter().await })
        };
        tokio::task::yield_now().await;
        drop(running);
        next.await.expect("task").expect("the next runs");
    }
}
