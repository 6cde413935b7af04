//! What code may contain where: rusqlite only in `store`, the HTTP stack only in `api`,
//! `server`, `ui` and `sim` (the simulated kubelet's endpoint), `src/analysis` and the
//! agent's decisions (`src/agent/decide`) pure, and no file in `src` or `tests` over 600
//! lines.

use crate::module_fence::{code_lines, module_of, root, rust_files};

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
    // Clocks, ids and randomness of any crate: pure code gets its time and ids given.
    "::now(",
    "Uuid",
    "uuid::",
    "getrandom",
    // Files, terminals and global state.
    "File::",
    "stdin",
    "stdout",
    "stderr",
    "thread_local",
    "static mut",
    // The modules that do I/O or hold state: pure code takes their data as arguments.
    "crate::store",
    "crate::api",
    "crate::server",
    "crate::fleet",
    "crate::runs",
    "crate::notify",
    "crate::datasource",
    "crate::jobs",
    "crate::clock",
    "crate::sim",
    "crate::metrics",
    "crate::telemetry",
    "crate::config",
    "crate::commands",
    "crate::cluster::kube",
];

/// The agent's modules the decisions may read: plain data only.
const DECIDE_SIBLINGS: &[&str] = &["state", "decide"];

/// The `agent` modules `line` (of a file under `src/agent/decide`) names outside
/// [`DECIDE_SIBLINGS`]: through `crate::agent::x`, or `super::x` from `decide/mod.rs`.
fn impure_siblings(line: &str, in_mod_rs: bool) -> Vec<String> {
    let mut out = Vec::new();
    let mut check = |prefix: &str| {
        for (i, _) in line.match_indices(prefix) {
            let rest = &line[i + prefix.len()..];
            let names: Vec<&str> = match rest.strip_prefix('{') {
                Some(group) => group
                    .split('}')
                    .next()
                    .unwrap_or("")
                    .split(',')
                    .map(|n| n.trim().split("::").next().unwrap_or("").trim())
                    .collect(),
                None => vec![rest
                    .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .next()
                    .unwrap_or("")],
            };
            for n in names.into_iter().filter(|n| !n.is_empty() && *n != "self") {
                if !DECIDE_SIBLINGS.contains(&n) {
                    out.push(n.to_string());
                }
            }
        }
    };
    check("crate::agent::");
    if in_mod_rs {
        check("super::");
    }
    out
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
            if decisions {
                let in_mod_rs = file.ends_with("decide/mod.rs");
                for m in impure_siblings(line, in_mod_rs) {
                    problems.push(format!("{at}: the decisions read agent::{m}: {line}"));
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

#[test]
fn the_purity_fence_catches_clocks_ids_io_and_impure_siblings() {
    let caught = |line: &str| IMPURE.iter().any(|w| line.contains(*w));
    for line in [
        "let t = chrono::Utc::now();",
        "let id = Uuid::new_v4();",
        "use crate::store::Store;",
        "use crate::cluster::kube::KubeCluster;",
        "std::fs::read(p)",
        "thread_local! { static X: u8 = 0; }",
    ] {
        assert!(caught(line), "{line}");
    }
    assert!(!caught("use crate::cluster::{Pod, Resources};"));
    assert_eq!(
        impure_siblings("use super::state::{Phase};", true),
        Vec::<String>::new()
    );
    assert_eq!(
        impure_siblings("use super::{apply, state};", true),
        ["apply"]
    );
    assert_eq!(
        impure_siblings("use crate::agent::run::Agent;", false),
        ["run"]
    );
    assert_eq!(
        impure_siblings("use super::Finding;", false),
        Vec::<String>::new()
    );
}
