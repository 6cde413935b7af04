//! The embedded usage store (issue 30): raw samples that agents and Prometheus remote
//! writers send, kept as Prometheus XOR chunks (`crate::xor`), one per series and
//! 2-hour slot aligned to the Unix epoch, in SQLite.
//!
//! The file is meant to take little more than its chunks' bytes (the target is
//! at most 1.1 × what Prometheus's own TSDB takes for the same samples). A chunk is open
//! while it may grow, in a small table rewritten as samples arrive; an hour after its
//! slot's end it is closed: written once, in time order, at the end of the table of
//! closed chunks, whose pages fill up and are never written again (`chunks` tells how
//! the two tables read as one). Rows carry nothing but the id and the chunk, pages are
//! 16 KiB (`schema::PAGE_SIZE`), and pages that prune frees are given back to the file
//! system (`auto_vacuum = INCREMENTAL`).
//! `cargo bench --bench usage_disk` prints the file's bytes per sample beside the
//! chunks'; docs/contracts/usage.md records the figures.
//!
//! It is a second database file, `usage.db` beside `kerf.db`, with its own migrations
//! (`migrations/usage/`), writer and readers, for two reasons. Ingest writes all the
//! time: in the main store it would hold the one writer that audited changes, runs and
//! agents' events wait for. And usage is most of the bytes: backups and restores of the
//! main store stay small and quick. `kerf backup` copies both files (this one with
//! [`UsageStore::backup_to`], or `store::backup_to` on its path offline).
//!
//! Its doors: [`UsageStore::append`] (one write transaction per call: when it returns
//! `Ok`, everything it accepted is committed, and WAL with `synchronous=NORMAL` keeps a
//! commit through a SIGKILL), [`UsageStore::prune`] (batches, each its own
//! transaction), [`UsageStore::reading`] (the reads, as methods of [`UsageRead`] on one
//! reader connection) and [`UsageStore::backup_to`].

mod append;
mod cache;
mod chunks;
#[cfg(test)]
mod fixture;
mod labels;
mod outcome;
mod prune;
mod refused;
mod schema;
mod select;
mod stats;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::Connection;

use super::pool::ReaderPool;
use super::{migrate, open_connection, StoreError, StoreOptions};

pub use append::WriteSeries;
pub use chunks::slot_of;
pub use labels::{Labels, METRIC_NAME};
pub use outcome::{AppendOutcome, Refusal, REFUSED_EXAMPLES};
pub use prune::Pruned;
pub use refused::RefusedSeries;
pub use select::{LabelMatcher, Match, SeriesInfo, SeriesQuery, StoredSeries};
pub use stats::{DiskUsage, UsageStats};

/// The usage store's file name in the data dir.
pub const FILE_NAME: &str = "usage.db";

/// A chunk's slot: 2 hours, as Prometheus's head chunks.
pub const SLOT_MS: i64 = 2 * 3600 * 1000;

/// How far ahead of the hub's clock a sample may be (clocks of writers drift).
pub const FUTURE_TOLERANCE_MS: i64 = 10 * 60 * 1000;

/// How to open and run the usage store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageOptions {
    /// Reader connections.
    pub readers: usize,
    pub busy_timeout_ms: u64,
    /// How long samples are kept: older ones are refused, and pruned.
    pub retention: Duration,
    /// Series one cluster may have; a new series past it is refused.
    pub max_series_per_cluster: usize,
    /// Refused series remembered per cluster (for readiness to name them).
    pub refused_series_kept: usize,
    /// Open chunks kept in memory (see `cache`); more are read back on demand.
    pub open_chunk_cache: usize,
}

impl Default for UsageOptions {
    fn default() -> Self {
        UsageOptions {
            readers: 2,
            busy_timeout_ms: 5000,
            retention: Duration::from_secs(14 * 24 * 3600),
            max_series_per_cluster: 50_000,
            refused_series_kept: 100,
            open_chunk_cache: 200_000,
        }
    }
}

impl UsageOptions {
    /// The retention's start at `now_ms`: older samples are refused, and what
    /// `UsageStore::prune` is given by the retention job.
    pub fn cutoff(&self, now_ms: i64) -> i64 {
        let retention = i64::try_from(self.retention.as_millis()).unwrap_or(i64::MAX);
        now_ms.saturating_sub(retention)
    }
}

/// The writer connection and the chunks it is writing; one lock for both, so the cache
/// always matches what the connection committed.
pub(super) struct Writer {
    conn: Connection,
    open: cache::OpenChunks,
}

/// Handle to the usage store. Cheap to clone.
#[derive(Clone)]
pub struct UsageStore {
    path: PathBuf,
    opts: Arc<UsageOptions>,
    writer: Arc<Mutex<Writer>>,
    readers: Arc<ReaderPool>,
}

/// The reads, on one reader connection (a consistent snapshot while the closure runs).
pub struct UsageRead<'a> {
    conn: &'a Connection,
    opts: &'a UsageOptions,
}

impl UsageStore {
    /// `usage.db` in the directory of the main database `main_db`.
    pub fn path_beside(main_db: &Path) -> PathBuf {
        main_db.with_file_name(FILE_NAME)
    }

