//! The `login_locks` table: login locks kept across restarts (the limiter itself lives
//! in memory, in `auth::limiter`).

use rusqlite::params;

use super::{Store, StoreError};

/// A stored lock: `account` is empty for a lock of the whole address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginLockRecord {
    pub account: String,
    pub address: String,
    pub until_ms: i64,
}

impl Store {
    /// Records `locks` (a later end replaces an earlier one) and drops the dead ones.
    pub async fn save_login_locks(
        &self,
        locks: Vec<LoginLockRecord>,
        now: i64,
    ) -> Result<(), StoreError> {
        self.write(move |c| {
            let tx = c.transaction()?;
            tx.execute("DELETE FROM login_locks WHERE until_ms <= ?1", [now])?;
            for l in &locks {
                tx.execute(
                    "INSERT INTO login_locks (account, address, until_ms) VALUES (?1, ?2, ?3)
                     ON CONFLICT (account, address) DO UPDATE
                     SET until_ms = max(until_ms, excluded.until_ms)",
                    params![l.account, l.address, l.until_ms],
                )?;
            }
            tx.commit()?;
            Ok(())
        })
        .await
    }

    /// The locks still in force at `now`.
    pub async fn login_locks(&self, now: i64) -> Result<Vec<LoginLockRecord>, StoreError> {
        self.read(move |c| {
            let mut stmt = c.prepare(
                "SELECT account, address, until_ms FROM login_locks WHERE until_ms > ?1",
            )?;
            let rows = stmt.query_map([now], |r| {
                Ok(LoginLockRecord {
                    account: r.get(0)?,
                    address: r.get(1)?,
                    until_ms: r.get(2)?,
                })
            })?;
            Ok(rows.collect::<Result<_, _>>()?)
        })
        .await
    }
}
