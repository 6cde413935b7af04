//! The test API server's audit log, kept for what a test counts that no object shows:
//! how often each pod was resized (`PATCH pods/resize`). Only those requests are logged
//! (Metadata level), so the log stays small whatever the suite does.

use std::collections::BTreeMap;
use std::path::Path;

/// The audit policy the test API server runs with.
pub const POLICY: &str = "apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
    verbs: [patch]
    resources:
      - group: \"\"
        resources: [pods/resize]
  - level: None
";

/// The log file under the control plane's directory.
pub fn path(dir: &Path) -> std::path::PathBuf {
    dir.join("audit.log")
}

/// How many times `user` resized each pod of `namespace` (completed requests the API
/// server answered 2xx), by pod name.
pub fn resizes(dir: &Path, namespace: &str, user: &str) -> BTreeMap<String, usize> {
    let text = std::fs::read_to_string(path(dir)).unwrap_or_default();
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let Ok(e) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let o = &e["objectRef"];
        let ok = e["stage"] == "ResponseComplete"
            && e["verb"] == "patch"
            && o["resource"] == "pods"
            && o["subresource"] == "resize"
            && o["namespace"] == namespace
            && e["user"]["username"] == user
            && e["responseStatus"]["code"]
                .as_u64()
                .is_some_and(|c| (200..300).contains(&c));
        if let (true, Some(name)) = (ok, o["name"].as_str()) {
            *out.entry(name.to_string()).or_default() += 1;
        }
    }
    out
}