    /// Creates the file if needed, backs it up and migrates it, then opens it. `now_ms`
    /// stamps the migrations applied. A file from a newer kerf is refused untouched.
    pub fn open_and_migrate(
        path: &Path,
        opts: &UsageOptions,
        now_ms: i64,
    ) -> Result<UsageStore, StoreError> {
        super::create_database_file(path)?;
        let conn_opts = StoreOptions {
            readers: opts.readers,
            busy_timeout_ms: opts.busy_timeout_ms,
        };
        let mut conn = open_connection(path, &conn_opts, false)?;
        schema::prepare_new_file(&conn)?;
        schema::bound_wal(&conn)?;
        migrate::run_schema(&mut conn, path, now_ms, &schema::USAGE)?;
        migrate::status_of(&conn, &schema::USAGE)?.check_current()?;
        let readers = (0..opts.readers.max(1))
            .map(|_| open_connection(path, &conn_opts, true))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(UsageStore {
            path: path.to_path_buf(),
            opts: Arc::new(opts.clone()),
            writer: Arc::new(Mutex::new(Writer {
                conn,
                open: cache::OpenChunks::new(opts.open_chunk_cache),
            })),
            readers: Arc::new(ReaderPool::new(readers)),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn options(&self) -> &UsageOptions {
        &self.opts
    }

    /// Stores what `cluster` sent, at the hub's `now_ms`, in one write transaction:
    /// when this returns `Ok`, every sample it counts as accepted is committed; when it
    /// returns `Err`, nothing of the call is kept. Samples it refuses are counted in
    /// the outcome by [`Refusal`], never an error: see [`Refusal`] for the rules.
    pub async fn append(
        &self,
        cluster: &str,
        series: Vec<WriteSeries>,
        now_ms: i64,
    ) -> Result<AppendOutcome, StoreError> {
        let cluster = cluster.to_string();
        let opts = self.opts.clone();
        self.write(move |w| append::append(w, &opts, &cluster, series, now_ms))
            .await
    }

    /// Deletes the chunks whose newest sample is older than `older_than_ms`, looking at
    /// `batch` chunks per transaction (so ingest waits for one batch at most), then the
    /// series left without chunks and the refused series last refused before it; then
    /// gives the pages freed back to the file system, a few MiB per transaction.
    pub async fn prune(&self, older_than_ms: i64, batch: usize) -> Result<Pruned, StoreError> {
        let batch = batch.max(1);
        let mut total = Pruned::default();
        let mut after = -1;
        loop {
            let (done, next) = self
                .write(move |w| prune::prune_batch(w, older_than_ms, batch, after))
                .await?;
            total.add(&done);
            match next {
                Some(id) => after = id,
                None => break,
            }
        }
        total.refused_series = self
            .write(move |w| refused::prune(&w.conn, older_than_ms))
            .await?;
        while self.write(|w| prune::give_back(&w.conn)).await? {}
        Ok(total)
    }

    /// Runs `f` on a reader, in one read transaction (a consistent snapshot).
    pub async fn reading<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&UsageRead<'_>) -> Result<T, StoreError> + Send + 'static,
    {
        let permit = self.readers.acquire().await?;
        let opts = self.opts.clone();
        tokio::task::spawn_blocking(move || {
            permit.with(|conn| {
                // One read transaction: a chunk that `close` moves meanwhile is seen once.
                if !conn.is_autocommit() {
                    conn.execute_batch("ROLLBACK")?;
                }
                conn.execute_batch("BEGIN")?;
                let out = f(&UsageRead { conn, opts: &opts });
                conn.execute_batch("COMMIT")?;
                out
            })
        })
        .await
        .map_err(|e| StoreError::Task(e.to_string()))?
    }

    /// Copies the usage store into a new file `to`, consistent while ingest goes on.
    pub async fn backup_to(&self, to: &Path) -> Result<(), StoreError> {
        let (from, to) = (self.path.clone(), to.to_path_buf());
        tokio::task::spawn_blocking(move || super::backup_to(&from, &to))
            .await
            .map_err(|e| StoreError::Task(e.to_string()))?
    }

    /// Folds the WAL back into the main file; called on shutdown (and before measuring
    /// the file).
    pub fn checkpoint(&self) -> Result<(), StoreError> {
        let w = lock_writer(&self.writer)?;
        w.conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        Ok(())
    }

    /// Runs `f` on the writer, off the async runtime.
    async fn write<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Writer) -> Result<T, StoreError> + Send + 'static,
    {
        let writer = self.writer.clone();
        tokio::task::spawn_blocking(move || f(&mut *lock_writer(&writer)?))
            .await
            .map_err(|e| StoreError::Task(e.to_string()))?
    }
}

/// The writer. A closure that panicked while holding it poisoned the lock (its
/// transaction rolled back as it unwound): the connection is sound, so the poison is
/// cleared; the chunk cache may not match what was committed, so it is emptied (it is
/// read back on demand).
fn lock_writer(writer: &Mutex<Writer>) -> Result<MutexGuard<'_, Writer>, StoreError> {
    let w = writer.lock().unwrap_or_else(|poisoned| {
        tracing::warn!("a usage store write panicked; its transaction was rolled back");
        writer.clear_poison();
        let mut w = poisoned.into_inner();
        w.open.clear();
        w
    });
    if !w.conn.is_autocommit() {
        w.conn.execute_batch("ROLLBACK")?;
    }
    Ok(w)
}

#[cfg(test)]
mod append_tests;
#[cfg(test)]
mod chunk_tests;
#[cfg(test)]
mod close_tests;
#[cfg(test)]
mod read_tests;
