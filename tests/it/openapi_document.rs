//! The API document: generated from the route table and the types handlers parse and
//! serialize (`kerf::api::document`), committed as `docs/contracts/openapi.yaml` for
//! readers (`KERF_BLESS=1` rewrites it after a reviewed change), served at
//! `GET /v1/openapi.yaml`, and valid OpenAPI 3.1 by a real validator
//! (openapi-spec-validator from PyPI, installed by `scripts/ensure-python-tools.sh`).

use std::process::Command;

use crate::support::tools::python_tools;
use crate::support::{client, DataDir};

#[test]
fn the_committed_document_is_the_generated_one() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/contracts/openapi.yaml");
    let generated = kerf::api::document::yaml();
    if std::env::var("KERF_BLESS").is_ok_and(|v| v == "1") {
        std::fs::write(&path, generated).expect("write docs/contracts/openapi.yaml");
    }
    let committed = std::fs::read_to_string(&path).expect("docs/contracts/openapi.yaml");
    if committed != generated {
        let line = committed
            .lines()
            .zip(generated.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(committed.lines().count().min(generated.lines().count()));
        panic!(
            "docs/contracts/openapi.yaml differs from the generated document from line {}; \
             review the change and run with KERF_BLESS=1 to rewrite it",
            line + 1
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_served_document_is_the_generated_one_and_valid_openapi_3_1() {
    let data = DataDir::new();
    let kerf = data.start();
    let resp = client()
        .get(kerf.url("/v1/openapi.yaml"))
        .send()
        .await
        .expect("get the document");
    assert_eq!(resp.status().as_u16(), 200);
    let text = resp.text().await.expect("document");
    assert_eq!(text, kerf::api::document::yaml());
    let file = data.path().join("openapi.yaml");
    std::fs::write(&file, &text).expect("write document");
    let out = Command::new(python_tools().join("openapi-spec-validator"))
        .arg(&file)
        .output()
        .expect("run openapi-spec-validator");
    assert!(
        out.status.success(),
        "openapi-spec-validator refused the served document:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
