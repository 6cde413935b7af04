//! `kerf secrets rotate-key`: a new `secret.key`, with every sealed datasource and
//! notification-channel secret sealed again under it in one database transaction. The
//! new key is written first (`secret.key.new`), the blobs move in one transaction, then
//! the files are renamed; the old key is kept as `secret.key.old-<time>` (0600) until
//! the operator deletes it. Run again after a crash, it finishes or starts over:
//! whichever key opens every blob is the one in force.
//!
//! Run it with the hub stopped (docs/security.md): a serving hub reads the key file for
//! each sealing, so a secret written during the rotation would be sealed under a key
//! that is not the one in force afterwards.

use std::path::Path;

use super::{block_on, open_store, store_exit, Exit};
use crate::clock::{Clock, SystemClock};
use crate::config::Config;
use crate::secret::{SecretKey, KEY_FILE};
use crate::server::reseal::{all_open_with, rekey};

fn io(path: &Path) -> impl Fn(std::io::Error) -> Exit + '_ {
    move |e| Exit::runtime(format!("{}: {e}", path.display()))
}

fn read(path: &Path) -> Result<SecretKey, Exit> {
    SecretKey::read_file(path)
        .map_err(|e| Exit::runtime(format!("{}: {e}", path.display())))?
        .ok_or_else(|| Exit::runtime(format!("{} vanished", path.display())))
}

/// `kerf secrets rotate-key`.
pub fn rotate_key(config: &Config) -> Result<(), Exit> {
    let dir = &config.data_dir;
    let (current, next) = (dir.join(KEY_FILE), dir.join(format!("{KEY_FILE}.new")));
    if !current.exists() && next.exists() {
        // Stopped between the two renames: the blobs are under the new key already.
        std::fs::rename(&next, &current).map_err(io(&next))?;
        println!("finished an interrupted rotation of {}", current.display());
        return Ok(());
    }
    if !current.exists() {
        return Err(Exit::usage(format!(
            "no {} yet: nothing is sealed, so there is nothing to rotate",
            current.display()
        )));
    }
    let old = read(&current)?;
    let store = open_store(config)?;
    let moved = if next.exists() {
        // An earlier rotation stopped midway: finish it if its transaction committed.
        let new = read(&next)?;
        if block_on(all_open_with(&store, &new))?.map_err(store_exit)? {
            None
        } else {
            std::fs::remove_file(&next).map_err(io(&next))?;
            return rotate_key(config);
        }
    } else {
        let new = SecretKey::create_file(&next).map_err(|e| Exit::runtime(e.to_string()))?;
        match block_on(rekey(&store, &old, &new))? {
            Ok(n) => Some(n),
            Err(e) => {
                let _ = std::fs::remove_file(&next);
                return Err(Exit::runtime(format!("nothing changed: {e}")));
            }
        }
    };
    let kept = dir.join(format!("{KEY_FILE}.old-{}", SystemClock.now_ms() / 1000));
    std::fs::rename(&current, &kept).map_err(io(&current))?;
    std::fs::rename(&next, &current).map_err(io(&next))?;
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    match moved {
        Some(n) => println!(
            "rotated {}: {n} sealed secret(s) now under the new key",
            current.display()
        ),
        None => println!("finished an interrupted rotation of {}", current.display()),
    }
    println!(
        "the old key is kept in {}; delete it once you no longer need it",
        kept.display()
    );
    Ok(())
}
