//! A datasource's write-only values (password, bearer token, secret header values): kept
//! as [`Secret`]s in memory, sealed by the secret box at rest, bound to the datasource's
//! stored settings.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::secret::{reveal, Secret};

/// The write-only values of one datasource (their JSON is what the box seals).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Secrets {
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "reveal::option"
    )]
    pub password: Option<Secret>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "reveal::option"
    )]
    pub token: Option<Secret>,
    /// Values of headers marked secret, by header name.
    #[serde(default, serialize_with = "reveal::map")]
    pub headers: BTreeMap<String, Secret>,
}

/// What a datasource's sealed secrets are bound to: its stored settings (URL, headers,
/// TLS choices), so the credentials never open for a datasource pointed elsewhere
/// behind kerf's back, nor for another datasource.
pub fn datasource_binding(settings_json: &str) -> String {
    format!("kerf datasource\n{settings_json}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_seal_as_themselves_and_never_print() {
        let s = Secrets {
            password: Some("correct-horse-battery".into()),
            token: None,
            headers: BTreeMap::from([("X-Scope-OrgID".into(), "tenant-key-1".into())]),
        };
        let json = serde_json::to_string(&s).expect("json");
        assert_eq!(
            json,
            r#"{"password":"correct-horse-battery","headers":{"X-Scope-OrgID":"tenant-key-1"}}"#
        );
        assert_eq!(serde_json::from_str::<Secrets>(&json).expect("back"), s);
        let shown = format!("{s:?}");
        assert!(
            !shown.contains("correct") && !shown.contains("tenant-key"),
            "{shown}"
        );
    }
}
