//! `kerf backup` keeps what a restored hub needs to open its sealed secrets: the
//! database (online, while serving) and the data dir's `secret.key`. Restored into an
//! empty data dir with `kerf restore`, the hub's datasource secrets still open (the
//! datasource test authenticates against a real Prometheus behind basic auth) and a run
//! still collects. A backup without its key is refused on restore, naming the key.
//!
//! Issue 36: a restore cannot leave a corrupt or unopenable hub behind. It refuses a
//! target holding a database's leftover files (SQLite would replay a stale WAL into
//! the restored file), a backup that fails SQLite's integrity check, and a key that
//! does not open every sealed secret (channels as well as datasources), leaving
//! nothing behind.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::support::prometheus::{OpenMetrics, Prometheus, BASIC_AUTH_PASSWORD, BASIC_AUTH_USER};
use crate::support::series::deployment;
use crate::support::{stdout_line, DataDir};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restored_hub_opens_its_datasource_secrets_and_collects() {
    let now = kerf::clock::Clock::now_ms(&kerf::clock::SystemClock);
    let mut om = OpenMetrics::new();
    deployment(&mut om, "api", now);
    let prom = Prometheus::with_data(&om, true);
    let data = DataDir::new();
    data.create_cluster("east");
    let admin = data.admin_token();
    let kerf = data.start();
    let api = kerf.api(&admin);
    let body = json!({"name": "prom", "type": "prometheus", "url": prom.url,
        "clusterLabel": "cluster",
        "auth": {"type": "basic", "username": BASIC_AUTH_USER, "password": BASIC_AUTH_PASSWORD}});
    let (s, ds) = api.post("/v1/datasources", body).await;
    assert_eq!(s, 201, "{ds}");
    let id = ds["id"].as_i64().expect("id");
    let link = json!({"datasourceId": id});
    let (s, v) = api.put("/v1/clusters/east/datasource", link).await;
    assert_eq!(s, 200, "{v}");

    // Online backup while serving.
    let backups = tempfile::tempdir().expect("tempdir");
    let file = backups.path().join("kerf-backup.db");
    let out = data.run(&["backup", "--to", file.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let key = backups.path().join("kerf-backup.db.secret.key");
    assert!(
        key.exists(),
        "the secret key is backed up beside the database"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&key).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the key backup is private");
    }
    assert_eq!(kerf.stop(), Some(0));

    // Restore into an empty data dir and serve from it.
    let restored = DataDir::new();
    let out = restored.run(&["restore", "--from", file.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let again = restored.run(&["restore", "--from", file.to_str().unwrap()]);
    assert_eq!(
        again.status.code(),
        Some(2),
        "a data dir with a database is not overwritten"
    );
    let kerf = restored.start();
    let api = kerf.api(&admin);
    let (s, ds) = api.get(&format!("/v1/datasources/{id}")).await;
    assert_eq!(s, 200, "{ds}");
    assert_eq!(ds["auth"]["passwordSet"], true, "{ds}");
    let test = format!("/v1/datasources/{id}/test");
    let (s, report) = api.call("POST", &test, None).await;
    assert_eq!(s, 200, "{report}");
    assert_eq!(
        report["authenticated"], true,
        "the sealed password opened: {report}"
    );
    let run = api.run_to_end("east").await;
    assert_eq!(run["status"], "succeeded", "{run}");
    assert!(run["recommendations"].as_i64().unwrap_or(0) >= 1, "{run}");
    drop(kerf);

    // A backup whose key went missing is refused, naming the key.
    std::fs::remove_file(&key).expect("remove key");
    let empty = DataDir::new();
    let out = empty.run(&["restore", "--from", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("secret.key"), "{stderr}");
    assert!(
        !empty.path().join("kerf.db").exists(),
        "nothing half-restored"
    );
}

/// The files of `dir`, by name, each with its bytes.
fn files_of(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .expect("read dir")
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| {
            let bytes = std::fs::read(e.path()).unwrap_or_default();
            (e.file_name().to_string_lossy().into_owned(), bytes)
        })
        .collect()
}

/// What `dir` holds: each file by name with a digest of its bytes (short to print),
/// and each directory by name with a `/`.
fn listing(dir: &Path) -> BTreeMap<String, u64> {
    let dirs = std::fs::read_dir(dir)
        .expect("read dir")
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| (format!("{}/", e.file_name().to_string_lossy()), 0));
    files_of(dir)
        .into_iter()
        .map(|(name, bytes)| {
            let mut h = std::hash::DefaultHasher::new();
            bytes.hash(&mut h);
            (name, h.finish())
        })
        .chain(dirs)
        .collect()
}

/// A backup of a hub with an admin token and a webhook channel (its signing secret
/// sealed); returns the dir holding it, the backup file and the admin token.
async fn backup_with_a_channel() -> (tempfile::TempDir, PathBuf, String) {
    let data = DataDir::new();
    let admin = data.admin_token();
    let kerf = data.start();
    let body = json!({"name": "ops", "type": "webhook", "url": "http://127.0.0.1:9/hook",
        "signingSecret": "a-signing-secret-of-some-length"});
    let (s, v) = kerf
        .api(&admin)
        .post("/v1/notifications/channels", body)
        .await;
    assert_eq!(s, 201, "{v}");
    assert_eq!(kerf.stop(), Some(0));
    let backups = tempfile::tempdir().expect("tempdir");
    let file = backups.path().join("kerf-backup.db");
    stdout_line(&data.run(&["backup", "--to", file.to_str().expect("utf-8")]));
    (backups, file, admin)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restore_into_a_dir_with_a_leftover_wal_is_refused_naming_the_files() {
    let (_backups, file, _) = backup_with_a_channel().await;
    // The target once held a hub that was killed, then someone cleared it but for some
    // of its database files.
    let target = DataDir::new();
    let admin = target.admin_token();
    let kerf = target.start();
    let (s, v) = kerf
        .api(&admin)
        .post("/v1/clusters", json!({"name": "east"}))
        .await;
    assert_eq!(s, 201, "{v}");
    kerf.kill();
    let left = files_of(target.path());
    let wal = left.get("kerf.db-wal").map_or(0, Vec::len);
    assert!(wal > 0, "the killed hub left a WAL with frames");
    // The main database's WAL (SQLite would replay it into the restored file), and the
    // usage store (a restore that stopped on it removed it).
    for (prefix, named) in [
        ("kerf.db-", ["kerf.db-wal", "kerf.db-shm"]),
        ("usage.db", ["usage.db", "usage.db"]),
    ] {
        for name in files_of(target.path()).keys() {
            std::fs::remove_file(target.path().join(name)).expect("rm");
        }
        for (name, bytes) in left.iter().filter(|(n, _)| n.starts_with(prefix)) {
            std::fs::write(target.path().join(name), bytes).expect("write back");
        }
        let before = listing(target.path());
        let out = target.run(&["restore", "--from", file.to_str().expect("utf-8")]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{prefix}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
        for name in named {
            assert!(stderr.contains(name), "{stderr}");
        }
        assert_eq!(
            listing(target.path()),
            before,
            "{prefix}: the dir is left untouched"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restore_of_a_database_that_fails_its_integrity_check_is_refused_and_leaves_nothing() {
    let (_backups, file, _) = backup_with_a_channel().await;
    // Damage the backup as a bad disk would, where opening and reading the datasources
    // and channels do not look: an index no longer matches its table.
    let conn = rusqlite::Connection::open(&file).expect("open the backup");
    let rows: i64 = conn
        .query_row("SELECT count(*) FROM audit_events", [], |r| r.get(0))
        .expect("count");
    assert!(rows > 0, "the index has entries to disagree with");
    conn.execute_batch(
        "PRAGMA writable_schema = ON;
         UPDATE sqlite_schema
            SET sql = 'CREATE INDEX audit_events_type ON audit_events (reason, type, seq)'
          WHERE name = 'audit_events_type';",
    )
    .expect("damage the index");
    drop(conn);
    let conn = rusqlite::Connection::open(&file).expect("open the backup");
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("check");
    assert_ne!(check, "ok", "the backup is damaged");
    drop(conn);

    let target = DataDir::new();
    let out = target.run(&["restore", "--from", file.to_str().expect("utf-8")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("integrity check"), "{stderr}");
    assert_eq!(
        listing(target.path()),
        BTreeMap::new(),
        "nothing left behind"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restore_whose_key_does_not_open_a_sealed_channel_secret_is_refused_and_leaves_nothing() {
    let (backups, file, _) = backup_with_a_channel().await;
    let key = backups.path().join("kerf-backup.db.secret.key");
    std::fs::write(&key, [7u8; 32]).expect("another key");
    let target = DataDir::new();
    let out = target.run(&["restore", "--from", file.to_str().expect("utf-8")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("secret.key"), "{stderr}");
    assert!(stderr.contains("notification channel \"ops\""), "{stderr}");
    assert_eq!(
        listing(target.path()),
        BTreeMap::new(),
        "nothing left behind"
    );

    // Without its key, the channel's secret cannot be opened either.
    std::fs::remove_file(&key).expect("rm key");
    let target = DataDir::new();
    let out = target.run(&["restore", "--from", file.to_str().expect("utf-8")]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("secret.key"), "{stderr}");
    assert_eq!(
        listing(target.path()),
        BTreeMap::new(),
        "nothing left behind"
    );
}
