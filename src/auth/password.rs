//! Passwords: argon2id hashes (PHC strings) and the password policy (at least 12
//! characters, not a common password, not containing the username).
//!
//! The common-password list (`common_passwords.txt`) is the top 5,000 ASCII entries of
//! Django's `common-passwords.txt` (BSD-3-Clause), lower-cased.

use argon2::password_hash::{PasswordHasher as _, PasswordVerifier as _};
use argon2::{Algorithm, Argon2, Params, Version};
use rand::Rng;

/// Shortest accepted password, in characters.
pub const MIN_LEN: usize = 12;
/// Longest accepted password, in characters (bounds hashing work: at most 1 KiB).
pub const MAX_LEN: usize = 256;

const COMMON: &str = include_str!("common_passwords.txt");

/// Why a password or its hashing was refused. Messages never include the password.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PasswordError {
    #[error("password must be at least {MIN_LEN} characters")]
    TooShort,
    #[error("password must be at most {MAX_LEN} characters")]
    TooLong,
    #[error("password is too common; choose one that is not on lists of leaked passwords")]
    Common,
    #[error("password must not contain the username")]
    ContainsUsername,
    #[error("argon2 parameters are invalid: {0}")]
    Params(String),
    #[error("cannot hash password: {0}")]
    Hash(String),
}

/// Hashes and verifies passwords with one set of argon2id parameters.
#[derive(Clone)]
pub struct Hasher {
    params: Params,
}

impl Hasher {
    /// A hasher using `memory_kib` KiB and `iterations` passes, one lane.
    pub fn new(memory_kib: u32, iterations: u32) -> Result<Hasher, PasswordError> {
        let params = Params::new(memory_kib, iterations, 1, None)
            .map_err(|e| PasswordError::Params(e.to_string()))?;
        Ok(Hasher { params })
    }

    fn argon2(&self) -> Argon2<'static> {
        Argon2::new(Algorithm::Argon2id, Version::V0x13, self.params.clone())
    }

    /// A PHC string (`$argon2id$v=19$m=…`) with a random salt. Blocking: run it off the
    /// async workers.
    pub fn hash(&self, password: &str) -> Result<String, PasswordError> {
        self.argon2()
            .hash_password(password.as_bytes())
            .map(|h| h.to_string())
            .map_err(|e| PasswordError::Hash(e.to_string()))
    }

    /// True when `password` matches `phc`. The parameters stored in `phc` are used, so
    /// hashes made under older settings keep working. Blocking.
    pub fn verify(&self, password: &str, phc: &str) -> bool {
        self.argon2()
            .verify_password(password.as_bytes(), phc)
            .is_ok()
    }

    /// Spends the same work as [`Hasher::verify`] (one argon2id pass over `password` with
    /// the same parameters) and returns false, so unknown and known usernames cost the
    /// same. Nothing is precomputed: start-up stays fast.
    pub fn verify_dummy(&self, password: &str) -> bool {
        let _ = self.hash(password);
        false
    }
}

/// Checks the policy for a new password of `username`.
pub fn check_policy(password: &str, username: &str) -> Result<(), PasswordError> {
    if password.chars().count() < MIN_LEN {
        return Err(PasswordError::TooShort);
    }
    if password.chars().count() > MAX_LEN {
        return Err(PasswordError::TooLong);
    }
    let lower = password.to_lowercase();
    let user = username.trim().to_lowercase();
    if user.chars().count() >= 3 && lower.contains(&user) {
        return Err(PasswordError::ContainsUsername);
    }
    if is_common(&lower) {
        return Err(PasswordError::Common);
    }
    Ok(())
}

/// True when `lower` is on the list, or is a listed password (4+ characters) padded with
/// digits and punctuation (`password2024!`), or one repeated character.
fn is_common(lower: &str) -> bool {
    let listed = |s: &str| COMMON.lines().any(|l| l == s);
    if listed(lower) {
        return true;
    }
    let core = lower.trim_matches(|c: char| c.is_ascii_digit() || c.is_ascii_punctuation());
    if core.len() >= 4 && core != lower && listed(core) {
        return true;
    }
    let mut chars = lower.chars();
    let first = chars.next();
    chars.all(|c| Some(c) == first)
}

/// A random one-time password: 20 characters from an unambiguous alphabet (~114 bits).
pub fn generate() -> String {
    const ALPHABET: &[u8] = b"abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";
    let mut rng = rand::rng();
    (0..20)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_refuses_short_common_padded_and_username_passwords() {
        assert_eq!(check_policy("short", "ann"), Err(PasswordError::TooShort));
        assert_eq!(
            check_policy("qwerty123456", "ann"),
            Err(PasswordError::Common)
        );
        assert_eq!(
            check_policy("password2024!", "ann"),
            Err(PasswordError::Common)
        );
        assert_eq!(
            check_policy("aaaaaaaaaaaaaaa", "ann"),
            Err(PasswordError::Common)
        );
        assert_eq!(
            check_policy("my-Annabel-is-great", "annabel"),
            Err(PasswordError::ContainsUsername)
        );
        assert_eq!(
            check_policy(&"x".repeat(300), "ann").unwrap_err(),
            PasswordError::TooLong
        );
        assert_eq!(check_policy("correct horse battery", "ann"), Ok(()));
        assert_eq!(check_policy(&generate(), "ann"), Ok(()));
    }

    #[test]
    fn a_hash_verifies_its_password_and_nothing_else() {
        let h = Hasher::new(8 * 1024, 1).expect("params");
        let phc = h.hash("correct horse battery").expect("hash");
        assert!(phc.starts_with("$argon2id$v=19$m=8192,t=1,p=1$"), "{phc}");
        assert!(h.verify("correct horse battery", &phc));
        assert!(!h.verify("correct horse batterY", &phc));
        assert!(!h.verify("x", "not a phc string"));
        assert!(!h.verify_dummy("anything"));
    }

    #[test]
    fn generated_passwords_differ() {
        assert_ne!(generate(), generate());
        assert_eq!(generate().len(), 20);
    }
}
