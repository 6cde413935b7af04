//! Forward-only schema migrations embedded from `migrations/NNNN_name.sql`, each recorded
//! with its SHA-256. A database from a newer kerf is refused; a non-empty database is
//! copied aside with SQLite's online backup before any migration touches it. The same
//! machinery migrates each database kerf keeps, given its [`Schema`]: the main store's
//! ([`MAIN`]) and the usage store's (`migrations/usage/`).

use std::path::{Path, PathBuf};

use rusqlite::{params, Connection, OptionalExtension};
use sha2::{Digest, Sha256};

use super::StoreError;

/// One embedded migration.
pub struct Migration {
    pub version: i64,
    pub name: &'static str,
    pub sql: &'static str,
}

/// One database's migrations and the name its pre-migration copies carry.
pub struct Schema {
    /// Copies are `backups/{copy_stem}-v{version}-{now}.db` beside the database.
    pub copy_stem: &'static str,
    pub migrations: &'static [Migration],
}

/// The main store's schema (`kerf.db`).
pub const MAIN: Schema = Schema {
    copy_stem: "kerf",
    migrations: MIGRATIONS,
};

/// Every migration, in order. A test keeps this list equal to the `migrations/` folder.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "init",
        sql: include_str!("../../migrations/0001_init.sql"),
    },
    Migration {
        version: 2,
        name: "identity",
        sql: include_str!("../../migrations/0002_identity.sql"),
    },
    Migration {
        version: 3,
        name: "datasources",
        sql: include_str!("../../migrations/0003_datasources.sql"),
    },
    Migration {
        version: 4,
        name: "runs",
        sql: include_str!("../../migrations/0004_runs.sql"),
    },
    Migration {
        version: 5,
        name: "policies",
        sql: include_str!("../../migrations/0005_policies.sql"),
    },
    Migration {
        version: 6,
        name: "fleet",
        sql: include_str!("../../migrations/0006_fleet.sql"),
    },
    Migration {
        version: 7,
        name: "notifications",
        sql: include_str!("../../migrations/0007_notifications.sql"),
    },
    Migration {
        version: 8,
        name: "audit_message",
        sql: include_str!("../../migrations/0008_audit_message.sql"),
    },
    Migration {
        version: 9,
        name: "login_locks",
        sql: include_str!("../../migrations/0009_login_locks.sql"),
    },
    Migration {
        version: 10,
        name: "audit_retention",
        sql: include_str!("../../migrations/0010_audit_retention.sql"),
    },
    Migration {
        version: 11,
        name: "workload_sorts",
        sql: include_str!("../../migrations/0011_workload_sorts.sql"),
    },
    Migration {
        version: 12,
        name: "live_changes",
        sql: include_str!("../../migrations/0012_live_changes.sql"),
    },
    Migration {
        version: 13,
        name: "approval_lapse",
        sql: include_str!("../../migrations/0013_approval_lapse.sql"),
    },
    Migration {
        version: 14,
        name: "feed_changes",
        sql: include_str!("../../migrations/0014_feed_changes.sql"),
    },
    Migration {
        version: 15,
        name: "policy_version_reason",
        sql: include_str!("../../migrations/0015_policy_version_reason.sql"),
    },
    Migration {
        version: 16,
        name: "cluster_policies",
        sql: include_str!("../../migrations/0016_cluster_policies.sql"),
    },
    Migration {
        version: 17,
        name: "sso",
        sql: include_str!("../../migrations/0017_sso.sql"),
    },
];

/// What `kerf migrate --status` reports.
#[derive(Debug, Clone)]
pub struct MigrationStatus {
    /// (version, name, applied_at ms) of applied migrations.
    pub applied: Vec<(i64, String, i64)>,
    /// Versions this build knows but the database lacks.
    pub pending: Vec<(i64, &'static str)>,
    /// Highest version recorded in the database.
    pub db_version: i64,
    /// Highest version this build knows.
    pub supported: i64,
}

impl MigrationStatus {
    pub fn is_current(&self) -> bool {
        self.pending.is_empty() && self.db_version <= self.supported
    }

    pub(super) fn check_current(&self) -> Result<(), StoreError> {
        if self.db_version > self.supported {
            return Err(StoreError::TooNew {
                found: self.db_version,
                supported: self.supported,
            });
        }
        if !self.pending.is_empty() {
            return Err(StoreError::Pending {
                pending: self.pending.len(),
            });
        }
        Ok(())
    }
}

impl Schema {
    fn latest(&self) -> i64 {
        self.migrations.last().map(|m| m.version).unwrap_or(0)
    }
}

fn checksum(sql: &str) -> String {
    hex::encode(Sha256::digest(sql.as_bytes()))
}

const CREATE_LEDGER: &str = "CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL,
    checksum   TEXT    NOT NULL,
    applied_at INTEGER NOT NULL
)";

fn ledger_exists(conn: &Connection) -> Result<bool, StoreError> {
    Ok(conn
        .query_row(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'",
            [],
            |_| Ok(()),
        )
        .optional()?
        .is_some())
}

/// Reads the main store's ledger and verifies every recorded checksum this build knows.
pub fn status(conn: &Connection) -> Result<MigrationStatus, StoreError> {
    status_of(conn, &MAIN)
}

