//! The committed OpenAPI document (`docs/contracts/openapi.yaml`) as people and tools
//! read it: parsed YAML, and the (METHOD, path, permission) triples it names.

use std::collections::BTreeSet;

/// The committed document, parsed.
pub fn committed() -> serde_json::Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/contracts/openapi.yaml");
    let text = std::fs::read_to_string(&path).expect("docs/contracts/openapi.yaml");
    yaml_serde::from_str(&text).expect("the committed document is YAML")
}

/// (METHOD, path, permission) triples named under `paths:` in the document.
pub fn documented() -> BTreeSet<(String, String, String)> {
    let doc = committed();
    let mut out = BTreeSet::new();
    let paths = doc["paths"].as_object().expect("paths");
    for (path, item) in paths {
        for (method, op) in item.as_object().expect("path item") {
            let Some(perm) = op.get("x-kerf-permission").and_then(|p| p.as_str()) else {
                continue;
            };
            out.insert((method.to_ascii_uppercase(), path.clone(), perm.to_string()));
        }
    }
    out
}
