//! Re-sealing stored secrets in place when only their sealed form changes (the values,
//! and so the audit, do not): a compare-and-set on the blob, so a change made through
//! the API meanwhile is never overwritten.

use rusqlite::params;

use super::{Store, StoreError};

/// The tables that hold sealed secrets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SealedIn {
    Datasources,
    NotificationChannels,
}

impl Store {
    /// Replaces record `id`'s sealed secrets with `new` if they are still `old`; true
    /// when replaced.
    pub async fn reseal(
        &self,
        table: SealedIn,
        id: i64,
        old: Vec<u8>,
        new: Vec<u8>,
    ) -> Result<bool, StoreError> {
        let sql = match table {
            SealedIn::Datasources => {
                "UPDATE datasources SET secrets_sealed = ?3 WHERE id = ?1 AND secrets_sealed = ?2"
            }
            SealedIn::NotificationChannels => {
                "UPDATE notification_channels SET secrets_sealed = ?3
                 WHERE id = ?1 AND secrets_sealed = ?2"
            }
        };
        self.write(move |c| Ok(c.execute(sql, params![id, old, new])? == 1))
            .await
    }
}
