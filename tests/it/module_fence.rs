//! The module fence: the table of allowed `crate::` arrows between top-level modules
//! (the same table `src/lib.rs`'s map states in words), no cycle between top-level
//! modules, rusqlite only in `store`, the HTTP stack only in `api`, `server`, `ui` and
//! `sim` (the simulated kubelet's endpoint), `src/analysis` and the agent's decisions
//! (`src/agent/decide`) pure, and no file in `src` or `tests` over 600 lines.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Module → the modules it may import. Keep in step with `src/lib.rs`.
const ALLOWED: &[(&str, &[&str])] = &[
    ("analysis", &[]),
    ("clock", &[]),
    ("jobs", &[]),
    ("names", &[]),
    ("timestamp", &[]),
    ("config", &[]),
    ("shutdown", &[]),
    ("tls", &[]),
    ("metrics", &[]),
    ("ui", &[]),
    ("fingerprint", &[]),
    ("cluster", &["fingerprint"]),
    ("sim", &["clock", "cluster", "fingerprint"]),
    ("policy", &["analysis", "names", "timestamp"]),
    ("wire", &["policy", "timestamp"]),
    ("events", &["wire", "timestamp"]),
    ("store", &["events", "policy", "wire", "timestamp"]),
    ("operation", &["store"]),
    (
        "datasource",
        &[
            "analysis",
            "clock",
            "fingerprint",
            "sim",
            "timestamp",
            "tls",
        ],
    ),
    (
        "auth",
        &[
            "store",
            "events",
            "operation",
            "names",
            "clock",
            "config",
            "timestamp",
            "wire",
        ],
    ),
    ("readiness", &["store", "events", "wire", "timestamp"]),
    (
        "agent",
        &[
            "clock",
            "cluster",
            "jobs",
            "metrics",
            "policy",
            "timestamp",
            "tls",
            "wire",
        ],
    ),
    (
        "notify",
        &[
            "auth",
            "clock",
            "config",
            "datasource",
            "events",
            "jobs",
            "metrics",
            "runs",
            "store",
            "timestamp",
            "tls",
        ],
    ),
    (
        "runs",
        &[
            "analysis",
            "datasource",
            "policy",
            "readiness",
            "sim",
            "store",
            "events",
            "operation",
            "wire",
            "metrics",
            "clock",
            "timestamp",
        ],
    ),
    (
        "fleet",
        &[
            "auth",
            "datasource",
            "events",
            "names",
            "operation",
            "policy",
            "readiness",
            "runs",
            "store",
            "timestamp",
            "wire",
        ],
    ),
    (
        "api",
        &[
            "agent",
            "analysis",
            "auth",
            "clock",
            "cluster",
            "config",
            "datasource",
            "events",
            "fleet",
            "jobs",
            "metrics",
            "names",
            "notify",
            "operation",
            "policy",
            "readiness",
            "runs",
            "store",
            "timestamp",
            "ui",
            "wire",
        ],
    ),
    (
        "server",
        &[
            "agent",
            "api",
            "auth",
            "clock",
            "cluster",
            "config",
            "datasource",
            "events",
            "fleet",
            "jobs",
            "metrics",
            "notify",
            "operation",
            "runs",
            "shutdown",
            "store",
            "tls",
            "wire",
        ],
    ),
    (
        "commands",
        &[
            "analysis",
            "api",
            "auth",
            "clock",
            "config",
            "datasource",
            "events",
            "fleet",
            "operation",
            "policy",
            "runs",
            "server",
            "store",
            "timestamp",
            "tls",
            "wire",
        ],
    ),
    (
        "demo",
        &[
            "agent",
            "api",
            "auth",
            "clock",
            "commands",
            "config",
            "datasource",
            "fleet",
            "jobs",
            "operation",
            "policy",
            "runs",
            "server",
            "sim",
            "store",
        ],
    ),
    (
        "cli",
        &["commands", "config", "demo", "server", "telemetry"],
    ),
    ("telemetry", &["config"]),
];

/// What `src/analysis` must never touch.
const IMPURE: &[&str] = &[
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

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read dir").flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Code lines only: comments may name what a module avoids.
fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
}

/// The top-level module a file of `src` belongs to (`None` for lib.rs and main.rs).
fn module_of(file: &Path) -> Option<String> {
    let rel = file.strip_prefix(root().join("src")).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    let name = first.trim_end_matches(".rs");
    (name != "lib" && name != "main").then(|| name.to_string())
}

