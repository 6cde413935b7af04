//! The API document the hub serves (`GET /v1/openapi.yaml`) is valid OpenAPI 3.1 by a
//! real validator (openapi-spec-validator from PyPI, installed by
//! `scripts/ensure-python-tools.sh`): any tool a user points at it can read it.

use std::process::Command;

use crate::support::{client, DataDir};

/// The bin directory of the test suite's Python tools (installed when missing).
pub fn python_tools() -> std::path::PathBuf {
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/ensure-python-tools.sh");
    let out = Command::new(script)
        .output()
        .expect("run ensure-python-tools.sh");
    assert!(
        out.status.success(),
        "ensure-python-tools.sh failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    stdout
        .lines()
        .last()
        .expect("the bin directory")
        .trim()
        .into()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_served_document_is_valid_openapi_3_1() {
    let data = DataDir::new();
    let kerf = data.start();
    let resp = client()
        .get(kerf.url("/v1/openapi.yaml"))
        .send()
        .await
        .expect("get the document");
    assert_eq!(resp.status().as_u16(), 200);
    let text = resp.text().await.expect("document");
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
