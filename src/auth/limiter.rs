//! Failed-login limits, in a sliding window, checked and counted in one step: an attempt
//! is admitted only with room for it ([`LoginLimiter::begin`] reserves the room before
//! the password work and the outcome turns it into a failure or frees it), so no number
//! of concurrent guesses gets more password checks than the limit.
//!
//! - An account is locked only for the address that failed it (`max_per_pair`): a
//!   guesser elsewhere cannot lock its owner out.
//! - An address is locked across accounts (`max_per_address`).
//! - An account guessed at from many addresses (`slow_after` failures in the window) is
//!   slowed, never locked: one attempt per `slow_every_ms`, except from addresses that
//!   signed in to it before.
//!
//! Locks are handed back to be persisted ([`NewLock`]) and restored at start, so a
//! restart does not lift them. Time comes from a `Clock`.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use crate::clock::Clock;

/// Most keys remembered per map; beyond this the stalest keys are dropped first.
const MAX_KEYS: usize = 100_000;
/// Addresses remembered per account as having signed in to it.
const MAX_KNOWN: usize = 16;
/// How long a successful sign-in makes an address known to the account.
const KNOWN_FOR_MS: i64 = 30 * 24 * 3600 * 1000;

/// The limits.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub window_ms: i64,
    /// Failures of one account from one address.
    pub max_per_pair: usize,
    /// Failures from one address, all accounts.
    pub max_per_address: usize,
    /// Failures of one account, all addresses, before it is slowed.
    pub slow_after: usize,
    /// Milliseconds between two attempts on a slowed account.
    pub slow_every_ms: i64,
}

/// Which limit refused a login, and for how long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Locked {
    pub scope: LockScope,
    pub retry_after_secs: u64,
}

/// What refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockScope {
    /// This account, from this address.
    Account,
    /// This address, for every account.
    Address,
    /// This account is slowed (guessed at from many addresses).
    Slowed,
}

/// A lock to keep across restarts: `account` is empty for an address lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewLock {
    pub account: String,
    pub address: IpAddr,
    pub until_ms: i64,
}

#[derive(Default)]
struct Key {
    failures: VecDeque<i64>,
    /// Attempts admitted whose password check has not finished.
    pending: usize,
}

#[derive(Default)]
struct Account {
    failures: VecDeque<i64>,
    next_slot: i64,
    /// Addresses that signed in to this account, with when.
    known: Vec<(IpAddr, i64)>,
}

#[derive(Default)]
struct State {
    pairs: HashMap<(String, IpAddr), Key>,
    addresses: HashMap<IpAddr, Key>,
    accounts: HashMap<String, Account>,
}

/// The limiter; share it through `AppState`.
pub struct LoginLimiter {
    limits: Limits,
    clock: Arc<dyn Clock>,
    state: Mutex<State>,
}

/// An admitted attempt. Report its outcome with [`Attempt::failed`] or
/// [`Attempt::succeeded`]; dropped without one, its room is freed uncounted.
pub struct Attempt<'a> {
    limiter: &'a LoginLimiter,
    account: String,
    addr: IpAddr,
    open: bool,
}

impl LoginLimiter {
    pub fn new(limits: Limits, clock: Arc<dyn Clock>) -> Self {
        LoginLimiter {
            limits,
            clock,
            state: Mutex::new(State::default()),
        }
    }

