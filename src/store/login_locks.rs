//! The `login_locks` table: login locks kept across restarts (the limiter itself lives
//! in memory, in `auth::limiter`).

use rusqlite::params;

use super::{Read, StoreError, Tx};

/// A stored lock: `account` is empty for a lock of the whole address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginLockRecord {
    pub account: String,
    pub address: String,
    pub until_ms: i64,
}

impl Tx<'_> {
    /// Records `locks` (a later end replaces an earlier one) and drops the dead ones.
    pub fn save_login_locks(&self, locks: &[LoginLockRecord], now: i64) -> Result<(), StoreError> {
        self.tx
            .execute("DELETE FROM login_locks WHERE until_ms <= ?1", [now])?;
        for l in locks {
            self.tx.execute(
                "INSERT INTO login_locks (account, address, until_ms) VALUES (?1, ?2, ?3)
                 ON CONFLICT (account, address) DO UPDATE
                 SET until_ms = max(until_ms, excluded.until_ms)",
                params![l.account, l.address, l.until_ms],
            )?;
        }
        Ok(())
    }
}

impl Read<'_> {
    /// The locks still in force at `now`.
    pub fn login_locks(&self, now: i64) -> Result<Vec<LoginLockRecord>, StoreError> {
        let mut stmt = self
            .0
            .prepare("SELECT account, address, until_ms FROM login_locks WHERE until_ms > ?1")?;
        let rows = stmt.query_map([now], |r| {
            Ok(LoginLockRecord {
                account: r.get(0)?,
                address: r.get(1)?,
                until_ms: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
