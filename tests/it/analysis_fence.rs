//! Fence: `src/analysis` stays pure (no IO, clock, randomness, async, logging or
//! appliance dependencies) and no file in it grows past 600 lines.

use std::path::{Path, PathBuf};

const FORBIDDEN: &[&str] = &[
    "tokio",
    "rusqlite",
    "axum",
    "kube",
    "tracing",
    "log::",
    "std::fs",
    "std::net",
    "std::process",
    "std::time",
    "std::thread",
    "std::env",
    "rand::",
    "rand ",
    "reqwest",
    "hyper",
    "async ",
    ".await",
    "SystemTime",
    "Instant::",
];

fn analysis_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/analysis")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read src/analysis").flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Code lines only: comments are allowed to name what the engine avoids.
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
}

#[test]
fn analysis_sources_import_nothing_impure_and_stay_under_600_lines() {
    let mut files = Vec::new();
    rust_files(&analysis_dir(), &mut files);
    assert!(files.len() > 5, "src/analysis not found");
    let mut problems = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("read source");
        let lines = text.lines().count();
        if lines > 600 {
            problems.push(format!(
                "{}: {lines} lines (split above 600)",
                file.display()
            ));
        }
        for (n, line) in code_lines(&text) {
            for word in FORBIDDEN {
                if line.contains(word) {
                    problems.push(format!(
                        "{}:{}: forbidden `{word}`: {line}",
                        file.display(),
                        n + 1
                    ));
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "analysis fence violations:\n{}",
        problems.join("\n")
    );
}
