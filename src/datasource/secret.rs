//! Secrets at rest (datasource credentials, notification channel URLs, signing secrets
//! and SMTP passwords): ChaCha20-Poly1305 with a 32-byte key kept in
//! `data_dir/secret.key` (created 0600 on first use). Sealed blobs are
//! `nonce (12 bytes) || ciphertext` of the secrets' JSON. Secret values never appear in
//! `Debug` output.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use chacha20poly1305::aead::{Aead, KeyInit};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use rand::RngCore;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// File name of the key inside the data dir.
pub const KEY_FILE: &str = "secret.key";

/// Problems with the key or a sealed blob. Never includes secret material.
#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    #[error("secret key {path}: {message}")]
    Key { path: String, message: String },
    #[error("a stored secret cannot be decrypted with this key (was the data dir's secret.key replaced?)")]
    Open,
    #[error("cannot encrypt a secret")]
    Seal,
}

/// The key that seals stored secrets.
#[derive(Clone)]
pub struct SecretKey(Key);

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretKey(***)")
    }
}

/// The write-only values of one datasource.
#[derive(Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Secrets {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// Values of headers marked secret, by header name.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secrets(***)")
    }
}

impl SecretKey {
    /// A key from raw bytes (tests, benchmarks).
    pub fn from_bytes(bytes: [u8; 32]) -> SecretKey {
        SecretKey(Key::from(bytes))
    }

    /// Reads `data_dir/secret.key`, creating it (mode 0600) with 32 random bytes when absent.
    pub fn load_or_create(data_dir: &Path) -> Result<SecretKey, SecretError> {
        let path = data_dir.join(KEY_FILE);
        let err = |message: String| SecretError::Key {
            path: path.display().to_string(),
            message,
        };
        match std::fs::read(&path) {
            Ok(bytes) => {
                let arr: [u8; 32] = bytes
                    .try_into()
                    .map_err(|_| err("must hold exactly 32 bytes".into()))?;
                Ok(SecretKey::from_bytes(arr))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let mut bytes = [0u8; 32];
                rand::rng().fill_bytes(&mut bytes);
                std::fs::create_dir_all(data_dir).map_err(|e| err(e.to_string()))?;
                let mut opts = std::fs::OpenOptions::new();
                opts.write(true).create_new(true);
                #[cfg(unix)]
                {
                    use std::os::unix::fs::OpenOptionsExt;
                    opts.mode(0o600);
                }
                let mut file = opts.open(&path).map_err(|e| err(e.to_string()))?;
                file.write_all(&bytes)
                    .and_then(|_| file.sync_all())
                    .map_err(|e| err(e.to_string()))?;
                Ok(SecretKey::from_bytes(bytes))
            }
            Err(e) => Err(err(e.to_string())),
        }
    }

    /// Encrypts a datasource's `secrets` with a fresh random nonce.
    pub fn seal(&self, secrets: &Secrets) -> Result<Vec<u8>, SecretError> {
        self.seal_value(secrets)
    }

    /// Decrypts a blob made by [`SecretKey::seal`]; an empty blob is "no secrets".
    pub fn open(&self, sealed: &[u8]) -> Result<Secrets, SecretError> {
        self.open_value(sealed)
    }

    /// Encrypts any secrets value (its JSON) with a fresh random nonce.
    pub fn seal_value<T: Serialize>(&self, secrets: &T) -> Result<Vec<u8>, SecretError> {
        let plain = serde_json::to_vec(secrets).map_err(|_| SecretError::Seal)?;
        let mut nonce = [0u8; 12];
        rand::rng().fill_bytes(&mut nonce);
        let cipher = ChaCha20Poly1305::new(&self.0);
        let ct = cipher
            .encrypt(Nonce::from_slice(&nonce), plain.as_slice())
            .map_err(|_| SecretError::Seal)?;
        let mut out = nonce.to_vec();
        out.extend(ct);
        Ok(out)
    }

    /// Decrypts a blob made by [`SecretKey::seal_value`]; an empty blob is the default.
    pub fn open_value<T: DeserializeOwned + Default>(
        &self,
        sealed: &[u8],
    ) -> Result<T, SecretError> {
        if sealed.is_empty() {
            return Ok(T::default());
        }
        if sealed.len() < 12 {
            return Err(SecretError::Open);
        }
        let (nonce, ct) = sealed.split_at(12);
        let plain = ChaCha20Poly1305::new(&self.0)
            .decrypt(Nonce::from_slice(nonce), ct)
            .map_err(|_| SecretError::Open)?;
        serde_json::from_slice(&plain).map_err(|_| SecretError::Open)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_secrets_open_with_the_same_key_only_and_hide_the_plaintext() {
        let dir = tempfile::tempdir().expect("tempdir");
        let key = SecretKey::load_or_create(dir.path()).expect("key");
        let again = SecretKey::load_or_create(dir.path()).expect("same key");
        let secrets = Secrets {
            password: Some("correct-horse-battery".into()),
            ..Secrets::default()
        };
        let sealed = key.seal(&secrets).expect("seal");
        assert!(!String::from_utf8_lossy(&sealed).contains("correct-horse"));
        assert_eq!(again.open(&sealed).expect("open"), secrets);
        let other = SecretKey::from_bytes([9; 32]);
        assert!(other.open(&sealed).is_err());
        assert!(!format!("{secrets:?}").contains("correct"));
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
}
