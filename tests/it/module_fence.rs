//! The module fence: the table of `crate::` arrows between top-level modules (the same
//! table `src/lib.rs`'s map states in words, and exactly the arrows the code has), and
//! no cycle between top-level modules. What code may contain where, and file sizes:
//! `source_fence`.

use std::collections::{BTreeMap, BTreeSet};

use crate::support::source_tree::{module_of, named_modules, root, rust_files};

/// Module → the modules it imports: exactly what the code does and what `src/lib.rs`
/// says in its "Uses" lists (a test holds all three equal).
const ALLOWED: &[(&str, &[&str])] = &[
    ("analysis", &[]),
    ("clock", &[]),
    ("jobs", &[]),
    ("names", &[]),
    ("timestamp", &[]),
    ("quantity", &[]),
    ("config", &["cron", "outbound", "secret"]),
    ("outbound", &[]),
    ("secret", &[]),
    ("cron", &[]),
    ("backoff", &[]),
    ("shutdown", &[]),
    ("tls", &[]),
    ("metrics", &[]),
    ("ui", &[]),
    ("fingerprint", &[]),
    ("workload", &[]),
    ("run_vocabulary", &[]),
    ("xor", &["analysis"]),
    ("cluster", &["fingerprint", "quantity", "workload"]),
    ("sim", &["clock", "cluster", "fingerprint", "workload"]),
    (
        "policy",
        &["analysis", "cron", "names", "timestamp", "workload"],
    ),
    ("wire", &["policy", "workload"]),
    ("events", &["wire", "timestamp", "workload", "quantity"]),
    (
        "store",
        &[
            "events",
            "policy",
            "wire",
            "timestamp",
            "run_vocabulary",
            "xor",
            "analysis",
        ],
    ),
    ("operation", &["store"]),
    (
        "datasource",
        &[
            "analysis",
            "backoff",
            "clock",
            "fingerprint",
            "secret",
            "sim",
            "store",
            "tls",
            "workload",
            "xor",
            "outbound",
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
            "secret",
            "tls",
            "wire",
        ],
    ),
    ("readiness", &["store", "events", "wire", "timestamp"]),
    (
        "agent",
        &[
            "backoff",
            "clock",
            "cluster",
            "cron",
            "jobs",
            "metrics",
            "policy",
            "timestamp",
            "tls",
            "wire",
            "workload",
        ],
    ),
    (
        "notify",
        &[
            "auth",
            "backoff",
            "clock",
            "config",
            "cron",
            "events",
            "jobs",
            "metrics",
            "names",
            "runs",
            "secret",
            "store",
            "timestamp",
            "tls",
            "workload",
            "outbound",
        ],
    ),
    (
        "runs",
        &[
            "analysis",
            "cron",
            "datasource",
            "policy",
            "readiness",
            "secret",
            "sim",
            "store",
            "events",
            "operation",
            "wire",
            "metrics",
            "clock",
            "jobs",
            "timestamp",
            "workload",
            "run_vocabulary",
            "outbound",
        ],
    ),
    (
        "fleet",
        &[
            "auth",
            "config",
            "datasource",
            "events",
            "names",
            "operation",
            "policy",
            "readiness",
            "runs",
            "secret",
            "store",
            "timestamp",
            "wire",
            "outbound",
        ],
    ),
    ("export", &["agent", "cluster", "store", "wire", "workload"]),
    (
        "api",
        &[
            "analysis",
            "auth",
            "clock",
            "config",
            "datasource",
            "events",
            "export",
            "fleet",
            "jobs",
            "metrics",
            "notify",
            "operation",
            "policy",
            "readiness",
            "runs",
            "secret",
            "store",
            "timestamp",
            "ui",
            "wire",
            "workload",
        ],
    ),
    (
        "server",
        &[
            "agent",
            "api",
            "auth",
            "backoff",
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
            "secret",
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
            "auth",
            "clock",
            "config",
            "datasource",
            "events",
            "export",
            "fleet",
            "operation",
            "policy",
            "runs",
            "secret",
            "server",
            "store",
            "timestamp",
            "tls",
            "wire",
            "workload",
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
            "wire",
        ],
    ),
    (
        "cli",
        &["commands", "config", "demo", "server", "telemetry"],
    ),
    ("telemetry", &["config"]),
];

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
        // Code only, comment lines blanked (so line numbers hold), whole: a group import
        // may span lines.
        let code: String = text
            .lines()
            .map(|l| {
                if l.trim_start().starts_with("//") {
                    ""
                } else {
                    l
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        for (i, _) in code.match_indices("crate::") {
            for to in named_modules(&code[i + 7..]) {
                if to != from {
                    let n = code[..i].matches('\n').count();
                    let at = format!("{}:{}", file.display(), n + 1);
                    out.entry((from.clone(), to)).or_insert(at);
                }
            }
        }
    }
    out
}

/// Module → what `src/lib.rs`'s map says it uses: each bullet names its modules before
/// the colon, and its "Uses" clause (up to `;` or the sentence's end, parentheses left
/// out) lists backticked modules; a bullet without one uses nothing of kerf.
fn lib_map() -> BTreeMap<String, BTreeSet<String>> {
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).expect("lib.rs");
    let mut bullets: Vec<String> = Vec::new();
    for line in lib.lines().filter_map(|l| l.strip_prefix("//!")) {
        match line.strip_prefix(" - ") {
            Some(b) => bullets.push(b.to_string()),
            None if line.starts_with("   ") && !bullets.is_empty() => {
                let last = bullets.last_mut().expect("a bullet");
                last.push(' ');
                last.push_str(line.trim());
            }
            None => bullets.push(String::new()),
        }
    }
    let ticked = |s: &str| -> Vec<String> {
        s.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    };
    let mut map = BTreeMap::new();
    for b in bullets.iter().filter(|b| b.starts_with('`')) {
        let Some((names, text)) = b.split_once(':') else {
            continue;
        };
        let uses = match text.split_once("Uses ") {
            Some((_, clause)) => {
                let clause = clause.split(';').next().unwrap_or("");
                let clause = clause.split(". ").next().unwrap_or("");
                let mut bare = String::new();
                let mut depth = 0;
                for c in clause.chars() {
                    match c {
                        '(' => depth += 1,
                        ')' => depth -= 1,
                        c if depth == 0 => bare.push(c),
                        _ => {}
                    }
                }
                ticked(&bare).into_iter().collect()
            }
            None => BTreeSet::new(),
        };
        for m in ticked(names) {
            map.insert(m, uses.clone());
        }
    }
    map
}