/// [`status`] of a database with `schema`.
pub(super) fn status_of(conn: &Connection, schema: &Schema) -> Result<MigrationStatus, StoreError> {
    let mut applied = Vec::new();
    if ledger_exists(conn)? {
        let mut stmt = conn.prepare(
            "SELECT version, name, checksum, applied_at FROM schema_migrations ORDER BY version",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, i64>(3)?,
            ))
        })?;
        for row in rows {
            let (version, name, sum, at) = row?;
            if let Some(m) = schema.migrations.iter().find(|m| m.version == version) {
                if checksum(m.sql) != sum {
                    return Err(StoreError::ChecksumMismatch { version, name });
                }
            }
            applied.push((version, name, at));
        }
    }
    let db_version = applied.iter().map(|a| a.0).max().unwrap_or(0);
    let pending = schema
        .migrations
        .iter()
        .filter(|m| !applied.iter().any(|a| a.0 == m.version))
        .map(|m| (m.version, m.name))
        .collect();
    Ok(MigrationStatus {
        applied,
        pending,
        db_version,
        supported: schema.latest(),
    })
}

/// Applies the main store's pending migrations, each in its own transaction, after a
/// safety copy. Returns the versions applied; `now` stamps the ledger and names the copy.
pub fn run(conn: &mut Connection, db_path: &Path, now: i64) -> Result<Vec<i64>, StoreError> {
    run_schema(conn, db_path, now, &MAIN)
}

/// [`run`] for a database with `schema`.
pub(super) fn run_schema(
    conn: &mut Connection,
    db_path: &Path,
    now: i64,
    schema: &Schema,
) -> Result<Vec<i64>, StoreError> {
    let before = status_of(conn, schema)?;
    if before.db_version > before.supported {
        return Err(StoreError::TooNew {
            found: before.db_version,
            supported: before.supported,
        });
    }
    if before.pending.is_empty() {
        return Ok(Vec::new());
    }
    if !before.applied.is_empty() {
        let copy = pre_migration_copy_path(db_path, schema.copy_stem, before.db_version, now);
        super::backup::backup_connection(conn, &copy)?;
        tracing::info!(backup = %copy.display(), "copied database before migrating");
    }
    conn.execute_batch(CREATE_LEDGER)?;
    let mut done = Vec::new();
    // Every migration the ledger lacks, in version order: parallel branches may land a
    // lower version after a higher one was applied.
    let pending = schema
        .migrations
        .iter()
        .filter(|m| before.pending.iter().any(|(v, _)| *v == m.version));
    for m in pending {
        let tx = conn.transaction()?;
        tx.execute_batch(m.sql)?;
        tx.execute(
            "INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (?1, ?2, ?3, ?4)",
            params![m.version, m.name, checksum(m.sql), now],
        )?;
        tx.commit()?;
        tracing::info!(version = m.version, name = m.name, "applied migration");
        done.push(m.version);
    }
    Ok(done)
}

fn pre_migration_copy_path(db_path: &Path, stem: &str, version: i64, now: i64) -> PathBuf {
    let dir = db_path
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
        .join("backups");
    dir.join(format!("{stem}-v{version}-{now}.db"))
}

/// Fails unless `schema`'s list equals the `.sql` files of `dir` (relative to the
/// repository), byte for byte, with versions contiguous from 1.
#[cfg(test)]
pub(super) fn assert_embedded_match_folder(schema: &Schema, dir: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("migrations dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".sql"))
        .collect();
    files.sort();
    let embedded: Vec<String> = schema
        .migrations
        .iter()
        .map(|m| format!("{:04}_{}.sql", m.version, m.name))
        .collect();
    assert_eq!(files, embedded);
    for m in schema.migrations {
        let on_disk = std::fs::read_to_string(dir.join(format!("{:04}_{}.sql", m.version, m.name)))
            .expect("readable");
        assert_eq!(on_disk, m.sql);
    }
    for (i, m) in schema.migrations.iter().enumerate() {
        assert_eq!(m.version, i as i64 + 1, "versions are contiguous from 1");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_migrations_match_the_migrations_folder() {
        assert_embedded_match_folder(&MAIN, "migrations");
    }

    #[test]
    fn a_database_from_a_newer_kerf_is_refused_untouched() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("kerf.db");
        let mut conn = Connection::open(&path).expect("open");
        run(&mut conn, &path, 0).expect("migrates");
        conn.execute(
            "INSERT INTO schema_migrations VALUES (999, 'future', 'x', 0)",
            [],
        )
        .expect("insert");
        let err = run(&mut conn, &path, 0).unwrap_err().to_string();
        assert!(err.contains("999") && err.contains("newer"), "{err}");
        assert!(!dir.path().join("backups").exists());
    }

    #[test]
    fn a_tampered_migration_checksum_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("kerf.db");
        let mut conn = Connection::open(&path).expect("open");
        run(&mut conn, &path, 0).expect("migrates");
        conn.execute("UPDATE schema_migrations SET checksum = 'bad'", [])
            .expect("update");
        let err = status(&conn).unwrap_err().to_string();
        assert!(err.contains("checksum"), "{err}");
    }

    #[test]
    fn migrating_twice_applies_nothing_the_second_time() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("kerf.db");
        let mut conn = Connection::open(&path).expect("open");
        assert_eq!(
            run(&mut conn, &path, 0).expect("first").len(),
            MIGRATIONS.len()
        );
        assert!(run(&mut conn, &path, 0).expect("second").is_empty());
        assert!(status(&conn).expect("status").is_current());
    }
}
