//! The secret box: secrets at rest (datasource credentials, notification channel URLs,
//! signing secrets and SMTP passwords) sealed with ChaCha20-Poly1305 and a 32-byte key
//! kept in `data_dir/secret.key` (created 0600 on first use). Sealed blobs are
//! `nonce (12 bytes) || ciphertext` of the secrets' JSON, bound to their record. The key
//! never appears in `Debug` output.

use std::io::Write;
use std::path::Path;

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use rand::RngCore;
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::MASK;

/// File name of the key inside the data dir.
pub const KEY_FILE: &str = "secret.key";

/// Problems with the key or a sealed blob. Never includes secret material.
#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    #[error("secret key {path}: {message}")]
    Key { path: String, message: String },
    #[error("a stored secret cannot be decrypted with this key for this record (was the data dir's secret.key replaced, or the record changed outside kerf?)")]
    Open,
    #[error("a stored secret is not bound to its record; restart kerf to re-seal it")]
    Unbound,
    #[error("cannot encrypt a secret")]
    Seal,
}

/// The key that seals stored secrets.
#[derive(Clone)]
pub struct SecretKey(Key);

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SecretKey({MASK})")
    }
}

/// The first bytes of a bound blob (format 1). Blobs without them were sealed by kerf
/// before secrets were bound to their record; they are re-sealed at start.
const BOUND: &[u8; 4] = b"\xffks1";

impl SecretKey {
    /// A key from raw bytes (tests, benchmarks).
    pub fn from_bytes(bytes: [u8; 32]) -> SecretKey {
        SecretKey(Key::from(bytes))
    }

