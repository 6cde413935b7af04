//! SQLite storage: one writer connection, a small pool of readers, embedded migrations.
//! All SQL lives in this module, one file per table group. Blocking SQLite calls run on
//! tokio's blocking pool, never on the async workers.

mod approval_carry;
pub mod approvals;
mod audit_retention;
pub mod automation;
mod backup;
mod checkpointer;
pub mod cluster_policies;
pub mod clusters;
pub mod config_audit;
mod datasources;
mod events;
mod feed_changes;
pub mod files;
mod history;
pub mod live_changes;
mod log_query;
mod login_locks;
mod migrate;
pub mod notify_channels;
pub mod notify_deliveries;
pub mod notify_digest;
pub mod notify_dispatch;
pub mod notify_rules;
pub mod overrides;
mod page;
pub mod policies;
mod pool;
pub mod readiness;
mod recommendations;
mod runs;
mod runtime_settings;
mod sealed;
pub mod sessions;
pub mod sso;
pub mod teams;
pub mod tokens;
mod tx;
pub mod usage;
pub mod users;
mod workload_list;
mod workload_totals;
mod workloads;
mod write_health;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rusqlite::Connection;

pub use audit_retention::{AuditRows, ExportRow};
pub use backup::{backup_to, check_integrity};
pub use clusters::{ClusterMeta, ClusterPatch, ClusterRecord, FreezeRecord, NewCluster};
pub use config_audit::{ConfigAuditFilter, StoredChange};
pub use datasources::DatasourceRecord;
pub use events::{AuditFilter, EventCounts, InsertOutcome, NewEvent, StoredEvent};
pub use feed_changes::FeedChanges;
pub use history::{HistoryCursor, HistoryEntry, HistoryItem, HistoryQuery};
pub use login_locks::LoginLockRecord;
pub use migrate::{status as migration_status, MigrationStatus, MIGRATIONS};
pub use page::Page;
pub use recommendations::{ChunkWrite, ClusterSavings, NewRecommendation, RecommendationRow};
pub use runs::{RunFilter, RunRecord};
pub use sealed::SealedIn;
pub use sessions::SessionRecord;
pub use sso::{SsoLogin, SsoMappingRecord};
pub use teams::{NamespacePattern, TeamGrantRecord, TeamMember, TeamRecord};
pub use tokens::{ApiTokenRecord, NewApiToken};
pub use users::{NewUser, UserPatch, UserRecord};
pub use workload_list::{
    ListedWorkload, NameMatch, Position, SortValue, WorkloadFilter, WorkloadSort,
};
pub use workload_totals::{GroupBy, WorkloadTotals, COUNTED_NOTICES};
pub use workloads::{WorkloadRow, WorkloadSeen};

pub use tx::{Read, Tx};
pub use usage::{UsageOptions, UsageRead, UsageStore};
pub use write_health::{StorageFault, WriteFailure};

use pool::ReaderPool;

/// Storage errors. Messages say what failed and what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database {path}: {source}")]
    Open {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error(
        "database schema version {found} is newer than this kerf supports ({supported}); \
         run a newer kerf or restore a backup"
    )]
    TooNew { found: i64, supported: i64 },
    #[error(
        "migration {version} ({name}) was applied with a different checksum; \
         the database was made by a different build of kerf"
    )]
    ChecksumMismatch { version: i64, name: String },
    #[error("database has {pending} pending migration(s); run `kerf migrate` first")]
    Pending { pending: usize },
    #[error("cannot create {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{0} already exists")]
    Conflict(String),
    #[error("{0} does not exist")]
    NotFound(String),
    /// A change refused because of the data it would leave behind (e.g. no admin left).
    #[error("{0}")]
    Refused(String),
    /// An optimistic-concurrency check failed: the caller's version is not the current one.
    #[error("{what} is at version {current}, not {expected}; reload it and retry")]
    VersionConflict {
        what: String,
        expected: i64,
        current: i64,
    },
    #[error("database task failed: {0}")]
    Task(String),
    /// The file fails SQLite's integrity check (or cannot be read as a database).
    #[error("database {path} fails SQLite's integrity check: {finding}")]
    Corrupt { path: PathBuf, finding: String },
}

