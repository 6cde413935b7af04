//! The usage store's migrations, embedded from `migrations/usage/` and applied by the
//! main store's machinery (`store::migrate`): ledger, checksums, a copy before
//! migrating, and a file from a newer kerf refused.

use rusqlite::Connection;

use crate::store::migrate::{Migration, Schema};
use crate::store::StoreError;

/// The page size of a new file. Closed chunks (about 800 bytes at 30 s) fill 16 KiB pages
/// to 98 %, 4 KiB ones to 79 % (four to a page): for 2,000 series over 3 days the file
/// is 1.095 × its chunk bytes at 16 KiB, 1.30 × at 4 KiB and 1.075 × at 64 KiB, whose
/// pages make every rewrite of an open chunk four times dearer (`cargo bench --bench
/// usage_disk`).
pub(super) const PAGE_SIZE: i64 = 16384;

/// The usage store's schema (`usage.db`).
pub(super) const USAGE: Schema = Schema {
    copy_stem: "usage",
    migrations: &[Migration {
        version: 1,
        name: "init",
        sql: include_str!("../../../migrations/usage/0001_init.sql"),
    }],
};

/// Sets up a new (empty) file before its first table: `auto_vacuum = INCREMENTAL`, so
/// prune can give pages back (it cannot be turned on once a table exists), and
/// [`PAGE_SIZE`] (fixed once in WAL mode, so the file leaves it for the change).
pub(super) fn prepare_new_file(conn: &Connection) -> Result<(), StoreError> {
    let tables: i64 = conn.query_row("SELECT COUNT(*) FROM sqlite_schema", [], |r| r.get(0))?;
    if tables == 0 {
        conn.execute_batch(&format!(
            "PRAGMA journal_mode = DELETE; PRAGMA page_size = {PAGE_SIZE};
             PRAGMA auto_vacuum = INCREMENTAL; VACUUM; PRAGMA journal_mode = WAL;"
        ))?;
    }
    Ok(())
}

/// WAL bytes between two checkpoints, and what the WAL is cut back to after one.
const WAL_BYTES: i64 = 16 * 1024 * 1024;

/// Checkpoints at about [`WAL_BYTES`] of WAL whatever the file's page size, and cuts the
/// WAL file back to that size after a checkpoint (a burst would otherwise leave it large).
pub(super) fn bound_wal(conn: &Connection) -> Result<(), StoreError> {
    let page: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
    conn.pragma_update(None, "wal_autocheckpoint", WAL_BYTES / page.max(512))?;
    conn.pragma_update(None, "journal_size_limit", WAL_BYTES)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::migrate::{assert_embedded_match_folder, run_schema, status_of};

    #[test]
    fn embedded_usage_migrations_match_the_migrations_usage_folder() {
        assert_embedded_match_folder(&USAGE, "migrations/usage");
    }

    #[test]
    fn a_new_file_gives_pages_back_and_keeps_its_page_size_and_wal() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("usage.db");
        let store = crate::store::usage::UsageStore::open_and_migrate(
            &path,
            &crate::store::usage::UsageOptions::default(),
            0,
        )
        .expect("opens");
        drop(store);
        let conn = rusqlite::Connection::open(&path).expect("open");
        let pragma = |name: &str| -> String {
            conn.query_row(&format!("PRAGMA {name}"), [], |r| {
                r.get::<_, rusqlite::types::Value>(0)
            })
            .map(|v| format!("{v:?}"))
            .expect("pragma")
        };
        assert_eq!(pragma("auto_vacuum"), "Integer(2)", "incremental");
        assert_eq!(pragma("page_size"), format!("Integer({PAGE_SIZE})"));
        assert_eq!(pragma("journal_mode"), "Text(\"wal\")");
    }

    #[test]
    fn a_usage_store_from_a_newer_kerf_is_refused_untouched() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("usage.db");
        let mut conn = rusqlite::Connection::open(&path).expect("open");
        run_schema(&mut conn, &path, 0, &USAGE).expect("migrates");
        assert!(status_of(&conn, &USAGE).expect("status").is_current());
        conn.execute(
            "INSERT INTO schema_migrations VALUES (999, 'future', 'x', 0)",
            [],
        )
        .expect("insert");
        let err = run_schema(&mut conn, &path, 0, &USAGE)
            .unwrap_err()
            .to_string();
        assert!(err.contains("999") && err.contains("newer"), "{err}");
        assert!(!dir.path().join("backups").exists());
    }
}
