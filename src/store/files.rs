//! The data dir's files are private: the database (and SQLite's WAL and shared-memory
//! files beside it) holds password hashes, session CSRF tokens and sealed secrets, so
//! kerf creates directories 0700 and files 0600 whatever the umask, and at start
//! tightens its own files left readable by others (an older kerf made them 0644).

use std::io;
use std::path::{Path, PathBuf};

/// Files of the data dir that only kerf may read, by name.
const PRIVATE: &[&str] = &["kerf.db", "kerf.db-wal", "kerf.db-shm", "secret.key"];

/// The files SQLite keeps for the database at `db`: the database, its write-ahead log,
/// its shared-memory index and its rollback journal. A log or journal left without its
/// database would be replayed into the next database of that name.
pub fn database_files(db: &Path) -> [PathBuf; 4] {
    let beside = |suffix: &str| {
        let mut name = db.as_os_str().to_owned();
        name.push(suffix);
        PathBuf::from(name)
    };
    [
        db.to_path_buf(),
        beside("-wal"),
        beside("-shm"),
        beside("-journal"),
    ]
}

/// Creates `dir` and its missing parents, new ones readable by the owner only.
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    b.create(dir)
}

/// Creates `file` empty with mode 0600 unless it exists. SQLite then keeps that mode
/// and gives it to the WAL and shared-memory files it makes beside a database.
pub fn create_private_file(file: &Path) -> io::Result<()> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    match opts.open(file) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// What the start-up check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exposure {
    /// A file of kerf's was readable by others and is now 0600.
    Tightened(PathBuf),
    /// The data dir itself is open to others (left alone: it may be shared on purpose,
    /// e.g. a volume's group); the files in it are private.
    OpenDir(PathBuf),
    /// A file that could not be tightened.
    Failed(PathBuf, String),
}

/// Tightens kerf's files in `data_dir` (and its pre-migration backups) to 0600 and
/// reports what was exposed.
#[cfg(unix)]
pub fn secure_data_dir(data_dir: &Path) -> Vec<Exposure> {
    use std::os::unix::fs::PermissionsExt;
    let open = |p: &Path| {
        std::fs::metadata(p)
            .ok()
            .map(|m| m.permissions().mode() & 0o077 != 0)
    };
    let mut out = Vec::new();
    if open(data_dir) == Some(true) {
        out.push(Exposure::OpenDir(data_dir.to_path_buf()));
    }
    let backups = std::fs::read_dir(data_dir.join("backups"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path());
    let files = PRIVATE.iter().map(|n| data_dir.join(n)).chain(backups);
    for file in files {
        if open(&file) != Some(true) {
            continue;
        }
        let private = std::fs::Permissions::from_mode(0o600);
        out.push(match std::fs::set_permissions(&file, private) {
            Ok(()) => Exposure::Tightened(file),
            Err(e) => Exposure::Failed(file, e.to_string()),
        });
    }
    out
}

#[cfg(not(unix))]
pub fn secure_data_dir(_data_dir: &Path) -> Vec<Exposure> {
    Vec::new()
}
