//! Golden tests of the analysis engine: the reference engine's own pair from
//! `shared/spec/analysis-golden` (copied to `tests/golden/analysis-reference`), and kerf's cases under `tests/golden/analysis/<case>/`
//! (`input.json`, optional `policy.json`, `output.json`, optional `expect.json`).
//! `KERF_BLESS=1` rewrites `output.json` files; `expect.json` facts are always checked,
//! so a blessed file cannot silently record a wrong result.

use std::path::{Path, PathBuf};

use kerf::analysis::{analyze_json, json};
use serde_json::Value;

fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The kerf repository root.
fn repo_root() -> PathBuf {
    manifest_dir()
}

/// The reference engine's own pair, copied verbatim from shared/spec/analysis-golden.
fn reference_dir() -> PathBuf {
    repo_root().join("tests/golden/analysis-reference")
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

fn parse(bytes: &[u8], what: &str) -> Value {
    serde_json::from_slice(bytes).unwrap_or_else(|e| panic!("{what} is not JSON: {e}"))
}

#[test]
fn reference_golden_pair_reproduces_exactly() {
    let dir = reference_dir();
    let policy = read(&dir.join("policy.json"));
    let out = analyze_json(&read(&dir.join("default-input.json")), Some(&policy), true)
        .expect("reference input analyzes");
    let got = parse(&out, "output");
    let want = parse(&read(&dir.join("default-output.json")), "reference output");
    assert_eq!(got["policyVersion"], want["policyVersion"]);
    assert_eq!(
        got["policyVersion"].as_str(),
        Some("v2:05fcc132cfc77a9510dabdd15412df2f86e5ee8b8c8c703ea3f3738423463a51")
    );
    if got != want {
        let pretty = String::from_utf8_lossy(&out);
        panic!("output differs from the reference:\n{pretty}");
    }
}

#[test]
fn reference_golden_output_is_byte_identical_after_go_style_reencoding() {
    let dir = reference_dir();
    let policy = read(&dir.join("policy.json"));
    let out = analyze_json(&read(&dir.join("default-input.json")), Some(&policy), true)
        .expect("reference input analyzes");
    let want = read(&dir.join("default-output.json"));
    let want = String::from_utf8_lossy(&want);
    assert_eq!(String::from_utf8_lossy(&out).trim_end(), want.trim_end());
}

/// Looks up a dotted path (`results.0.dataQuality.reasons`) in a JSON value.
fn lookup<'a>(value: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.')
        .try_fold(value, |v, key| match key.parse::<usize>() {
            Ok(i) => v.get(i),
            Err(_) => v.get(key),
        })
}

fn run_case(dir: &Path, bless: bool) -> Vec<String> {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let input = read(&dir.join("input.json"));
    let policy_path = dir.join("policy.json");
    let policy = policy_path.is_file().then(|| read(&policy_path));
    let result = analyze_json(&input, policy.as_deref(), true);
    let got: Value = match &result {
        Ok(bytes) => parse(bytes, "output"),
        Err(e) => serde_json::json!({ "error": e.to_string() }),
    };
    let mut failures = Vec::new();
    let out_path = dir.join("output.json");
    if bless {
        let mut bytes = json::to_vec_pretty(&got).expect("encodes");
        bytes.push(b'\n');
        std::fs::write(&out_path, bytes).expect("write output.json");
    } else if !out_path.is_file() {
        failures.push(format!(
            "{name}: output.json missing (run with KERF_BLESS=1)"
        ));
    } else if parse(&read(&out_path), "output.json") != got {
        failures.push(format!("{name}: output differs from output.json"));
    }
    let expect_path = dir.join("expect.json");
    if expect_path.is_file() {
        let expect = parse(&read(&expect_path), "expect.json");
        let Some(facts) = expect.as_object() else {
            return vec![format!("{name}: expect.json must be an object")];
        };
        for (path, want) in facts {
            match lookup(&got, path) {
                Some(v) if v == want => {}
                other => failures.push(format!("{name}: {path} = {other:?}, expected {want}")),
            }
        }
    } else {
        failures.push(format!("{name}: expect.json missing"));
    }
    failures
}

#[test]
fn every_golden_case_matches_its_output_and_expected_facts() {
    let root = repo_root().join("tests/golden/analysis");
    let bless = std::env::var("KERF_BLESS").is_ok_and(|v| v == "1");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("read {}: {e}", root.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("input.json").is_file())
        .collect();
    dirs.sort();
    assert!(!dirs.is_empty(), "no golden cases under {}", root.display());
    let failures: Vec<String> = dirs.iter().flat_map(|d| run_case(d, bless)).collect();
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
