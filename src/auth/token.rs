//! Bearer token values: generation, hashing and constant-time comparison.
//! Only SHA-256 hashes are ever stored; a value is shown once, at creation.

use rand::RngCore;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Prefix of API (user/automation) tokens.
pub const API_TOKEN_PREFIX: &str = "kerf_at_";
/// Prefix of cluster agent tokens.
pub const CLUSTER_TOKEN_PREFIX: &str = "kerf_ct_";

/// A new random token value with `prefix`: 32 bytes from the OS CSPRNG, hex encoded.
pub fn generate(prefix: &str) -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    format!("{prefix}{}", hex::encode(bytes))
}

/// SHA-256 of a token value, as lower-case hex.
pub fn hash(value: &str) -> String {
    hex::encode(Sha256::digest(value.as_bytes()))
}

/// Compares two hex digests without early exit.
pub fn digests_equal(a: &str, b: &str) -> bool {
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_tokens_are_unique_prefixed_and_hash_stably() {
        let a = generate(API_TOKEN_PREFIX);
        let b = generate(API_TOKEN_PREFIX);
        assert_ne!(a, b);
        assert!(a.starts_with("kerf_at_") && a.len() == 8 + 64);
        assert_eq!(hash(&a), hash(&a));
        assert!(digests_equal(&hash(&a), &hash(&a)));
        assert!(!digests_equal(&hash(&a), &hash(&b)));
    }
}
