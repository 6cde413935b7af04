//! `--ready-file PATH`: a machine-readable "ready" signal for probes, scripts and the
//! black-box tests, instead of reading the log. Once the listener is bound and the hub
//! (or agent) is ready to serve, kerf writes `{"addr":"127.0.0.1:PORT","pid":N}` (for
//! `kerf demo` also `"url"`) to a temp file beside PATH and renames it into place, so a
//! reader sees either no file or the whole document. A file left by an earlier process
//! is removed at start, before the config is read, so it never stands for this one.
//! No secret goes in it: the demo's admin token stays on stdout.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

/// Why the ready file could not be cleared or written.
#[derive(Debug, thiserror::Error)]
pub enum ReadyFileError {
    #[error("cannot remove the stale ready file {}: {source} (remove it or name another --ready-file)", path.display())]
    Clear {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write the ready file {}: {source} (its directory must exist and be writable)", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// What the file says.
#[derive(Debug, serde::Serialize)]
struct Ready<'a> {
    addr: SocketAddr,
    pid: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    url: Option<&'a str>,
}

/// Removes a ready file an earlier process left (none is fine).
pub fn clear(path: &Path) -> Result<(), ReadyFileError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(ReadyFileError::Clear {
            path: path.into(),
            source: e,
        }),
        _ => Ok(()),
    }
}

/// Writes the ready file atomically: a temp file in the same directory, then rename.
pub fn write(path: &Path, addr: SocketAddr, url: Option<&str>) -> Result<(), ReadyFileError> {
    let ready = Ready {
        addr,
        pid: std::process::id(),
        url,
    };
    let body = serde_json::to_vec(&ready).expect("an address, a pid and a URL serialize");
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp-{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let failed = |source| ReadyFileError::Write {
        path: path.into(),
        source,
    };
    std::fs::write(&tmp, body).map_err(failed)?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        failed(e)
    })
}

/// Writes the ready file when one was asked for. A failure is logged, not fatal: the
/// hub serves, and whoever waits for the file sees it not ready (as without a banner).
pub fn announce(path: Option<&Path>, addr: SocketAddr, url: Option<&str>) {
    if let Some(path) = path {
        match write(path, addr, url) {
            Ok(()) => tracing::info!(file = %path.display(), %addr, "ready file written"),
            Err(e) => tracing::error!(error = %e, "readiness not announced"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_holds_the_address_and_pid_and_replaces_a_stale_one() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("ready.json");
        std::fs::write(&path, "stale").expect("stale file");
        let addr: SocketAddr = "127.0.0.1:4321".parse().expect("address");
        write(&path, addr, None).expect("write");
        let v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).expect("read")).expect("json");
        assert_eq!(v["addr"], "127.0.0.1:4321");
        assert_eq!(v["pid"], std::process::id());
        assert!(v.get("url").is_none(), "{v}");
        let names: Vec<_> = std::fs::read_dir(dir.path()).expect("dir").collect();
        assert_eq!(names.len(), 1, "no temp file is left behind");
        clear(&path).expect("clear");
        assert!(!path.exists());
        clear(&path).expect("clearing no file is fine");
    }

    #[test]
    fn a_missing_directory_is_an_error_naming_the_file() {
        let addr: SocketAddr = "127.0.0.1:1".parse().expect("address");
        let e = write(
            Path::new("/nonexistent-kerf-dir/ready.json"),
            addr,
            Some("http://x/"),
        )
        .expect_err("no directory");
        assert!(
            e.to_string().contains("/nonexistent-kerf-dir/ready.json"),
            "{e}"
        );
    }
}
