//! The WAL is folded back into the database by a thread of its own, not by the writer.
//! SQLite's automatic checkpoint runs inside the commit that crosses its threshold, so
//! that commit (and every write queued behind it) waited for the checkpoint's copies and
//! both of its fsyncs: under event ingest a fifth of the writer's waits. Here a passive
//! checkpoint runs every [`INTERVAL`] on a second connection, beside the writer; it
//! never blocks a write and never waits for one. The writer keeps its automatic
//! checkpoint, which now finds most of the work done (`cargo bench --bench ingest`:
//! 30,500–32,100 events/s at p99 47–51 ms before, 31,900–34,200 at p99 43–46 ms after).

use std::path::PathBuf;
use std::sync::mpsc::{channel, RecvTimeoutError, Sender};
use std::time::Duration;

use super::{open_connection, StoreOptions};

/// How often the WAL is checkpointed.
const INTERVAL: Duration = Duration::from_millis(500);

/// WAL pages at which the writer checkpoints by itself anyway (~16 MiB). Under a steady
/// stream of writes the thread never finds the WAL wholly copied, so the log could never
/// start over and would grow; this checkpoint lets it, and by then the thread has copied
/// most of its pages, so it costs the writer little more than its two fsyncs.
pub(in crate::store) const WRITER_CHECKPOINT_PAGES: i64 = 4_000;

/// Stops the thread when the last handle of the store is dropped, and waits for it: its
/// connection is closed by the time the store is gone (a restore that removes the files
/// it refused must not see them come back).
pub(in crate::store) struct Checkpointer {
    stop: Option<Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Checkpointer {
    /// Starts checkpointing `path`. Its connection is opened here, before the thread
    /// runs: a thread opening it later could create the file anew after its store was
    /// dropped and the files removed. A connection that cannot be opened leaves the
    /// writer's safety net as the only checkpoint (and says so).
    pub(in crate::store) fn start(path: PathBuf, opts: StoreOptions) -> Checkpointer {
        let (stop, stopped) = channel::<()>();
        let conn = match open_connection(&path, &opts, false) {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(error = %e, "the WAL checkpointer cannot open the database; the writer checkpoints by itself");
                return Checkpointer {
                    stop: None,
                    thread: None,
                };
            }
        };
        let spawned = std::thread::Builder::new()
            .name("kerf-checkpoint".into())
            .spawn(move || {
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(INTERVAL) {
                    let done = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
                    if let Err(e) = done {
                        tracing::warn!(error = %e, "a WAL checkpoint failed; the next one retries");
                    }
                }
            });
        let thread = match spawned {
            Ok(t) => Some(t),
            Err(e) => {
                tracing::warn!(error = %e, "cannot start the WAL checkpointer; the writer checkpoints by itself");
                None
            }
        };
        Checkpointer {
            stop: Some(stop),
            thread,
        }
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        // Disconnecting ends the thread's wait at once; at most one checkpoint is left.
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use crate::store::{Store, StoreOptions};

    #[test]
    fn the_thread_copies_committed_pages_into_the_database_file_without_the_writer() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("kerf.db");
        let opts = StoreOptions {
            readers: 1,
            busy_timeout_ms: 1000,
        };
        let store = Store::open_and_migrate(&path, &opts, 0).expect("store");
        store.checkpoint().expect("start from an empty WAL");
        let before = std::fs::metadata(&path).expect("db").len();
        // ~2 MiB of settings: far below the writer's own checkpoint, so only the
        // thread can move these pages from the WAL into the database file.
        store
            .writing_blocking(|tx| {
                for i in 0..500 {
                    tx.tx.execute(
                        "INSERT INTO settings (key, value, updated_at) VALUES (?1, ?2, 0)",
                        rusqlite::params![format!("k{i}"), "x".repeat(4000)],
                    )?;
                }
                Ok(())
            })
            .expect("write");
        let wal = path.with_extension("db-wal");
        assert!(std::fs::metadata(&wal).expect("wal").len() > 1_000_000);
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::fs::metadata(&path).expect("db").len() < before + 1_000_000 {
            assert!(Instant::now() < deadline, "the WAL was never checkpointed");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}
