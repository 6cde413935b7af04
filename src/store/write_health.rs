//! Whether the database can write: the last write that failed for a reason of the
//! storage itself (the disk full, an I/O error, a file system turned read-only), kept
//! until a write changes the database again. `/readyz` reports it as `degraded`, and
//! the API answers such a failure with 503 so agents back off instead of retrying.

use std::sync::Mutex;
use std::time::Instant;

use super::StoreError;

/// Why the storage refuses writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StorageFault {
    /// SQLITE_FULL: the disk (or the file system's quota) is full.
    DiskFull,
    /// SQLITE_READONLY: the file or its file system no longer takes writes.
    ReadOnly,
    /// SQLITE_IOERR: the operating system failed a read or write.
    Io,
}

impl StorageFault {
    /// Its stable name (`details.fault` in the API).
    pub fn as_str(self) -> &'static str {
        match self {
            StorageFault::DiskFull => "disk_full",
            StorageFault::ReadOnly => "read_only",
            StorageFault::Io => "io_error",
        }
    }

    /// For people: what is wrong and what to do.
    pub fn describe(self) -> &'static str {
        match self {
            StorageFault::DiskFull => "the disk is full; free space on the data dir's volume",
            StorageFault::ReadOnly => "the database file or its file system is read-only",
            StorageFault::Io => "the operating system failed a database read or write",
        }
    }
}

impl StoreError {
    /// The storage fault behind this error, if the storage itself failed.
    pub fn storage_fault(&self) -> Option<StorageFault> {
        let StoreError::Sqlite(rusqlite::Error::SqliteFailure(e, _)) = self else {
            return None;
        };
        match e.code {
            rusqlite::ErrorCode::DiskFull => Some(StorageFault::DiskFull),
            rusqlite::ErrorCode::ReadOnly => Some(StorageFault::ReadOnly),
            rusqlite::ErrorCode::SystemIoFailure => Some(StorageFault::Io),
            _ => None,
        }
    }
}

/// Writes failing since `since`, for `fault`.
#[derive(Debug, Clone, PartialEq)]
pub struct WriteFailure {
    pub fault: StorageFault,
    /// The last failure's error.
    pub message: String,
    /// Failed writes since the last one that succeeded.
    pub failures: u64,
    /// When the first of them failed.
    pub since: Instant,
}

impl WriteFailure {
    /// One line for `/readyz`: the fault, the fix, how many writes failed for how long.
    pub fn reason(&self, now: Instant) -> String {
        let secs = now.saturating_duration_since(self.since).as_secs();
        format!(
            "database writes fail: {} ({} failed writes in {secs} s, the last: {})",
            self.fault.describe(),
            self.failures,
            self.message
        )
    }
}

/// The write failure in force, if any; shared by a store's clones.
#[derive(Debug, Default)]
pub struct WriteHealth(Mutex<Option<WriteFailure>>);

impl WriteHealth {
    /// Takes note of a write's outcome: a storage fault starts (or continues) a
    /// failure; a write that changed the database ends it. Other outcomes (a refused
    /// change, a write that changed nothing) say nothing of the storage.
    pub(in crate::store) fn note<T>(&self, outcome: &Result<T, StoreError>, changed: bool) {
        let mut held = self.0.lock().unwrap_or_else(|p| p.into_inner());
        match outcome {
            Ok(_) if changed => *held = None,
            Ok(_) => {}
            Err(e) => {
                let Some(fault) = e.storage_fault() else {
                    return;
                };
                let (failures, since) = held
                    .as_ref()
                    .map_or((0, Instant::now()), |f| (f.failures, f.since));
                *held = Some(WriteFailure {
                    fault,
                    message: e.to_string(),
                    failures: failures + 1,
                    since,
                });
            }
        }
    }

    /// The failure in force.
    pub fn failing(&self) -> Option<WriteFailure> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real SQLITE_FULL: a database that may not grow past its pages.
    fn disk_full() -> StoreError {
        let conn = rusqlite::Connection::open_in_memory().expect("open");
        conn.execute_batch("CREATE TABLE t (x BLOB); PRAGMA max_page_count = 2;")
            .expect("schema");
        let err = conn
            .execute("INSERT INTO t VALUES (zeroblob(100000))", [])
            .expect_err("no room");
        StoreError::Sqlite(err)
    }

    #[test]
    fn a_storage_fault_holds_until_a_write_changes_the_database() {
        let health = WriteHealth::default();
        let full = disk_full();
        assert_eq!(full.storage_fault(), Some(StorageFault::DiskFull), "{full}");
        health.note::<()>(&Err(full), false);
        health.note::<()>(&Err(disk_full()), false);
        let f = health.failing().expect("failing");
        assert_eq!((f.fault, f.failures), (StorageFault::DiskFull, 2));
        assert!(
            f.reason(f.since).contains("the disk is full"),
            "{}",
            f.reason(f.since)
        );
        // A refusal or a write that changed nothing says nothing of the disk.
        health.note::<()>(&Err(StoreError::NotFound("x".into())), false);
        health.note(&Ok(()), false);
        assert!(health.failing().is_some());
        health.note(&Ok(()), true);
        assert_eq!(health.failing(), None);
    }
}