impl StoreError {
    /// The file is no SQLite database, or one too damaged to open (bad input to a
    /// restore, not a fault of kerf's).
    pub fn is_not_a_database(&self) -> bool {
        use rusqlite::ErrorCode::{DatabaseCorrupt, NotADatabase};
        match self {
            StoreError::Sqlite(s) | StoreError::Open { source: s, .. } => {
                matches!(s.sqlite_error_code(), Some(NotADatabase | DatabaseCorrupt))
            }
            _ => false,
        }
    }
}

/// How to open the database.
#[derive(Debug, Clone)]
pub struct StoreOptions {
    pub readers: usize,
    pub busy_timeout_ms: u64,
}

/// Handle to the database. Cheap to clone.
#[derive(Clone)]
pub struct Store {
    path: PathBuf,
    writer: Arc<Mutex<Connection>>,
    readers: Arc<ReaderPool>,
    /// Whether writes fail for a reason of the storage (`/readyz`).
    health: Arc<write_health::WriteHealth>,
    /// Folds the WAL back beside the writer, while any handle lives.
    _checkpointer: Arc<checkpointer::Checkpointer>,
}

impl Store {
    /// Opens an existing, fully migrated database.
    pub fn open(path: &Path, opts: &StoreOptions) -> Result<Store, StoreError> {
        let writer = open_connection(path, opts, false)?;
        let status = migrate::status(&writer)?;
        status.check_current()?;
        let mut readers = Vec::with_capacity(opts.readers);
        for _ in 0..opts.readers {
            readers.push(open_connection(path, opts, true)?);
        }
        Ok(Store {
            path: path.to_path_buf(),
            writer: Arc::new(Mutex::new(writer)),
            readers: Arc::new(ReaderPool::new(readers)),
            health: Arc::default(),
            _checkpointer: Arc::new(checkpointer::Checkpointer::start(
                path.to_path_buf(),
                opts.clone(),
            )),
        })
    }

    /// Creates the data dir and database if needed, backs up and migrates, then opens.
    /// `now` stamps the migrations applied.
    pub fn open_and_migrate(
        path: &Path,
        opts: &StoreOptions,
        now: i64,
    ) -> Result<Store, StoreError> {
        create_database_file(path)?;
        let mut conn = open_connection(path, opts, false)?;
        migrate::run(&mut conn, path, now)?;
        drop(conn);
        Store::open(path, opts)
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `f` on the writer connection, off the async runtime.
    pub(in crate::store) async fn write<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    {
        let (writer, health) = (self.writer.clone(), self.health.clone());
        tokio::task::spawn_blocking(move || {
            let mut conn = lock_writer(&writer)?;
            noted(&health, &mut conn, f)
        })
        .await
        .map_err(|e| StoreError::Task(e.to_string()))?
    }

    /// Runs `f` on a reader connection, off the async runtime.
    pub(in crate::store) async fn read<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    {
        let permit = self.readers.acquire().await?;
        tokio::task::spawn_blocking(move || permit.with(f))
            .await
            .map_err(|e| StoreError::Task(e.to_string()))?
    }

    /// Synchronous writer access (checkpoints; [`Store::writing_blocking`] above it).
    pub(in crate::store) fn write_blocking<T>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut conn = lock_writer(&self.writer)?;
        noted(&self.health, &mut conn, f)
    }

    /// Why writes fail, while a storage fault holds (the disk is full, …): from the
    /// first write it failed until a write changes the database again.
    pub fn write_failure(&self) -> Option<WriteFailure> {
        self.health.failing()
    }

    /// True when the schema is exactly what this build expects.
    pub async fn is_current(&self) -> bool {
        self.read(|c| Ok(migrate::status(c)?.is_current()))
            .await
            .unwrap_or(false)
    }