    /// Admits an attempt on `account` from `addr` and reserves its room, or says which
    /// limit refuses it. Call before any password work.
    pub fn begin(&self, account: &str, addr: IpAddr) -> Result<Attempt<'_>, Locked> {
        let now = self.clock.now_ms();
        let account = account.to_lowercase();
        let l = self.limits;
        let mut s = self.lock();
        let State {
            pairs,
            addresses,
            accounts,
        } = &mut *s;
        let refuse = |scope, wait_ms: i64| Locked {
            scope,
            retry_after_secs: ((wait_ms.max(1) + 999) / 1000) as u64,
        };
        if let Some(wait) = addresses
            .get_mut(&addr)
            .and_then(|k| k.full_for(now, &l, l.max_per_address))
        {
            return Err(refuse(LockScope::Address, wait));
        }
        let pair = (account.clone(), addr);
        if let Some(wait) = pairs
            .get_mut(&pair)
            .and_then(|k| k.full_for(now, &l, l.max_per_pair))
        {
            return Err(refuse(LockScope::Account, wait));
        }
        if let Some(a) = accounts.get_mut(&account) {
            prune(&mut a.failures, now, l.window_ms);
            a.known.retain(|(_, at)| *at > now - KNOWN_FOR_MS);
            let known = a.known.iter().any(|(k, _)| *k == addr);
            if a.failures.len() >= l.slow_after && !known {
                if now < a.next_slot {
                    return Err(refuse(LockScope::Slowed, a.next_slot - now));
                }
                a.next_slot = now + l.slow_every_ms;
            }
        }
        entry(addresses, addr, now, l.window_ms).pending += 1;
        entry(pairs, pair, now, l.window_ms).pending += 1;
        Ok(Attempt {
            limiter: self,
            account,
            addr,
            open: true,
        })
    }

    /// Re-applies locks kept from before a restart (expired ones are ignored).
    pub fn restore(&self, locks: &[NewLock]) {
        let now = self.clock.now_ms();
        let l = self.limits;
        let mut s = self.lock();
        for lock in locks.iter().filter(|k| k.until_ms > now) {
            // `max` failures that leave the window exactly when the lock ends.
            let at = lock.until_ms - l.window_ms;
            let (key, max) = if lock.account.is_empty() {
                (
                    entry(&mut s.addresses, lock.address, now, l.window_ms),
                    l.max_per_address,
                )
            } else {
                let pair = (lock.account.clone(), lock.address);
                (entry(&mut s.pairs, pair, now, l.window_ms), l.max_per_pair)
            };
            key.failures.clear();
            key.failures.extend(std::iter::repeat_n(at, max));
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // The maps stay consistent whatever panicked while they were held.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Attempt<'_> {
    /// Counts the attempt as a failure; returns the locks it started (to persist).
    pub fn failed(mut self) -> Vec<NewLock> {
        self.open = false;
        let now = self.limiter.clock.now_ms();
        let l = self.limiter.limits;
        let mut s = self.limiter.lock();
        let mut locks = Vec::new();
        let pair = (self.account.clone(), self.addr);
        if let Some(until) = record(s.pairs.get_mut(&pair), now, &l, l.max_per_pair) {
            locks.push(NewLock {
                account: self.account.clone(),
                address: self.addr,
                until_ms: until,
            });
        }
        if let Some(until) = record(s.addresses.get_mut(&self.addr), now, &l, l.max_per_address) {
            locks.push(NewLock {
                account: String::new(),
                address: self.addr,
                until_ms: until,
            });
        }
        if s.accounts.len() >= MAX_KEYS && !s.accounts.contains_key(&self.account) {
            s.accounts.retain(|_, a| {
                prune(&mut a.failures, now, l.window_ms);
                !a.failures.is_empty() || !a.known.is_empty()
            });
        }
        let a = s.accounts.entry(self.account.clone()).or_default();
        prune(&mut a.failures, now, l.window_ms);
        a.failures.push_back(now);
        locks
    }

    /// A successful sign-in: frees the room, clears this address's failures on the
    /// account and remembers the address as known to it.
    pub fn succeeded(mut self) {
        self.open = false;
        let now = self.limiter.clock.now_ms();
        let mut s = self.limiter.lock();
        s.pairs.remove(&(self.account.clone(), self.addr));
        if let Some(k) = s.addresses.get_mut(&self.addr) {
            k.pending = k.pending.saturating_sub(1);
        }
        let a = s.accounts.entry(self.account.clone()).or_default();
        a.known.retain(|(k, _)| *k != self.addr);
        a.known.push((self.addr, now));
        if a.known.len() > MAX_KNOWN {
            a.known.remove(0);
        }
    }
}

impl Drop for Attempt<'_> {
    fn drop(&mut self) {
        if !self.open {
            return;
        }
        let mut s = self.limiter.lock();
        if let Some(k) = s.pairs.get_mut(&(self.account.clone(), self.addr)) {
            k.pending = k.pending.saturating_sub(1);
        }
        if let Some(k) = s.addresses.get_mut(&self.addr) {
            k.pending = k.pending.saturating_sub(1);
        }
    }
}

impl Key {
    /// Milliseconds until this key has room again, when it has none now (attempts in
    /// flight count as failures until they finish).
    fn full_for(&mut self, now: i64, l: &Limits, max: usize) -> Option<i64> {
        prune(&mut self.failures, now, l.window_ms);
        if self.failures.len() + self.pending < max {
            return None;
        }
        if self.failures.len() < max {
            return Some(1000); // room frees as soon as a check in flight ends
        }
        let oldest_blocking = self.failures[self.failures.len() - max];
        Some(oldest_blocking + l.window_ms - now)
    }
}

/// Turns a reservation into a failure; `Some(until)` when that makes the key locked.
fn record(key: Option<&mut Key>, now: i64, l: &Limits, max: usize) -> Option<i64> {
    let key = key?;
    key.pending = key.pending.saturating_sub(1);
    prune(&mut key.failures, now, l.window_ms);
    key.failures.push_back(now);
    let n = key.failures.len();
    (n >= max).then(|| key.failures[n - max] + l.window_ms)
}

fn prune(q: &mut VecDeque<i64>, now: i64, window_ms: i64) {
    while q.front().is_some_and(|t| *t <= now - window_ms) {
        q.pop_front();
    }
}

/// The key's entry, dropping keys with nothing left in the window when the map is full.
fn entry<K: std::hash::Hash + Eq>(
    map: &mut HashMap<K, Key>,
    key: K,
    now: i64,
    window_ms: i64,
) -> &mut Key {
    if map.len() >= MAX_KEYS && !map.contains_key(&key) {
        map.retain(|_, k| {
            prune(&mut k.failures, now, window_ms);
            !k.failures.is_empty() || k.pending > 0
        });
    }
    map.entry(key).or_default()
}

#[cfg(test)]
#[path = "limiter_tests.rs"]
mod tests;
