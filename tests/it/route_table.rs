//! The OpenAPI document and the router agree: same routes, same methods, same
//! permissions.

use std::collections::BTreeSet;
use std::sync::Arc;

use kerf::api::{health::OPENAPI_YAML, route_table, AppState};
use kerf::config::Config;
use kerf::metrics::Metrics;
use kerf::store::{Store, StoreOptions};

/// (METHOD, path, permission) triples named under `paths:` in the document.
pub fn documented() -> BTreeSet<(String, String, String)> {
    let mut out = BTreeSet::new();
    let mut in_paths = false;
    let (mut path, mut method) = (String::new(), String::new());
    for line in OPENAPI_YAML.lines() {
        if line == "paths:" {
            in_paths = true;
            continue;
        }
        if !in_paths || line.trim().is_empty() {
            continue;
        }
        if !line.starts_with(' ') {
            in_paths = false;
        } else if let Some(p) = line.strip_prefix("  /").and_then(|l| l.strip_suffix(':')) {
            path = format!("/{p}");
        } else if let Some(m) = line.strip_prefix("    ").filter(|l| !l.starts_with(' ')) {
            method = m.trim_end_matches(':').to_ascii_uppercase();
        } else if let Some(perm) = line.trim().strip_prefix("x-kerf-permission: ") {
            out.insert((method.clone(), path.clone(), perm.to_string()));
        }
    }
    out
}

fn registered() -> BTreeSet<(String, String, String)> {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Store::open_and_migrate(
        &dir.path().join("kerf.db"),
        &StoreOptions {
            readers: 1,
            busy_timeout_ms: 1000,
        },
        0,
    )
    .expect("store");
    let runs = kerf::runs::Runs::new(store.clone(), Arc::new(kerf::clock::SystemClock));
    let state = AppState::new(
        store,
        Arc::new(Metrics::new()),
        Arc::new(Config::default()),
        runs,
    )
    .expect("state");
    route_table(state)
        .specs()
        .iter()
        .map(|r| {
            (
                r.method.to_string(),
                r.path.to_string(),
                r.permission.as_str().to_string(),
            )
        })
        .collect()
}

#[test]
fn every_route_is_documented_with_its_permission_and_nothing_else_is() {
    let doc = documented();
    let routes = registered();
    assert!(
        routes.iter().any(|r| r.1 == "/v1/audit"),
        "route table walked"
    );
    let undocumented: Vec<_> = routes.difference(&doc).collect();
    let phantom: Vec<_> = doc.difference(&routes).collect();
    assert!(
        undocumented.is_empty(),
        "routes missing from openapi.yaml: {undocumented:?}"
    );
    assert!(
        phantom.is_empty(),
        "openapi.yaml names routes the router lacks: {phantom:?}"
    );
}

#[test]
fn the_document_is_openapi_3_1() {
    assert!(OPENAPI_YAML.starts_with("openapi: 3.1.0\n"));
    assert!(documented().len() >= 6);
}