    /// Reads `data_dir/secret.key`, creating it (mode 0600) with 32 random bytes when
    /// absent. Safe when several callers race to create it: the key is written whole to
    /// a temporary file and linked into place only if no key is there yet, so every
    /// caller ends up with the one key, and none ever reads a half-written file.
    pub fn load_or_create(data_dir: &Path) -> Result<SecretKey, SecretError> {
        let path = data_dir.join(KEY_FILE);
        let err = |message: String| SecretError::Key {
            path: path.display().to_string(),
            message,
        };
        match read_key(&path) {
            Ok(Some(key)) => return Ok(key),
            Ok(None) => {}
            Err(message) => return Err(err(message)),
        }
        let mut bytes = [0u8; 32];
        rand::rng().fill_bytes(&mut bytes);
        std::fs::create_dir_all(data_dir).map_err(|e| err(e.to_string()))?;
        let mut suffix = [0u8; 8];
        rand::rng().fill_bytes(&mut suffix);
        let tmp = data_dir.join(format!(".{KEY_FILE}.{}", u64::from_le_bytes(suffix)));
        write_private(&tmp, &bytes).map_err(|e| err(e.to_string()))?;
        // link(2) fails if the name exists: exactly one creator wins, atomically.
        let linked = std::fs::hard_link(&tmp, &path);
        let _ = std::fs::remove_file(&tmp);
        match linked {
            Ok(()) => Ok(SecretKey::from_bytes(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => read_key(&path)
                .map_err(err)?
                .ok_or_else(|| err("vanished while being created".into())),
            Err(e) => Err(err(e.to_string())),
        }
    }

    /// Encrypts `value` (its JSON) with a fresh random nonce, bound to `binding`: the
    /// blob opens only with the same binding (the record it belongs to), so a blob
    /// moved to another record, or a record whose bound fields were changed behind
    /// kerf's back, does not open.
    pub fn seal_for<T: Serialize>(&self, value: &T, binding: &str) -> Result<Vec<u8>, SecretError> {
        let plain = serde_json::to_vec(value).map_err(|_| SecretError::Seal)?;
        let mut nonce = [0u8; 12];
        rand::rng().fill_bytes(&mut nonce);
        let payload = Payload {
            msg: &plain,
            aad: binding.as_bytes(),
        };
        let ct = ChaCha20Poly1305::new(&self.0)
            .encrypt(Nonce::from_slice(&nonce), payload)
            .map_err(|_| SecretError::Seal)?;
        let mut out = BOUND.to_vec();
        out.extend(nonce);
        out.extend(ct);
        Ok(out)
    }

    /// Decrypts a blob made by [`SecretKey::seal_for`] with the same `binding`; an empty
    /// blob is the default value. An unbound (older) blob is refused.
    pub fn open_for<T: DeserializeOwned + Default>(
        &self,
        sealed: &[u8],
        binding: &str,
    ) -> Result<T, SecretError> {
        if sealed.is_empty() {
            return Ok(T::default());
        }
        let rest = sealed.strip_prefix(BOUND).ok_or(SecretError::Unbound)?;
        self.decrypt(rest, binding.as_bytes())
    }

    /// True when `sealed` is empty or bound to its record.
    pub fn is_bound(sealed: &[u8]) -> bool {
        sealed.is_empty() || sealed.starts_with(BOUND)
    }

    /// Decrypts a blob sealed before secrets were bound (nonce and ciphertext, no
    /// binding): only to re-seal it bound, at start or when restoring a backup.
    pub fn open_unbound<T: DeserializeOwned + Default>(
        &self,
        sealed: &[u8],
    ) -> Result<T, SecretError> {
        if sealed.is_empty() {
            return Ok(T::default());
        }
        self.decrypt(sealed, b"")
    }

    fn decrypt<T: DeserializeOwned>(&self, blob: &[u8], aad: &[u8]) -> Result<T, SecretError> {
        if blob.len() < 12 {
            return Err(SecretError::Open);
        }
        let (nonce, ct) = blob.split_at(12);
        let plain = ChaCha20Poly1305::new(&self.0)
            .decrypt(Nonce::from_slice(nonce), Payload { msg: ct, aad })
            .map_err(|_| SecretError::Open)?;
        serde_json::from_slice(&plain).map_err(|_| SecretError::Open)
    }
}

impl SecretKey {
    /// The key in file `path`; `None` when there is no such file.
    pub fn read_file(path: &Path) -> Result<Option<SecretKey>, String> {
        read_key(path)
    }

    /// A new random key written to the new file `path` (0600, flushed to disk).
    pub fn create_file(path: &Path) -> Result<SecretKey, SecretError> {
        let mut bytes = [0u8; 32];
        rand::rng().fill_bytes(&mut bytes);
        write_private(path, &bytes).map_err(|e| SecretError::Key {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        Ok(SecretKey::from_bytes(bytes))
    }
}

/// The key in `path`: `None` when there is none.
fn read_key(path: &Path) -> Result<Option<SecretKey>, String> {
    match std::fs::read(path) {
        Ok(bytes) => {
            let arr: [u8; 32] = bytes
                .try_into()
                .map_err(|_| "must hold exactly 32 bytes".to_string())?;
            Ok(Some(SecretKey::from_bytes(arr)))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

/// Writes `bytes` to a new file readable by its owner only, flushed to disk.
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    let mut file = opts.open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::secret::{reveal, Secret};

    /// A payload like the ones kerf seals (a datasource's credentials).
    #[derive(Debug, Default, PartialEq, Serialize, serde::Deserialize)]
    struct Secrets {
        #[serde(default, serialize_with = "reveal::option")]
        password: Option<Secret>,
    }

    fn secrets() -> Secrets {
        Secrets {
            password: Some("correct-horse-battery".into()),
        }
    }

    #[test]
    fn sealed_secrets_open_with_the_same_key_and_binding_only_and_hide_the_plaintext() {
        let dir = tempfile::tempdir().expect("tempdir");
        let key = SecretKey::load_or_create(dir.path()).expect("key");
        let again = SecretKey::load_or_create(dir.path()).expect("same key");
        let sealed = key.seal_for(&secrets(), "datasource a").expect("seal");
        assert!(!String::from_utf8_lossy(&sealed).contains("correct-horse"));
        let opened: Secrets = again.open_for(&sealed, "datasource a").expect("open");
        assert_eq!(opened, secrets());
        let moved = again.open_for::<Secrets>(&sealed, "datasource b");
        assert!(
            matches!(moved, Err(SecretError::Open)),
            "a blob moved to another record"
        );
        let other = SecretKey::from_bytes([9; 32]);
        assert!(other.open_for::<Secrets>(&sealed, "datasource a").is_err());
        assert!(!format!("{:?}", secrets()).contains("correct"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join(KEY_FILE))
                .expect("meta")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn an_unbound_blob_is_refused_until_it_is_sealed_again() {
        let key = SecretKey::from_bytes([3; 32]);
        // The format before binding: nonce || ciphertext, no associated data.
        let nonce = [7u8; 12];
        let plain = serde_json::to_vec(&secrets()).expect("json");
        let ct = ChaCha20Poly1305::new(&key.0)
            .encrypt(Nonce::from_slice(&nonce), plain.as_slice())
            .expect("encrypt");
        let old: Vec<u8> = nonce.iter().copied().chain(ct).collect();
        assert!(!SecretKey::is_bound(&old));
        let refused = key.open_for::<Secrets>(&old, "datasource a");
        assert!(matches!(refused, Err(SecretError::Unbound)));
        let opened: Secrets = key.open_unbound(&old).expect("legacy opens for re-sealing");
        let bound = key.seal_for(&opened, "datasource a").expect("seal");
        assert!(SecretKey::is_bound(&bound));
    }

    #[test]
    fn racing_creators_all_get_the_one_key() {
        for _ in 0..20 {
            let dir = tempfile::tempdir().expect("tempdir");
            let keys: Vec<_> = std::thread::scope(|s| {
                let handles: Vec<_> = (0..8)
                    .map(|_| s.spawn(|| SecretKey::load_or_create(dir.path())))
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().expect("join"))
                    .collect()
            });
            let sealed = keys[0]
                .as_ref()
                .expect("key")
                .seal_for(&secrets(), "x")
                .expect("seal");
            for k in &keys {
                let k = k.as_ref().expect("every racer gets the key");
                assert_eq!(
                    k.open_for::<Secrets>(&sealed, "x").expect("same key"),
                    secrets()
                );
            }
            let leftovers = std::fs::read_dir(dir.path()).expect("dir").count();
            assert_eq!(leftovers, 1, "only secret.key remains");
        }
    }
}
