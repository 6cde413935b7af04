//! Failed-login limits: per account and per client address, in a sliding window. Once a
//! key has `max` failures inside the window, logins for it are refused (before any
//! password work) until the oldest failure leaves the window. Time comes from a `Clock`
//! so tests can move it without waiting.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use crate::clock::Clock;

/// Most keys remembered per map; beyond this the stalest keys are dropped first.
const MAX_KEYS: usize = 100_000;

/// The limits.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub window_ms: i64,
    pub max_per_account: usize,
    pub max_per_address: usize,
}

/// Which limit refused a login, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Locked {
    pub scope: LockScope,
    pub retry_after_secs: u64,
}

/// What was locked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockScope {
    Account,
    Address,
}

/// The limiter; share it through `AppState`.
pub struct LoginLimiter {
    limits: Limits,
    clock: Arc<dyn Clock>,
    state: Mutex<Failures>,
}

#[derive(Default)]
struct Failures {
    accounts: HashMap<String, VecDeque<i64>>,
    addresses: HashMap<IpAddr, VecDeque<i64>>,
}

impl LoginLimiter {
    pub fn new(limits: Limits, clock: Arc<dyn Clock>) -> Self {
        LoginLimiter {
            limits,
            clock,
            state: Mutex::new(Failures::default()),
        }
    }

    /// Refuses when either key is locked. Call before verifying a password.
    pub fn check(&self, account: &str, addr: IpAddr) -> Result<(), Locked> {
        let now = self.clock.now_ms();
        let mut s = self.lock();
        let account = account.to_lowercase();
        if let Some(wait) = locked_for(
            s.addresses.get_mut(&addr),
            now,
            &self.limits,
            self.limits.max_per_address,
        ) {
            return Err(Locked {
                scope: LockScope::Address,
                retry_after_secs: wait,
            });
        }
        if let Some(wait) = locked_for(
            s.accounts.get_mut(&account),
            now,
            &self.limits,
            self.limits.max_per_account,
        ) {
            return Err(Locked {
                scope: LockScope::Account,
                retry_after_secs: wait,
            });
        }
        Ok(())
    }

    /// Counts a failed login against both keys.
    pub fn failed(&self, account: &str, addr: IpAddr) {
        let now = self.clock.now_ms();
        let mut s = self.lock();
        let Failures {
            accounts,
            addresses,
        } = &mut *s;
        push(accounts, account.to_lowercase(), now, &self.limits);
        push(addresses, addr, now, &self.limits);
    }

    /// A successful login clears the account's failures (not the address's).
    pub fn succeeded(&self, account: &str) {
        self.lock().accounts.remove(&account.to_lowercase());
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Failures> {
        // A panic while holding this lock cannot leave the maps inconsistent.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn prune(q: &mut VecDeque<i64>, now: i64, window_ms: i64) {
    while q.front().is_some_and(|t| *t <= now - window_ms) {
        q.pop_front();
    }
}

/// Seconds until the key unlocks, when it is locked.
fn locked_for(q: Option<&mut VecDeque<i64>>, now: i64, l: &Limits, max: usize) -> Option<u64> {
    let q = q?;
    prune(q, now, l.window_ms);
    if q.len() < max {
        return None;
    }
    // Unlocks when enough failures leave the window to drop below `max`.
    let oldest_blocking = q[q.len() - max];
    let wait_ms = (oldest_blocking + l.window_ms - now).max(1);
    Some(((wait_ms + 999) / 1000) as u64)
}

fn push<K: std::hash::Hash + Eq>(
    map: &mut HashMap<K, VecDeque<i64>>,
    key: K,
    now: i64,
    l: &Limits,
) {
    if map.len() >= MAX_KEYS && !map.contains_key(&key) {
        map.retain(|_, q| {
            prune(q, now, l.window_ms);
            !q.is_empty()
        });
        if map.len() >= MAX_KEYS {
            return; // every key is active: keep the ones we have rather than grow
        }
    }
    let q = map.entry(key).or_default();
    prune(q, now, l.window_ms);
    q.push_back(now);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;

    fn limiter() -> (Arc<ManualClock>, LoginLimiter) {
        let clock = Arc::new(ManualClock::new(1_000_000));
        let limits = Limits {
            window_ms: 60_000,
            max_per_account: 3,
            max_per_address: 5,
        };
        (clock.clone(), LoginLimiter::new(limits, clock))
    }

    fn ip(n: u8) -> IpAddr {
        IpAddr::from([10, 0, 0, n])
    }

    #[test]
    fn an_account_locks_after_its_failures_and_unlocks_when_the_window_passes() {
        let (clock, l) = limiter();
        for _ in 0..3 {
            assert!(l.check("Ann", ip(1)).is_ok());
            l.failed("Ann", ip(1));
            clock.advance(1_000);
        }
        let locked = l.check("ann", ip(2)).unwrap_err();
        assert_eq!(locked.scope, LockScope::Account);
        assert_eq!(locked.retry_after_secs, 57);
        assert!(
            l.check("bob", ip(2)).is_ok(),
            "other accounts are unaffected"
        );
        clock.advance(57_000);
        assert!(l.check("ann", ip(2)).is_ok(), "recovered after the window");
    }

    #[test]
    fn an_address_locks_across_accounts() {
        let (clock, l) = limiter();
        for i in 0..5 {
            l.failed(&format!("user{i}"), ip(9));
        }
        assert_eq!(
            l.check("fresh", ip(9)).unwrap_err().scope,
            LockScope::Address
        );
        assert!(l.check("fresh", ip(8)).is_ok());
        clock.advance(60_000);
        assert!(l.check("fresh", ip(9)).is_ok());
    }

    #[test]
    fn success_clears_the_account_failures() {
        let (_clock, l) = limiter();
        l.failed("ann", ip(1));
        l.failed("ann", ip(1));
        l.succeeded("ann");
        l.failed("ann", ip(1));
        assert!(l.check("ann", ip(1)).is_ok());
    }
}