/// Every `crate::x` arrow in `src`: (from, to) → first place seen.
fn arrows() -> BTreeMap<(String, String), String> {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let mut out = BTreeMap::new();
    for file in &files {
        let Some(from) = module_of(file) else {
            continue;
        };
        let text = std::fs::read_to_string(file).expect("read source");
        for (n, line) in code_lines(&text) {
            for (i, _) in line.match_indices("crate::") {
                let to: String = line[i + 7..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !to.is_empty() && to != from {
                    let at = format!("{}:{}", file.display(), n + 1);
                    out.entry((from.clone(), to)).or_insert(at);
                }
            }
        }
    }
    out
}

fn allowed() -> BTreeMap<&'static str, BTreeSet<&'static str>> {
    ALLOWED
        .iter()
        .map(|(m, to)| (*m, to.iter().copied().collect()))
        .collect()
}

#[test]
fn every_arrow_between_top_level_modules_is_in_the_table() {
    let table = allowed();
    let found = arrows();
    assert!(found.len() > 30, "the source tree was walked");
    let bad: Vec<String> = found
        .iter()
        .filter(|((from, to), _)| {
            !table
                .get(from.as_str())
                .is_some_and(|t| t.contains(to.as_str()))
        })
        .map(|((from, to), at)| format!("{from} -> {to} ({at})"))
        .collect();
    assert!(
        bad.is_empty(),
        "arrows missing from the module table (src/lib.rs map + module_fence.rs):\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_table_has_no_cycle_and_names_exactly_the_modules_of_lib_rs() {
    let table = allowed();
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).expect("lib.rs");
    let declared: BTreeSet<&str> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("pub mod ")?.strip_suffix(';'))
        .collect();
    let tabled: BTreeSet<&str> = table.keys().copied().collect();
    assert_eq!(declared, tabled, "src/lib.rs modules vs the fence table");
    for m in &declared {
        assert!(
            lib.contains(&format!("`{m}`")),
            "src/lib.rs's map does not describe `{m}`"
        );
    }
    // Depth-first search for a cycle, over the table (which bounds every real arrow).
    fn visit<'a>(
        m: &'a str,
        table: &BTreeMap<&'a str, BTreeSet<&'a str>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) {
        if let Some(i) = path.iter().position(|p| *p == m) {
            panic!("module cycle: {} -> {m}", path[i..].join(" -> "));
        }
        if !done.insert(m) {
            return;
        }
        path.push(m);
        for to in table.get(m).into_iter().flatten() {
            visit(to, table, path, done);
        }
        path.pop();
    }
    let mut done = BTreeSet::new();
    for m in table.keys() {
        visit(m, &table, &mut Vec::new(), &mut done);
    }
}

#[test]
fn storage_and_http_stay_in_their_modules_and_analysis_stays_pure() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let mut problems = Vec::new();
    for file in &files {
        let module = module_of(file).unwrap_or_default();
        let text = std::fs::read_to_string(file).expect("read source");
        for (n, line) in code_lines(&text) {
            let at = format!("{}:{}", file.display(), n + 1);
            if line.contains("rusqlite") && module != "store" {
                problems.push(format!("{at}: rusqlite outside store: {line}"));
            }
            let http = ["axum", "hyper", "tower"].iter().any(|w| line.contains(w));
            // `sim` serves the simulated kubelet's metrics endpoint.
            if http && !["api", "server", "ui", "sim"].contains(&module.as_str()) {
                problems.push(format!(
                    "{at}: the HTTP stack outside api/server/ui/sim: {line}"
                ));
            }
            let decisions = file.starts_with(root().join("src/agent/decide"));
            if module == "analysis" || decisions {
                for word in IMPURE.iter().filter(|w| line.contains(*w)) {
                    problems.push(format!("{at}: `{word}` in pure code: {line}"));
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "fence violations:\n{}",
        problems.join("\n")
    );
}

#[test]
fn no_file_in_src_or_tests_grows_past_600_lines() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    rust_files(&root().join("tests"), &mut files);
    assert!(files.len() > 100, "the source tree was walked");
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let n = std::fs::read_to_string(f)
                .expect("read source")
                .lines()
                .count();
            (n > 600).then(|| format!("{}: {n} lines (split above 600)", f.display()))
        })
        .collect();
    assert!(long.is_empty(), "{}", long.join("\n"));
}
