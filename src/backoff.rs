//! Backoff: the one growing wait between tries that fail (the accept loop, the agent's
//! event delivery, datasource requests, notification deliveries). Each caller keeps its
//! own numbers; none has jitter. Pure: it says how long, the caller sleeps or books the
//! time.

use std::time::Duration;

/// The exponent stops growing here: past every cap kerf uses, and far from overflow.
const MAX_EXPONENT: u32 = 20;

/// Waits of `initial × factor^(n − 1)` after the `n`th failure in a row, at most `cap`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    initial: Duration,
    factor: u32,
    cap: Duration,
}

impl Backoff {
    pub const fn new(initial: Duration, factor: u32, cap: Duration) -> Backoff {
        Backoff {
            initial,
            factor,
            cap,
        }
    }

    /// Doubling from `initial` up to `cap`.
    pub const fn doubling(initial: Duration, cap: Duration) -> Backoff {
        Backoff::new(initial, 2, cap)
    }

    /// The wait after `failures` failed tries in a row (0 counts as 1: the first wait
    /// is `initial`).
    pub fn delay(&self, failures: u32) -> Duration {
        let exponent = failures.saturating_sub(1).min(MAX_EXPONENT);
        self.initial
            .saturating_mul(self.factor.saturating_pow(exponent))
            .min(self.cap)
    }

    /// A streak of failures that starts now.
    pub fn streak(self) -> Streak {
        Streak {
            backoff: self,
            failures: 0,
        }
    }
}

/// Failures in a row, and so the next wait; a success ends the streak.
#[derive(Debug, Clone)]
pub struct Streak {
    backoff: Backoff,
    failures: u32,
}

impl Streak {
    /// Counts one more failure and returns the wait before the next try.
    pub fn next_delay(&mut self) -> Duration {
        self.failures = self.failures.saturating_add(1);
        self.backoff.delay(self.failures)
    }

    /// A try succeeded: the next failure waits `initial` again.
    pub fn reset(&mut self) {
        self.failures = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn waits_double_from_the_first_up_to_the_cap() {
        let b = Backoff::doubling(ms(5), Duration::from_secs(1));
        let waits: Vec<u128> = (1..=10).map(|n| b.delay(n).as_millis()).collect();
        assert_eq!(waits, [5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000]);
        assert_eq!(b.delay(0), ms(5));
        assert_eq!(b.delay(u32::MAX), Duration::from_secs(1));
    }

    #[test]
    fn a_streak_grows_with_each_failure_and_starts_over_after_a_success() {
        let mut s = Backoff::doubling(Duration::from_secs(1), Duration::from_secs(60)).streak();
        let waits: Vec<u64> = (0..8).map(|_| s.next_delay().as_secs()).collect();
        assert_eq!(waits, [1, 2, 4, 8, 16, 32, 60, 60]);
        s.reset();
        assert_eq!(s.next_delay(), Duration::from_secs(1));
    }

    #[test]
    fn an_uncapped_backoff_stops_growing_instead_of_overflowing() {
        let b = Backoff::new(ms(200), 2, Duration::MAX);
        assert_eq!(b.delay(3), ms(800));
        assert_eq!(b.delay(1_000), ms(200 << MAX_EXPONENT));
        assert_eq!(Backoff::new(ms(1), 3, Duration::MAX).delay(3), ms(9));
    }
}
