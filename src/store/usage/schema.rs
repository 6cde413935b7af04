//! The usage store's migrations, embedded from `migrations/usage/` and applied by the
//! main store's machinery (`store::migrate`): ledger, checksums, a copy before
//! migrating, and a file from a newer kerf refused.

use crate::store::migrate::{Migration, Schema};

/// The usage store's schema (`usage.db`).
pub(super) const USAGE: Schema = Schema {
    copy_stem: "usage",
    migrations: &[Migration {
        version: 1,
        name: "init",
        sql: include_str!("../../../migrations/usage/0001_init.sql"),
    }],
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::migrate::{assert_embedded_match_folder, run_schema, status_of};

    #[test]
    fn embedded_usage_migrations_match_the_migrations_usage_folder() {
        assert_embedded_match_folder(&USAGE, "migrations/usage");
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
