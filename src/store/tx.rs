//! The store's unit of work, for the domain modules above it: [`Store::reading`] hands a
//! [`Read`] (one reader connection), [`Store::writing`] a [`Tx`] (one write transaction,
//! committed when the closure returns `Ok`, rolled back otherwise) and
//! [`Store::write_audited`] a `Tx` whose change is recorded as one `config_changed` row
//! in the same transaction. The queries are methods of `Read` (reads) and `Tx` (writes;
//! a `Tx` reads too), each in the file of its table. The domain decides what belongs
//! together; SQL, connections and transactions stay in the store, and no rusqlite type
//! leaves it.

use std::ops::Deref;

use rusqlite::{Connection, Transaction};

use super::*;
use crate::events::config_change::{AuditContext, Change};

/// Reads inside one connection (a consistent snapshot while the closure runs).
pub struct Read<'a>(pub(in crate::store) &'a Connection);

/// Reads and writes inside one transaction.
pub struct Tx<'a> {
    pub(in crate::store) tx: &'a Transaction<'a>,
    read: Read<'a>,
}

impl<'a> Deref for Tx<'a> {
    type Target = Read<'a>;

    fn deref(&self) -> &Read<'a> {
        &self.read
    }
}

impl Store {
    /// Runs `f` on a reader.
    pub async fn reading<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Read<'_>) -> Result<T, StoreError> + Send + 'static,
    {
        self.read(move |c| f(&Read(c))).await
    }

    /// Runs `f` in one write transaction: all of it lands, or none.
    pub async fn writing<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Tx<'_>) -> Result<T, StoreError> + Send + 'static,
    {
        self.write(move |c| {
            let tx = c.transaction()?;
            let out = f(&Tx::new(&tx))?;
            tx.commit()?;
            Ok(out)
        })
        .await
    }

    /// [`Store::writing`] without a runtime (commands, and tests and benchmarks that set
    /// a database up): one write transaction, all of it or none.
    pub fn writing_blocking<T>(
        &self,
        f: impl FnOnce(&Tx<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.write_blocking(|c| {
            let tx = c.transaction()?;
            let out = f(&Tx::new(&tx))?;
            tx.commit()?;
            Ok(out)
        })
    }

    /// Runs `f` in one transaction and records the change it returns (made by `ctx` at
    /// `now`), then commits. When `f` or the audit insert fails, nothing of either is
    /// kept. The way every audited change is written.
    pub async fn write_audited<T, F>(
        &self,
        ctx: AuditContext,
        now: i64,
        f: F,
    ) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Tx<'_>) -> Result<(T, Change), StoreError> + Send + 'static,
    {
        self.write(move |c| config_audit::in_transaction(c, &ctx, now, |tx| f(&Tx::new(tx))))
            .await
    }
}

impl<'a> Tx<'a> {
    /// The unit of work of `tx` (the doors above, and tests inside the store).
    pub(in crate::store) fn new(tx: &'a Transaction<'a>) -> Tx<'a> {
        Tx { tx, read: Read(tx) }
    }

    /// Records `change`, made by `ctx` at `now`, in this transaction.
    pub fn record_change(
        &self,
        ctx: &AuditContext,
        now: i64,
        change: &Change,
    ) -> Result<(), StoreError> {
        config_audit::record(self.tx, ctx, now, change).map(|_| ())
    }
}
