//! Smoke tests of a kerf binary as shipped to another machine: `scripts/test.sh` runs
//! this module with `KERF_TEST_BIN` set to the static aarch64 binary under qemu-user
//! (and the x86_64 one natively); run alone they check the build in hand. The binary
//! prints its version, reproduces every analysis golden case byte for byte in meaning
//! (`tests/golden`), and serves: a fresh data dir answers `/readyz`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::support::{bin, client, DataDir};

fn golden_cases() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/analysis");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("golden cases")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("input.json").is_file())
        .collect();
    dirs.sort();
    dirs
}

#[test]
fn version_names_the_release_and_its_features() {
    let out = Command::new(bin())
        .arg("version")
        .env_remove("KERF_CONFIG")
        .output()
        .expect("run kerf version");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("kerf {} (features: agent)", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn analyze_reproduces_the_reference_pair_and_every_golden_case() {
    let reference = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/analysis-reference");
    let mut cases = vec![(
        "analysis-reference".to_string(),
        reference.join("default-input.json"),
        Some(reference.join("policy.json")),
        reference.join("default-output.json"),
    )];
    for dir in golden_cases() {
        let policy = dir.join("policy.json");
        cases.push((
            dir.file_name().expect("name").to_string_lossy().to_string(),
            dir.join("input.json"),
            policy.is_file().then_some(policy),
            dir.join("output.json"),
        ));
    }
    assert!(cases.len() > 10, "{} cases", cases.len());
    let mut failures = Vec::new();
    for (name, input, policy, output) in &cases {
        let mut cmd = Command::new(bin());
        cmd.arg("analyze").stdin(Stdio::null());
        if let Some(p) = policy {
            cmd.arg("--policy").arg(p);
        }
        let out = cmd.arg(input).output().expect("run kerf analyze");
        let want: serde_json::Value =
            serde_json::from_slice(&std::fs::read(output).expect("output")).expect("JSON");
        let got: serde_json::Value = if out.status.success() {
            serde_json::from_slice(&out.stdout).expect("JSON output")
        } else {
            // An error case: exit 2 with the engine's message on one line.
            assert_eq!(out.status.code(), Some(2), "{name}");
            let line = String::from_utf8_lossy(&out.stderr).trim().to_string();
            serde_json::json!({ "error": line.trim_start_matches("kerf: ") })
        };
        if got != want {
            failures.push(name.clone());
        }
    }
    assert!(
        failures.is_empty(),
        "outputs differ from tests/golden: {failures:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn serve_answers_readyz_on_a_fresh_data_dir() {
    let data = DataDir::new();
    let kerf = data.start();
    let resp = client()
        .get(kerf.url("/readyz"))
        .send()
        .await
        .expect("readyz");
    let status = resp.status().as_u16();
    let body: serde_json::Value = resp.json().await.expect("json");
    assert_eq!(status, 200, "{body}");
    assert_eq!(kerf.stop(), Some(0), "SIGTERM ends it cleanly");
}
