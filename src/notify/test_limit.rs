//! The channel test button, rate-limited per caller: each test makes the hub call out,
//! so one user may not turn it into a scanner of what answers where.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Mutex;

/// Tests one caller may start per minute.
pub const TESTS_PER_MINUTE: usize = 6;
const MINUTE_MS: i64 = 60_000;

/// When each caller's recent tests started.
#[derive(Debug, Default)]
pub struct TestLimit {
    started: Mutex<BTreeMap<String, VecDeque<i64>>>,
}

impl TestLimit {
    /// Counts a test by `who` at `now`, or says how many seconds until one is allowed.
    pub fn take(&self, who: &str, now: i64) -> Result<(), i64> {
        let mut started = self.started.lock().unwrap_or_else(|p| p.into_inner());
        started.retain(|_, times| times.back().is_some_and(|t| now - t < MINUTE_MS));
        let times = started.entry(who.to_string()).or_default();
        while times.front().is_some_and(|t| now - t >= MINUTE_MS) {
            times.pop_front();
        }
        if times.len() >= TESTS_PER_MINUTE {
            let oldest = times.front().copied().unwrap_or(now);
            return Err(((oldest + MINUTE_MS - now) as f64 / 1000.0).ceil().max(1.0) as i64);
        }
        times.push_back(now);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_caller_gets_six_tests_a_minute_and_others_their_own() {
        let limit = TestLimit::default();
        for i in 0..TESTS_PER_MINUTE as i64 {
            limit.take("ann", 1_000 + i).expect("within the limit");
        }
        assert_eq!(limit.take("ann", 2_000), Err(59));
        limit.take("bob", 2_000).expect("bob has his own");
        limit
            .take("ann", 61_000)
            .expect("the first one left the minute");
    }
}
