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
        let conn = self
            .pool
            .lock()
            .pop()
            .ok_or_else(|| StoreError::Task("reader pool empty under permit".into()))?;
        // Returned on every exit, a panic in `f` included: a lost reader would leave a
        // permit with no connection behind it.
        let lent = Lent {
            pool: &self.pool,
            conn: Some(conn),
        };
        f(lent.conn.as_ref().expect("lent until dropped"))
    }
}

/// A reader connection out of the pool; back in when dropped.
struct Lent<'a> {
    pool: &'a ReaderPool,
    conn: Option<Connection>,
}

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            self.pool.lock().push(conn);
        }
    }
}

impl ReaderPool {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Connection>> {
        // A list of idle connections cannot be left half-changed.
        self.conns.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use crate::store::{Store, StoreOptions};

    fn store(dir: &std::path::Path) -> Store {
        let opts = StoreOptions {
            readers: 1,
            busy_timeout_ms: 1000,
        };
        Store::open_and_migrate(&dir.join("kerf.db"), &opts, 0).expect("store")
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_panic_in_a_write_leaves_the_writer_usable_and_its_change_undone() {
        let dir = tempfile::tempdir().expect("tempdir");
        let s = store(dir.path());
        let failed: Result<(), _> = s
            .write(|c| {
                let tx = c.transaction()?;
                tx.execute(
                    "INSERT INTO settings (key, value, updated_at) VALUES ('x', '1', 0)",
                    [],
                )?;
                panic!("a bug inside a write closure");
            })
            .await;
        assert!(matches!(failed, Err(crate::store::StoreError::Task(_))));
        for _ in 0..3 {
            let n: i64 = s
                .write(|c| {
                    Ok(
                        c.query_row("SELECT COUNT(*) FROM settings WHERE key = 'x'", [], |r| {
                            r.get(0)
                        })?,
                    )
                })
                .await
                .expect("the writer still writes");
            assert_eq!(n, 0, "the panicking write was rolled back");
        }
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_panic_in_a_read_returns_the_reader_to_the_pool() {
        let dir = tempfile::tempdir().expect("tempdir");
        let s = store(dir.path());
        let failed = s
            .read(|_| -> Result<(), _> { panic!("a bug inside a read closure") })
            .await;
        assert!(failed.is_err());
        for _ in 0..3 {
            let one: i64 = s
                .read(|c| Ok(c.query_row("SELECT 1", [], |r| r.get(0))?))
                .await
                .expect("the only reader still reads");
            assert_eq!(one, 1);
        }
    }
}
