//! A fixed set of read-only connections handed out one request at a time.

use std::sync::Mutex;

use rusqlite::Connection;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::StoreError;

pub(super) struct ReaderPool {
    conns: Mutex<Vec<Connection>>,
    slots: std::sync::Arc<Semaphore>,
}

/// A reserved reader; the connection is taken and returned inside `with`.
pub(super) struct ReaderPermit {
    pool: std::sync::Arc<ReaderPool>,
    _permit: OwnedSemaphorePermit,
}

impl ReaderPool {
    pub(super) fn new(conns: Vec<Connection>) -> Self {
        let n = conns.len();
        ReaderPool {
            conns: Mutex::new(conns),
            slots: std::sync::Arc::new(Semaphore::new(n)),
        }
    }

    pub(super) async fn acquire(self: &std::sync::Arc<Self>) -> Result<ReaderPermit, StoreError> {
        let permit = self
            .slots
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| StoreError::Task("reader pool closed".into()))?;
        Ok(ReaderPermit {
            pool: self.clone(),
            _permit: permit,
        })
    }
}

impl ReaderPermit {
    pub(super) fn with<T>(
        self,
        f: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let conn = {
            let mut conns = self
                .pool
                .conns
                .lock()
                .map_err(|_| StoreError::Task("reader lock poisoned".into()))?;
            conns
                .pop()
                .ok_or_else(|| StoreError::Task("reader pool empty under permit".into()))?
        };
        let out = f(&conn);
        if let Ok(mut conns) = self.pool.conns.lock() {
            conns.push(conn);
        }
        out
    }
}
