//! Foreign tools the tests run, built or installed once and cached by the repository's
//! scripts: `helm` (`scripts/ensure-helm.sh`) and the Python tools
//! (`scripts/ensure-python-tools.sh`: openapi-spec-validator, schemathesis).

use std::path::{Path, PathBuf};
use std::process::Command;

/// `HELM_BIN`, else what `scripts/ensure-helm.sh` prints (it builds helm once, cached).
pub fn helm() -> PathBuf {
    if let Ok(bin) = std::env::var("HELM_BIN") {
        return PathBuf::from(bin);
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/ensure-helm.sh");
    let out = Command::new("bash")
        .arg(script)
        .output()
        .expect("run scripts/ensure-helm.sh");
    assert!(
        out.status.success(),
        "scripts/ensure-helm.sh failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    PathBuf::from(text.lines().last().expect("a path").trim())
}

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
