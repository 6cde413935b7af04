//! Secrets: the [`Secret`] value in memory, which never prints or serializes itself
//! (`***`, [`MASK`]), and the secret box ([`SecretKey`], `key.rs`) that seals stored
//! secrets with the data dir's `secret.key`. Datasource credentials, notification
//! channel URLs, signing secrets and SMTP passwords all travel as `Secret` and rest
//! sealed; the records they are bound to belong to their modules.

use serde::{Deserialize, Serialize, Serializer};

pub mod destination;
mod key;

pub use key::{write_private, SecretError, SecretKey, KEY_FILE};

/// What stands for a secret wherever one would be shown: Debug and Display of a
/// [`Secret`], its JSON, the audit's before/after, and text scrubbed of credentials.
pub const MASK: &str = "***";

/// A secret value (password, token, webhook URL, signing key, secret header value).
/// `Debug`, `Display` and `Serialize` give [`MASK`]; only [`Secret::expose`] gives the
/// value, so it reaches a request or a sealed blob (see [`reveal`]) by name only.
#[derive(Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The value itself: for the request that sends it or the box that seals it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Secret {
        Secret(value)
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Secret {
        Secret(value.to_string())
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(MASK)
    }
}

impl std::fmt::Display for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(MASK)
    }
}

impl Serialize for Secret {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(MASK)
    }
}

/// `serialize_with` functions for the fields of a payload that is sealed whole (the
/// only place a secret is written out as itself): the box encrypts that JSON.
pub mod reveal {
    use std::collections::BTreeMap;

    use serde::ser::SerializeMap;
    use serde::Serializer;

    use super::Secret;

    pub fn option<S: Serializer>(value: &Option<Secret>, s: S) -> Result<S::Ok, S::Error> {
        match value {
            Some(v) => s.serialize_some(v.expose()),
            None => s.serialize_none(),
        }
    }

    pub fn map<S: Serializer>(value: &BTreeMap<String, Secret>, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(value.len()))?;
        for (k, v) in value {
            map.serialize_entry(k, v.expose())?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    #[derive(Debug, Serialize, Deserialize, PartialEq)]
    struct Payload {
        #[serde(serialize_with = "reveal::option")]
        password: Option<Secret>,
        #[serde(serialize_with = "reveal::map")]
        headers: BTreeMap<String, Secret>,
    }

    #[test]
    fn a_secret_prints_and_serializes_as_the_mask_and_reads_its_value() {
        let s = Secret::from("hunter2");
        assert_eq!(format!("{s:?}"), "***");
        assert_eq!(format!("{s}"), "***");
        assert_eq!(serde_json::to_string(&s).expect("json"), "\"***\"");
        assert_eq!(format!("{:?}", Some(Secret::from("hunter2"))), "Some(***)");
        let read: Secret = serde_json::from_str("\"hunter2\"").expect("json");
        assert_eq!(read.expose(), "hunter2");
    }

    #[test]
    fn a_sealed_payload_writes_its_secrets_as_themselves_and_reads_them_back() {
        let p = Payload {
            password: Some("hunter2".into()),
            headers: BTreeMap::from([("X-Key".to_string(), Secret::from("k3y"))]),
        };
        let json = serde_json::to_string(&p).expect("json");
        assert_eq!(json, r#"{"password":"hunter2","headers":{"X-Key":"k3y"}}"#);
        assert_eq!(serde_json::from_str::<Payload>(&json).expect("back"), p);
        assert!(!format!("{p:?}").contains("hunter2"));
        assert!(!format!("{p:?}").contains("k3y"));
    }
}
