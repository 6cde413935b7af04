//! Online backups through SQLite's backup API: consistent while the server writes; and
//! the integrity check a restored copy passes before it is used.

use std::path::Path;
use std::time::Duration;

use rusqlite::backup::Backup;
use rusqlite::{Connection, ErrorCode, OpenFlags};

use super::StoreError;

/// Copies the database at `db` into a new file `to`, safely while it is in use.
pub fn backup_to(db: &Path, to: &Path) -> Result<(), StoreError> {
    let src =
        Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY).map_err(|source| {
            StoreError::Open {
                path: db.to_path_buf(),
                source,
            }
        })?;
    src.busy_timeout(Duration::from_secs(5))?;
    backup_connection(&src, to)
}

/// Copies an open connection's main database into `to` (which must not exist yet).
pub(super) fn backup_connection(src: &Connection, to: &Path) -> Result<(), StoreError> {
    if to.exists() {
        return Err(StoreError::Conflict(to.display().to_string()));
    }
    if let Some(dir) = to.parent().filter(|d| !d.as_os_str().is_empty()) {
        super::files::create_private_dir(dir).map_err(|source| StoreError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    let tmp = to.with_extension("partial");
    let _ = std::fs::remove_file(&tmp);
    // A copy holds what the database holds: private from its first byte.
    super::files::create_private_file(&tmp).map_err(|source| StoreError::Io {
        path: tmp.clone(),
        source,
    })?;
    {
        let mut dst = Connection::open(&tmp).map_err(|source| StoreError::Open {
            path: tmp.clone(),
            source,
        })?;
        let backup = Backup::new(src, &mut dst)?;
        backup.run_to_completion(256, Duration::from_millis(5), None)?;
    }
    std::fs::rename(&tmp, to).map_err(|source| StoreError::Io {
        path: to.to_path_buf(),
        source,
    })
}

/// Runs `PRAGMA integrity_check` on the database at `db`; `Corrupt` names the first
/// problem SQLite found. A file too damaged to be read as a database is `Corrupt` too.
pub fn check_integrity(db: &Path) -> Result<(), StoreError> {
    let corrupt = |finding: String| StoreError::Corrupt {
        path: db.to_path_buf(),
        finding,
    };
    let damaged = |e: rusqlite::Error| match e.sqlite_error_code() {
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => corrupt(e.to_string()),
        _ => StoreError::Sqlite(e),
    };
    let conn =
        Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_WRITE).map_err(|source| {
            StoreError::Open {
                path: db.to_path_buf(),
                source,
            }
        })?;
    let findings: Vec<String> = conn
        .prepare("PRAGMA integrity_check(3)")
        .and_then(|mut q| {
            q.query_map([], |r| r.get::<_, String>(0))?
                .collect::<Result<_, _>>()
        })
        .map_err(damaged)?;
    match findings.first() {
        Some(first) if first == "ok" => Ok(()),
        Some(first) => Err(corrupt(first.clone())),
        None => Err(corrupt("no answer".into())),
    }
}
