//! `kerf analyze` through the real binary: the reference golden pair, stdin, pretty
//! output, and exit code 2 with a one-line reason for bad input or policy.

use std::io::Write;
use std::process::{Command, Stdio};

use crate::support::bin;

const GOLDEN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/golden/analysis-reference"
);

fn golden(file: &str) -> std::path::PathBuf {
    std::path::Path::new(GOLDEN).join(file)
}

fn analyze(args: &[&str], stdin: &[u8]) -> std::process::Output {
    let mut child = Command::new(bin())
        .arg("analyze")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn kerf analyze");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin)
        .expect("write stdin");
    child.wait_with_output().expect("wait")
}

#[test]
fn kerf_analyze_reproduces_the_reference_output_and_policy_version() {
    let policy = golden("policy.json");
    let input = golden("default-input.json");
    let out = analyze(
        &[
            "--policy",
            policy.to_str().unwrap(),
            input.to_str().unwrap(),
        ],
        b"",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON output");
    let want: serde_json::Value =
        serde_json::from_slice(&std::fs::read(golden("default-output.json")).unwrap()).unwrap();
    assert_eq!(got["policyVersion"], want["policyVersion"]);
    assert_eq!(got, want);
}

#[test]
fn kerf_analyze_reads_stdin_and_pretty_prints() {
    let input = std::fs::read(golden("default-input.json")).unwrap();
    let compact = analyze(&["-"], &input);
    assert!(
        compact.status.success(),
        "{}",
        String::from_utf8_lossy(&compact.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&compact.stdout)
            .trim()
            .lines()
            .count(),
        1
    );
    let pretty = analyze(&["--pretty"], &input);
    assert!(String::from_utf8_lossy(&pretty.stdout).lines().count() > 50);
    let a: serde_json::Value = serde_json::from_slice(&compact.stdout).unwrap();
    let b: serde_json::Value = serde_json::from_slice(&pretty.stdout).unwrap();
    assert_eq!(a, b);
}

#[test]
fn invalid_input_or_policy_exits_2_with_one_line_naming_the_problem() {
    let dir = tempfile::tempdir().unwrap();
    let bad_policy = dir.path().join("p.json");
    std::fs::write(&bad_policy, br#"{"cpu":{"percentile":100}}"#).unwrap();
    let input = golden("default-input.json");
    let mut conflicting: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&input).unwrap()).unwrap();
    conflicting["containers"][0]["cpu"]["series"][0]["samples"][3]["timestamp"] =
        serde_json::json!(1_800_000_060_000i64);
    let cases: Vec<(Vec<&str>, Vec<u8>, &str)> = vec![
        (
            vec![
                "--policy",
                bad_policy.to_str().unwrap(),
                input.to_str().unwrap(),
            ],
            vec![],
            "cpu.percentile",
        ),
        (
            vec!["-"],
            b"{\"schemaVersion\":\"resource-analysis-input/v1\"}".to_vec(),
            "resource-analysis-input/v2",
        ),
        (vec!["-"], b"{not json".to_vec(), "line 1"),
        (
            vec!["-"],
            serde_json::to_vec(&conflicting).unwrap(),
            "1800000060000",
        ),
        (vec!["/nonexistent/input.json"], vec![], "cannot read"),
    ];
    for (args, stdin, needle) in cases {
        let out = analyze(&args, &stdin);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(out.stdout.is_empty());
    }
}
