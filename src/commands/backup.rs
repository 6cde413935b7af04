//! `kerf backup` and `kerf restore`. A backup is the database (SQLite's online backup,
//! safe while serving) plus, beside it as `FILE.secret.key` (mode 0600), the data dir's
//! secret key: without it the sealed datasource and channel secrets of a restored hub
//! could never be opened again; and, as `FILE.usage.db`, the embedded usage store
//! (the usage history of clusters without a Prometheus, the same online backup) when
//! the hub keeps one. A restore goes only into a data dir without a database, checks
//! that the key opens every sealed datasource secret, and leaves nothing behind when it
//! refuses.

use std::path::{Path, PathBuf};

use super::{block_on, open_store, store_exit, Exit};
use crate::config::Config;
use crate::secret::{write_private, SecretKey, KEY_FILE};
use crate::store;

/// Where a backup `FILE` keeps its key.
pub fn key_path(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".");
    name.push(KEY_FILE);
    PathBuf::from(name)
}

/// Where a backup `FILE` keeps the usage store.
pub fn usage_path(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".");
    name.push(store::usage::FILE_NAME);
    PathBuf::from(name)
}

/// `kerf backup --to FILE`.
pub fn backup(config: &Config, to: &Path) -> Result<(), Exit> {
    let path = config.database_path();
    if !path.exists() {
        return Err(Exit::usage(format!("no database at {}", path.display())));
    }
    let key_to = key_path(to);
    let usage = store::UsageStore::path_beside(&path);
    let usage_to = usage_path(to);
    for target in [to, key_to.as_path(), usage_to.as_path()] {
        if target.exists() {
            return Err(Exit::usage(format!(
                "{} already exists; choose a new file",
                target.display()
            )));
        }
    }
    store::backup_to(&path, to).map_err(store_exit)?;
    if usage.exists() {
        store::backup_to(&usage, &usage_to).map_err(|e| {
            let _ = std::fs::remove_file(to);
            store_exit(e)
        })?;
        println!(
            "backed up the usage store {} to {}",
            usage.display(),
            usage_to.display()
        );
    }
    let key = config.data_dir.join(KEY_FILE);
    match std::fs::read(&key) {
        Ok(bytes) => {
            write_private(&key_to, &bytes).map_err(|e| {
                let _ = std::fs::remove_file(to);
                let _ = std::fs::remove_file(&usage_to);
                Exit::runtime(format!("cannot write {}: {e}", key_to.display()))
            })?;
            println!(
                "backed up {} to {} and its secret key to {} (keep both, and the key private)",
                path.display(),
                to.display(),
                key_to.display()
            );
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => println!(
            "backed up {} to {} (no secret key yet: nothing is sealed)",
            path.display(),
            to.display()
        ),
        Err(e) => {
            let _ = std::fs::remove_file(to);
            let _ = std::fs::remove_file(&usage_to);
            return Err(Exit::runtime(format!("cannot read {}: {e}", key.display())));
        }
    }
    Ok(())
}

/// The key of a backup `FILE`, when it was backed up with one.
fn backup_key(file: &Path) -> Result<Option<(Vec<u8>, SecretKey)>, Exit> {
    let path = key_path(file);
    match std::fs::read(&path) {
        Ok(bytes) => {
            let arr: [u8; 32] = bytes.clone().try_into().map_err(|_| {
                Exit::usage(format!("{} must hold exactly 32 bytes", path.display()))
            })?;
            Ok(Some((bytes, SecretKey::from_bytes(arr))))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Exit::runtime(format!(
            "cannot read {}: {e}",
            path.display()
        ))),
    }
}

/// `kerf restore --from FILE` into the configured data dir, which must hold no database.
pub fn restore(config: &Config, from: &Path) -> Result<(), Exit> {
    if !from.exists() {
        return Err(Exit::usage(format!("no backup at {}", from.display())));
    }
    let db = config.database_path();
    let key_to = config.data_dir.join(KEY_FILE);
    if db.exists() {
        return Err(Exit::usage(format!(
            "{} already has a database; restore only into an empty data dir",
            config.data_dir.display()
        )));
    }
    if key_to.exists() {
        return Err(Exit::usage(format!(
            "{} already exists; restore only into an empty data dir",
            key_to.display()
        )));
    }
    let key = backup_key(from)?;
    store::files::create_private_dir(&config.data_dir)
        .map_err(|e| Exit::runtime(format!("cannot create {}: {e}", config.data_dir.display())))?;
    store::backup_to(from, &db).map_err(store_exit)?;
    let usage_from = usage_path(from);
    let usage_db = store::UsageStore::path_beside(&db);
    let undo = || {
        for file in [&db, &usage_db] {
            for f in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{f}", file.display()));
            }
        }
        let _ = std::fs::remove_file(&key_to);
    };
    if usage_from.exists() {
        if let Err(e) = store::backup_to(&usage_from, &usage_db) {
            undo();
            return Err(store_exit(e));
        }
    }
    let checked = check_secrets(config, from, key.as_ref().map(|k| &k.1));
    if let Err(e) = checked {
        undo();
        return Err(e);
    }
    if let Some((bytes, _)) = key {
        if let Err(e) = write_private(&key_to, &bytes) {
            undo();
            return Err(Exit::runtime(format!(
                "cannot write {}: {e}",
                key_to.display()
            )));
        }
    }
    println!(
        "restored {} into {}",
        from.display(),
        config.data_dir.display()
    );
    Ok(())
}

/// Opens the restored database (migrating it when it came from an older kerf) and
/// checks that `key` opens every sealed datasource secret in it.
fn check_secrets(config: &Config, from: &Path, key: Option<&SecretKey>) -> Result<(), Exit> {
    let store = open_store(config)?;
    let records = block_on(store.reading(|r| r.datasources()))?.map_err(store_exit)?;
    let Some(key) = key else {
        if records.is_empty() {
            return Ok(());
        }
        return Err(Exit::usage(format!(
            "{} is missing: without it the sealed secrets of {} datasource(s) cannot be opened",
            key_path(from).display(),
            records.len()
        )));
    };
    for rec in &records {
        // A backup from before secrets were bound holds unbound blobs; the hub
        // re-seals them at its next start.
        let opened: Result<crate::datasource::Secrets, _> =
            if SecretKey::is_bound(&rec.secrets_sealed) {
                let binding = crate::datasource::datasource_binding(&rec.settings_json);
                key.open_for(&rec.secrets_sealed, &binding)
            } else {
                key.open_unbound(&rec.secrets_sealed)
            };
        opened.map_err(|_| {
            Exit::usage(format!(
                "{} does not open the secrets of datasource {:?}: it is not this backup's key",
                key_path(from).display(),
                rec.name
            ))
        })?;
    }
    Ok(())
}