#[test]
fn the_table_the_code_and_the_lib_rs_map_name_the_same_arrows() {
    let table: BTreeMap<String, BTreeSet<String>> = allowed()
        .into_iter()
        .map(|(m, to)| (m.to_string(), to.into_iter().map(str::to_string).collect()))
        .collect();
    let map = lib_map();
    let mut differ = Vec::new();
    for m in table.keys().chain(map.keys()).collect::<BTreeSet<_>>() {
        let (t, l) = (table.get(m), map.get(m));
        if t != l {
            differ.push(format!("{m}: table {t:?}, src/lib.rs {l:?}"));
        }
    }
    assert!(
        differ.is_empty(),
        "src/lib.rs's map and the table differ:\n{}",
        differ.join("\n")
    );
    let used: BTreeSet<(String, String)> = arrows().into_keys().collect();
    let unused: Vec<String> = table
        .iter()
        .flat_map(|(m, to)| to.iter().map(move |t| (m.clone(), t.clone())))
        .filter(|a| !used.contains(a))
        .map(|(m, t)| format!("{m} -> {t}"))
        .collect();
    assert!(
        unused.is_empty(),
        "arrows in the table that no code uses (drop them here and in src/lib.rs):\n{}",
        unused.join("\n")
    );
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
fn group_imports_name_every_module_they_open() {
    assert_eq!(named_modules("store::Store;"), ["store"]);
    assert_eq!(
        named_modules("{store::Store, api::{self, AppState},\n    wire};"),
        ["store", "api", "wire"]
    );
    assert_eq!(named_modules("{self};"), Vec::<String>::new());
}

#[test]
fn the_readme_file_map_names_every_entry_of_src() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let map = readme
        .split("## File map")
        .nth(1)
        .expect("README.md has a file map")
        .split("\n## ")
        .next()
        .unwrap_or("");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(root().join("src"))
        .expect("src")
        .flatten()
    {
        let name = entry.file_name().to_string_lossy().to_string();
        let shown = if entry.path().is_dir() {
            format!("`src/{name}/`")
        } else {
            format!("`src/{name}`")
        };
        if !map.contains(&shown) {
            missing.push(shown);
        }
    }
    missing.sort();
    assert!(missing.is_empty(), "README.md's file map lacks {missing:?}");
    for named in map
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|p| p.starts_with("src/"))
    {
        assert!(
            root().join(named).exists(),
            "README.md's file map names {named}, which does not exist"
        );
    }
}