    /// Folds the WAL back into the main file; called on shutdown.
    pub fn checkpoint(&self) -> Result<(), StoreError> {
        self.write_blocking(|c| {
            c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
            Ok(())
        })
    }
}

/// Runs `f` on the writer and notes what its outcome says of the storage.
fn noted<T>(
    health: &write_health::WriteHealth,
    conn: &mut Connection,
    f: impl FnOnce(&mut Connection) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    let before = conn.total_changes();
    let out = f(conn);
    health.note(&out, conn.total_changes() != before);
    out
}

/// The writer connection. A closure that panicked while holding it poisoned the lock
/// (its transaction rolled back as it unwound): the connection itself is sound, so the
/// poison is cleared instead of failing every later write. A transaction left open
/// anyway is rolled back first.
fn lock_writer(
    writer: &Mutex<Connection>,
) -> Result<std::sync::MutexGuard<'_, Connection>, StoreError> {
    let conn = writer.lock().unwrap_or_else(|poisoned| {
        tracing::warn!("a database write panicked; its transaction was rolled back");
        writer.clear_poison();
        poisoned.into_inner()
    });
    if !conn.is_autocommit() {
        conn.execute_batch("ROLLBACK")?;
    }
    Ok(conn)
}

/// The writer's page cache in KiB (readers keep SQLite's 2 MiB). It lives in kerf's
/// heap and stays full once filled: a run writes tens of MiB of recommendations, so a
/// larger cache is that much more resident memory for as long as the hub runs (32 MiB
/// put a 1,000-workload run's hub at 94 MiB). A page missing from it is read from the
/// OS page cache, which the kernel can reclaim; the `ingest` benchmark measures what
/// random-key inserts pay for that (docs/contracts/datasource.md, "Measured").
const WRITER_CACHE_KIB: i64 = 4096;

/// Opens one connection with kerf's pragmas: busy_timeout first, then WAL,
/// synchronous=NORMAL and foreign keys.
pub fn open_connection(
    path: &Path,
    opts: &StoreOptions,
    read_only: bool,
) -> Result<Connection, StoreError> {
    use rusqlite::OpenFlags;
    let flags = if read_only {
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX
    } else {
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
    };
    let wrap = |source| StoreError::Open {
        path: path.to_path_buf(),
        source,
    };
    let conn = Connection::open_with_flags(path, flags).map_err(wrap)?;
    conn.busy_timeout(std::time::Duration::from_millis(opts.busy_timeout_ms))
        .map_err(wrap)?;
    if !read_only {
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(wrap)?;
        conn.pragma_update(None, "cache_size", -WRITER_CACHE_KIB)
            .map_err(wrap)?;
        // The checkpointer thread copies most of the WAL back beforehand; the writer's
        // own checkpoint then lets the log start over (checkpointer.rs).
        conn.pragma_update(
            None,
            "wal_autocheckpoint",
            checkpointer::WRITER_CHECKPOINT_PAGES,
        )
        .map_err(wrap)?;
    }
    conn.pragma_update(None, "synchronous", "NORMAL")
        .map_err(wrap)?;
    conn.pragma_update(None, "foreign_keys", "ON")
        .map_err(wrap)?;
    Ok(conn)
}

/// Creates the database file `path` (and its directory) owner-only when missing.
pub(in crate::store) fn create_database_file(path: &Path) -> Result<(), StoreError> {
    let io = |p: &Path| {
        let path = p.to_path_buf();
        move |source| StoreError::Io { path, source }
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        files::create_private_dir(dir).map_err(io(dir))?;
    }
    files::create_private_file(path).map_err(io(path))
}

/// True when `e` is a UNIQUE (or PRIMARY KEY) constraint violation.
pub(in crate::store) fn is_unique_violation(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _)
        if f.code == rusqlite::ErrorCode::ConstraintViolation
            && matches!(f.extended_code, rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
                | rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY))
}
