//! The webhook signature: `X-Kerf-Signature: sha256=<hex>` where hex is
//! HMAC-SHA256(signing secret, `<X-Kerf-Timestamp>.<body>`). Signing the timestamp with
//! the body lets a receiver refuse replays older than a few minutes.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// The signature header.
pub const SIGNATURE_HEADER: &str = "x-kerf-signature";
/// Unix seconds when the request was signed.
pub const TIMESTAMP_HEADER: &str = "x-kerf-timestamp";
/// The delivery id: the same on every retry, so receivers can drop repeats.
pub const DELIVERY_HEADER: &str = "x-kerf-delivery";
/// `events`, `notice`, `digest` or `test`.
pub const KIND_HEADER: &str = "x-kerf-kind";

fn mac(secret: &str, timestamp: i64, body: &[u8]) -> Hmac<Sha256> {
    let mut mac =
        Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC accepts keys of any length");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    mac
}

/// The `X-Kerf-Signature` value for `body` signed at `timestamp` (Unix seconds).
pub fn signature(secret: &str, timestamp: i64, body: &[u8]) -> String {
    format!(
        "sha256={}",
        hex::encode(mac(secret, timestamp, body).finalize().into_bytes())
    )
}

/// What a receiver does: true when `header` signs `body` at `timestamp` with `secret`
/// (compared in constant time) and `timestamp` is within `tolerance_s` of `now_s`.
pub fn verify(
    secret: &str,
    timestamp: i64,
    body: &[u8],
    header: &str,
    now_s: i64,
    tolerance_s: i64,
) -> bool {
    let Some(hex_sig) = header.strip_prefix("sha256=") else {
        return false;
    };
    let Ok(sig) = hex::decode(hex_sig) else {
        return false;
    };
    (now_s - timestamp).abs() <= tolerance_s
        && mac(secret, timestamp, body).verify_slice(&sig).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_verifies_only_for_the_same_secret_body_and_a_fresh_timestamp() {
        let sig = signature("0123456789abcdef", 1_700_000_000, b"{\"a\":1}");
        assert!(sig.starts_with("sha256=") && sig.len() == 7 + 64);
        assert!(verify(
            "0123456789abcdef",
            1_700_000_000,
            b"{\"a\":1}",
            &sig,
            1_700_000_100,
            300
        ));
        assert!(!verify(
            "0123456789abcdeX",
            1_700_000_000,
            b"{\"a\":1}",
            &sig,
            1_700_000_000,
            300
        ));
        assert!(!verify(
            "0123456789abcdef",
            1_700_000_000,
            b"{\"a\":2}",
            &sig,
            1_700_000_000,
            300
        ));
        assert!(!verify(
            "0123456789abcdef",
            1_700_000_000,
            b"{\"a\":1}",
            &sig,
            1_700_001_000,
            300
        ));
        assert!(!verify(
            "0123456789abcdef",
            1_700_000_001,
            b"{\"a\":1}",
            &sig,
            1_700_000_001,
            300
        ));
    }

    #[test]
    fn matches_a_vector_computed_by_python_hmac() {
        // python3: hmac.new(b"0123456789abcdef", b'1700000000.{"a":1}', hashlib.sha256)
        assert_eq!(
            signature("0123456789abcdef", 1_700_000_000, b"{\"a\":1}"),
            "sha256=9eb18f493f8ec135d9eb2dad817c369bb4e9cbfa818657897a7437c1cd8c3a23"
        );
    }
}
