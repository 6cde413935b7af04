//! The OpenAPI document and the router agree: same routes, same methods, same
//! permissions. The document is read as people and tools read it (the committed YAML,
//! parsed), not through the generator's own types.

use std::collections::BTreeSet;

use kerf::api::route_table;

use crate::support::openapi::{committed, documented};

fn registered() -> BTreeSet<(String, String, String)> {
    route_table()
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
fn every_operation_states_its_permission() {
    let doc = committed();
    assert_eq!(doc["openapi"], "3.1.0");
    let mut operations = 0;
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, op) in item.as_object().expect("path item") {
            operations += 1;
            assert!(
                op["x-kerf-permission"].is_string(),
                "{method} {path} has no x-kerf-permission"
            );
        }
    }
    assert_eq!(operations, registered().len());
}
