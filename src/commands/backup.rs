//! `kerf backup` and `kerf restore`. A backup is the database (SQLite's online backup,
//! safe while serving) plus, beside it as `FILE.secret.key` (mode 0600), the data dir's
//! secret key: without it the sealed datasource and channel secrets of a restored hub
//! could never be opened again; and, as `FILE.usage.db`, the embedded usage store
//! (the usage history of clusters without a Prometheus, the same online backup) when
//! the hub keeps one. A restore goes only into a data dir without a database or a
//! database's leftover files (a stale WAL would be replayed into the restored file),
//! checks that the key opens every sealed secret (datasources' and channels') and that
//! the restored files pass SQLite's integrity check, and leaves nothing behind when it
//! refuses.

use std::path::{Path, PathBuf};

use super::{block_on, open_store, store_exit, Exit};
use crate::config::Config;
use crate::secret::{write_private, SecretKey, KEY_FILE};
use crate::server::reseal;
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

/// `kerf restore --from FILE` into the configured data dir, which must hold no database
/// and none of a database's leftover files. On any failure it removes what it wrote.
pub fn restore(config: &Config, from: &Path) -> Result<(), Exit> {
    if !from.exists() {
        return Err(Exit::usage(format!("no backup at {}", from.display())));
    }
    let dir = &config.data_dir;
    refuse_leftovers(config)?;
    let key = backup_key(from)?;
    let made_dir = !dir.exists();
    let made_backups = !dir.join("backups").exists();
    store::files::create_private_dir(dir)
        .map_err(|e| Exit::runtime(format!("cannot create {}: {e}", dir.display())))?;
    if let Err(e) = restore_files(config, from, key) {
        for file in written(config) {
            let _ = std::fs::remove_file(file);
        }
        // Copies taken by a migration of an older backup, then the dir, if ours.
        if made_backups {
            let _ = std::fs::remove_dir_all(dir.join("backups"));
        }
        if made_dir {
            let _ = std::fs::remove_dir(dir);
        }
        return Err(e);
    }
    println!("restored {} into {}", from.display(), dir.display());
    Ok(())
}

/// Every file a restore writes into the data dir: both databases with SQLite's files
/// beside them, and the key.
fn written(config: &Config) -> Vec<PathBuf> {
    let db = config.database_path();
    let usage = store::UsageStore::path_beside(&db);
    let mut files: Vec<PathBuf> = store::files::database_files(&db).into();
    files.extend(store::files::database_files(&usage));
    files.push(config.data_dir.join(KEY_FILE));
    files
}

/// Refuses a data dir holding any file a restore would write: a database, the key, or
/// a WAL, shared-memory index or journal left without its database (SQLite would replay
/// it into the restored file and corrupt it).
fn refuse_leftovers(config: &Config) -> Result<(), Exit> {
    let found: Vec<String> = written(config)
        .iter()
        .filter(|f| f.symlink_metadata().is_ok())
        .filter_map(|f| f.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    if found.is_empty() {
        return Ok(());
    }
    Err(Exit::usage(format!(
        "{} holds {}: restore only into a data dir without them (a leftover WAL or \
         journal would be replayed into the restored database); move them away first",
        config.data_dir.display(),
        found.join(", ")
    )))
}

/// Copies the backup's databases in, each checked by SQLite's integrity check before
/// anything else opens it, checks the key, then writes the key.
fn restore_files(
    config: &Config,
    from: &Path,
    key: Option<(Vec<u8>, SecretKey)>,
) -> Result<(), Exit> {
    let db = config.database_path();
    let usage_from = usage_path(from);
    let usage_db = store::UsageStore::path_beside(&db);
    let mut copies = vec![(from, db.as_path())];
    if usage_from.exists() {
        copies.push((usage_from.as_path(), usage_db.as_path()));
    }
    for (source, copy) in copies {
        store::backup_to(source, copy).map_err(|e| copy_exit(source, e))?;
        store::check_integrity(copy).map_err(|e| match e {
            store::StoreError::Corrupt { finding, .. } => Exit::usage(format!(
                "{} fails SQLite's integrity check ({finding}): restore an intact backup",
                source.display()
            )),
            other => store_exit(other),
        })?;
    }
    check_secrets(config, from, key.as_ref().map(|k| &k.1))?;
    if let Some((bytes, _)) = key {
        let key_to = config.data_dir.join(KEY_FILE);
        write_private(&key_to, &bytes)
            .map_err(|e| Exit::runtime(format!("cannot write {}: {e}", key_to.display())))?;
    }
    Ok(())
}

/// The exit of a failed copy from `from`: a file that is no database is bad input.
fn copy_exit(from: &Path, e: store::StoreError) -> Exit {
    if e.is_not_a_database() {
        return Exit::usage(format!(
            "{} is not a readable database: {e}",
            from.display()
        ));
    }
    store_exit(e)
}

/// Opens the restored database (migrating it when it came from an older kerf) and
/// checks that `key` opens every sealed secret in it, datasources' and channels'.
fn check_secrets(config: &Config, from: &Path, key: Option<&SecretKey>) -> Result<(), Exit> {
    let store = open_store(config)?;
    let unopened = block_on(reseal::unopened(&store, key))?.map_err(store_exit)?;
    let Some(first) = unopened.first() else {
        return Ok(());
    };
    let key_file = key_path(from);
    Err(Exit::usage(match key {
        None => format!(
            "{} is missing: without it the sealed secrets of {} record(s) cannot be opened \
             ({}{})",
            key_file.display(),
            unopened.len(),
            unopened[..unopened.len().min(3)].join(", "),
            if unopened.len() > 3 { ", …" } else { "" }
        ),
        Some(_) => format!(
            "{} does not open the secrets of {first}: it is not this backup's key",
            key_file.display()
        ),
    }))
}
