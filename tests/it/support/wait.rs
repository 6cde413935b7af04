//! Waiting without sleeps: `eventually` polls a check until it yields, with a deadline
//! and a failure that says what was awaited and the last value seen. A check yields
//! `Some(v)`, `Ok(v)` or `true`; `Err(seen)` says what it saw instead. `within` is the
//! same loop for a caller that judges the timeout itself (a process that must exit, or
//! be killed); the `_sync` twins serve the few callers outside async code.

use std::fmt::{Debug, Display};
use std::time::{Duration, Instant};

/// What a check answers: done with a value, or what it saw instead.
pub trait Yield {
    type Value;
    type Seen: Debug;
    fn done(self) -> Result<Self::Value, Self::Seen>;
}

impl<T, S: Debug> Yield for Result<T, S> {
    type Value = T;
    type Seen = S;
    fn done(self) -> Result<T, S> {
        self
    }
}

impl<T> Yield for Option<T> {
    type Value = T;
    type Seen = &'static str;
    fn done(self) -> Result<T, &'static str> {
        self.ok_or("None")
    }
}

impl Yield for bool {
    type Value = ();
    type Seen = bool;
    fn done(self) -> Result<(), bool> {
        if self {
            Ok(())
        } else {
            Err(false)
        }
    }
}

/// Polls `check` until it yields; after `limit`, panics naming `what` and the last
/// value it saw instead.
pub async fn eventually<Y: Yield>(
    what: &str,
    limit: Duration,
    check: impl AsyncFnMut() -> Y,
) -> Y::Value {
    within(what, limit, check)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// As [`eventually`], polling at a steady `every` instead of backing off: for a check
/// that acts as it looks (an agent's pass) or must notice the moment something happens.
pub async fn eventually_every<Y: Yield>(
    what: &str,
    limit: Duration,
    every: Duration,
    check: impl AsyncFnMut() -> Y,
) -> Y::Value {
    within_every(what, limit, every, check)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// As [`eventually`], for a wait inside a spawned task: a plain closure that returns a
/// future, whose `Send` the compiler can prove (an async closure's future borrows the
/// closure, for every lifetime, and a spawned task cannot show that is `Send`).
pub async fn eventually_sent<Y: Yield, F: std::future::Future<Output = Y>>(
    what: &str,
    limit: Duration,
    mut check: impl FnMut() -> F,
) -> Y::Value {
    let mut polls = Polls::new(what, limit);
    loop {
        match check().await.done() {
            Ok(v) => return v,
            Err(seen) => match polls.next(seen) {
                Ok(pause) => tokio::time::sleep(pause).await,
                Err(e) => panic!("{e}"),
            },
        }
    }
}

/// As [`eventually`], but a timeout is returned, not a panic.
pub async fn within<Y: Yield>(
    what: &str,
    limit: Duration,
    check: impl AsyncFnMut() -> Y,
) -> Result<Y::Value, TimedOut> {
    poll(Polls::new(what, limit), check).await
}

/// As [`eventually_every`], but a timeout is returned, not a panic.
pub async fn within_every<Y: Yield>(
    what: &str,
    limit: Duration,
    every: Duration,
    check: impl AsyncFnMut() -> Y,
) -> Result<Y::Value, TimedOut> {
    let mut polls = Polls::new(what, limit);
    polls.steady(every);
    poll(polls, check).await
}

/// The one loop: check, else pause (or time out), again.
async fn poll<Y: Yield>(
    mut polls: Polls<'_>,
    mut check: impl AsyncFnMut() -> Y,
) -> Result<Y::Value, TimedOut> {
    loop {
        match check().await.done() {
            Ok(v) => return Ok(v),
            Err(seen) => match polls.next(seen)? {
                // A steady zero: poll as often as the runtime lets other tasks run.
                Duration::ZERO => tokio::task::yield_now().await,
                pause => tokio::time::sleep(pause).await,
            },
        }
    }
}

/// [`eventually`] for a blocking check.
pub fn eventually_sync<Y: Yield>(
    what: &str,
    limit: Duration,
    check: impl FnMut() -> Y,
) -> Y::Value {
    within_sync(what, limit, check).unwrap_or_else(|e| panic!("{e}"))
}

/// [`within`] for a blocking check.
pub fn within_sync<Y: Yield>(
    what: &str,
    limit: Duration,
    mut check: impl FnMut() -> Y,
) -> Result<Y::Value, TimedOut> {
    let mut polls = Polls::new(what, limit);
    loop {
        match check().done() {
            Ok(v) => return Ok(v),
            Err(seen) => std::thread::sleep(polls.next(seen)?),
        }
    }
}

/// A wait that ran out: what was awaited, for how long, and the last value seen.
#[derive(Debug)]
pub struct TimedOut(String);

impl Display for TimedOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The deadline and pace the loops share.
struct Polls<'a> {
    what: &'a str,
    limit: Duration,
    deadline: Instant,
    pause: Duration,
    max: Duration,
}

impl<'a> Polls<'a> {
    fn new(what: &'a str, limit: Duration) -> Self {
        Polls {
            what,
            limit,
            deadline: Instant::now() + limit,
            pause: Duration::from_millis(10),
            max: Duration::from_millis(200),
        }
    }

    fn steady(&mut self, every: Duration) {
        (self.pause, self.max) = (every, every);
    }

    /// The pause before the next poll (10 ms, doubling to 200 ms: quick answers are
    /// seen quickly, slow ones do not load the machine), or the timeout.
    fn next(&mut self, seen: impl Debug) -> Result<Duration, TimedOut> {
        if Instant::now() >= self.deadline {
            return Err(TimedOut(format!(
                "timed out after {:?} waiting for {}; last seen: {seen:?}",
                self.limit, self.what
            )));
        }
        let pause = self.pause;
        self.pause = (self.pause * 2).min(self.max);
        Ok(pause)
    }
}

/// Seconds, for limits.
pub const fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}
