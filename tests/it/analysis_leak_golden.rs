//! Whole-engine golden cases of the memory-leak detector (`tests/golden/analysis-leak`).
//! `expect.json` is a partial view; its matching rules are in that folder's README:
//! results matched by target name, container and resource; only listed keys checked;
//! arrays match element by element; `null` means absent; numbers compare as numbers.

use std::path::{Path, PathBuf};

use kerf::analysis::analyze_json;
use serde_json::Value;

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// Appends to `out` every way `got` fails to match the partial `want` at `at`.
fn matches(want: &Value, got: Option<&Value>, at: &str, out: &mut Vec<String>) {
    match (want, got) {
        (Value::Null, None) => {}
        (Value::Null, Some(g)) => out.push(format!("{at}: expected absent, got {g}")),
        (_, None) => out.push(format!("{at}: missing, expected {want}")),
        (Value::Number(w), Some(Value::Number(g))) => {
            if w.as_f64() != g.as_f64() {
                out.push(format!("{at}: {g} != {w}"));
            }
        }
        (Value::Object(w), Some(Value::Object(g))) => {
            for (k, v) in w {
                matches(v, g.get(k), &format!("{at}.{k}"), out);
            }
        }
        (Value::Array(w), Some(Value::Array(g))) => {
            if w.len() != g.len() {
                out.push(format!("{at}: {} items, expected {}", g.len(), w.len()));
                return;
            }
            for (i, (wv, gv)) in w.iter().zip(g).enumerate() {
                matches(wv, Some(gv), &format!("{at}[{i}]"), out);
            }
        }
        (w, Some(g)) if w == g => {}
        (w, Some(g)) => out.push(format!("{at}: {g} != {w}")),
    }
}

fn key(v: &Value) -> (Value, Value, Value) {
    (
        v["target"]["name"].clone(),
        v["target"]["container"].clone(),
        v["resource"].clone(),
    )
}

fn run_case(dir: &Path) -> Vec<String> {
    let name = dir
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .to_string();
    let policy = read(&dir.join("policy.json"));
    let out = match analyze_json(&read(&dir.join("input.json")), Some(&policy), false) {
        Ok(o) => o,
        Err(e) => return vec![format!("{name}: analysis failed: {e}")],
    };
    let got: Value = serde_json::from_slice(&out).expect("output is JSON");
    let expect: Value =
        serde_json::from_slice(&read(&dir.join("expect.json"))).expect("expect.json");
    let mut failures = Vec::new();
    let wanted = expect["results"].as_array().cloned().unwrap_or_default();
    assert!(!wanted.is_empty(), "{name}: expect.json lists no results");
    for want in wanted {
        let found = got["results"]
            .as_array()
            .and_then(|rs| rs.iter().find(|r| key(r) == key(&want)));
        let at = format!("{name}:{}", want["target"]["name"]);
        matches(&want, found, &at, &mut failures);
    }
    failures
}

#[test]
fn every_leak_golden_case_matches_its_expected_findings() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/analysis-leak");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("analysis-leak cases")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("input.json").is_file())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 4, "found {} cases", dirs.len());
    let failures: Vec<String> = dirs.iter().flat_map(|d| run_case(d)).collect();
    assert!(
        failures.is_empty(),
        "{} mismatch(es):\n{}",
        failures.len(),
        failures.join("\n")
    );
}
