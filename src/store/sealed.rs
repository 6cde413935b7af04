//! Re-sealing stored secrets in place when only their sealed form changes (the values,
//! and so the audit, do not): a compare-and-set on the blob, so a change made through
//! the API meanwhile is never overwritten.

use rusqlite::params;

use super::{StoreError, Tx};

/// The tables that hold sealed secrets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SealedIn {
    Datasources,
    NotificationChannels,
}

fn update_sql(table: SealedIn) -> &'static str {
    match table {
        SealedIn::Datasources => {
            "UPDATE datasources SET secrets_sealed = ?3 WHERE id = ?1 AND secrets_sealed = ?2"
        }
        SealedIn::NotificationChannels => {
            "UPDATE notification_channels SET secrets_sealed = ?3
             WHERE id = ?1 AND secrets_sealed = ?2"
        }
    }
}

impl Tx<'_> {
    /// Applies every (table, id, old, new) re-seal, or fails with `Conflict` (and the
    /// transaction keeps none) when any blob changed meanwhile; returns how many.
    pub fn reseal_all(
        &self,
        changes: &[(SealedIn, i64, Vec<u8>, Vec<u8>)],
    ) -> Result<usize, StoreError> {
        for (table, id, old, new) in changes {
            if self.tx.execute(update_sql(*table), params![id, old, new])? != 1 {
                return Err(StoreError::Conflict(format!(
                    "{table:?} {id} changed while its secret was being re-sealed"
                )));
            }
        }
        Ok(changes.len())
    }

    /// Replaces record `id`'s sealed secrets with `new` if they are still `old`; true
    /// when replaced.
    pub fn reseal(
        &self,
        table: SealedIn,
        id: i64,
        old: &[u8],
        new: &[u8],
    ) -> Result<bool, StoreError> {
        Ok(self.tx.execute(update_sql(table), params![id, old, new])? == 1)
    }
}
