//! What code may contain where: rusqlite only in `store`, the HTTP stack only in `api`,
//! `server`, `ui` and `sim` (the simulated kubelet's endpoint), `src/analysis`, `cron`
//! and the agent's decisions (`src/agent/decide`) pure, one cron reader (`cron`), one
//! backoff (`backoff`) and one secret mask (`secret`), no cycle among the agent's files,
//! handlers' inputs typed (no query string or numeric path id read by hand in
//! `src/api`), and no file in `src` or `tests` over 600 lines.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::support::source_tree::{code_lines, module_of, named_modules, root, rust_files};

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
            if module == "analysis" || module == "cron" || decisions {
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

/// What `text` (a file of `src/api`, at `rel` below it) reads by hand that has a typed
/// reader: query strings go through `api::query::Query` (its own module excepted),
/// numeric path ids through `api::ids::Id`.
fn hand_read_inputs(rel: &str, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    if rel.starts_with("query/") {
        return out;
    }
    for (n, line) in code_lines(text) {
        let loop_over_pairs = line.contains("for (")
            && ["pairs", "split('&')", "serde_urlencoded"]
                .iter()
                .any(|w| line.contains(w));
        if line.contains("pairs(") || line.contains("serde_urlencoded") || loop_over_pairs {
            out.push(format!(
                "{rel}:{}: a query string read by hand: {line}",
                n + 1
            ));
        }
        if line.contains("parse_id") {
            out.push(format!("{rel}:{}: a path id parsed by hand: {line}", n + 1));
        }
    }
    // A handler that takes a path segment as text and parses it itself.
    for handler in text.split("fn ").skip(1) {
        let text_path = handler.contains("Path<String>") || handler.contains("Path<(String");
        if text_path && (handler.contains(".parse::<") || handler.contains(".parse()")) {
            let name = handler.split('(').next().unwrap_or("");
            out.push(format!(
                "{rel}: {name} parses a Path<String>: take an Id<Kind>"
            ));
        }
    }
    out
}

#[test]
fn api_handlers_read_queries_and_path_ids_through_their_typed_extractors() {
    let api = root().join("src/api");
    let mut files = Vec::new();
    rust_files(&api, &mut files);
    assert!(files.len() > 20, "src/api was walked");
    let mut problems = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(&api).expect("under src/api");
        let text = std::fs::read_to_string(file).expect("read source");
        problems.extend(hand_read_inputs(&rel.to_string_lossy(), &text));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_api_input_fence_catches_hand_loops_and_hand_parsed_ids() {
    let caught = |text: &str| !hand_read_inputs("x.rs", text).is_empty();
    for text in [
        "    for (key, value) in query::pairs(raw.as_deref())? {",
        "    let p = pairs(Some(raw))?;",
        "    for (k, v) in raw.split('&') {",
        "    let v: Vec<(String, String)> = serde_urlencoded::from_str(q)?;",
        "pub async fn get(Path(id): Path<String>) {\n    let id = parse_id(\"user\", &id)?;\n}",
        "pub async fn get(Path(id): Path<String>) {\n    let id: i64 = id.parse().ok()?;\n}",
        "pub async fn v(Path((a, b)): Path<(String, String)>) {\n    b.parse::<i64>()\n}",
    ] {
        assert!(caught(text), "{text}");
    }
    assert!(!caught(
        "pub async fn get(Path(cluster): Path<String>) {\n    fetch(&cluster).await\n}"
    ));
    assert!(!caught("pub async fn get(Id(id, _): Id<ids::User>) {}"));
    assert!(hand_read_inputs("query/mod.rs", "fn pairs(q: &str) {}").is_empty());
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

/// What only `src/cron.rs` may name: croner and chrono-tz, their parsers and searches.
const CRON_WORDS: &[&str] = &[
    "croner",
    "chrono_tz",
    "CronParser",
    "Cron::from_str",
    ".parse_cron",
    "find_next_occurrence",
    "find_previous_occurrence",
];

/// A second cron reader on `line`, if any.
fn cron_reader(line: &str) -> Option<&'static str> {
    CRON_WORDS.iter().copied().find(|w| line.contains(w))
}

/// A hand-rolled growing wait: the last of `lines` (code lines in a row) multiplies or
/// shifts, and it or the three before it speak of a backoff, retry or delay.
fn growing_wait(lines: &[&str]) -> bool {
    let Some(line) = lines.last() else {
        return false;
    };
    let grows = [
        "* 2",
        "*= 2",
        "*2",
        "<<",
        ".pow(",
        "powi(",
        "saturating_mul(",
        "checked_mul(",
        "checked_shl",
        "mul_f",
    ]
    .iter()
    .any(|w| line.contains(w));
    let context = lines[lines.len().saturating_sub(4)..]
        .join(" ")
        .to_ascii_lowercase();
    grows
        && ["backoff", "retry", "delay"]
            .iter()
            .any(|w| context.contains(w))
}

/// A hand-rolled secret mask on `line`: the mask as a literal, or a `Debug` that spells it.
fn hand_mask(line: &str) -> bool {
    line.contains("\"***\"") || line.contains("(***)")
}

/// Lines of `text` before its `#[cfg(test)]` module: tests may spell out what they check.
fn before_tests(text: &str) -> impl Iterator<Item = (usize, &str)> {
    code_lines(text).take_while(|(_, l)| l.trim() != "#[cfg(test)]")
}

#[test]
fn one_cron_reader_one_backoff_and_one_secret_mask() {
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let mut problems = Vec::new();
    for file in &files {
        let module = module_of(file).unwrap_or_default();
        if file.to_string_lossy().ends_with("_tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(file).expect("read source");
        let lines: Vec<(usize, &str)> = before_tests(&text).collect();
        for (i, &(n, line)) in lines.iter().enumerate() {
            let at = format!("{}:{}", file.display(), n + 1);
            if let Some(w) = cron_reader(line).filter(|_| module != "cron") {
                problems.push(format!("{at}: `{w}` outside crate::cron: {line}"));
            }
            let window: Vec<&str> = lines[..=i].iter().map(|(_, l)| *l).collect();
            if growing_wait(&window) && module != "backoff" {
                problems.push(format!(
                    "{at}: a growing wait outside crate::backoff: {line}"
                ));
            }
            if hand_mask(line) && module != "secret" {
                problems.push(format!(
                    "{at}: a hand-rolled mask (use crate::secret): {line}"
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "concepts out of their modules:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_concept_fences_catch_a_second_cron_backoff_or_mask() {
    for line in [
        "use croner::Cron;",
        "let c = Cron::from_str(expr)?;",
        "let tz: chrono_tz::Tz = name.parse()?;",
        "cron.find_next_occurrence(&t, false)",
    ] {
        assert!(cron_reader(line).is_some(), "{line}");
    }
    assert!(cron_reader("let c = Cron::parse(expr)?;").is_none());
    for line in [
        "backoff = (backoff * 2).min(BACKOFF_MAX);",
        "backoff *= 2;",
        "let retry_ms = base.saturating_mul(1 << exp);",
        "delay = delay.mul_f64(1.5);",
        "let wait_delay = base * 2u32.pow(n);",
    ] {
        assert!(growing_wait(&[line]), "{line}");
    }
    // The shift a few lines below the function that names it.
    let notify = [
        "pub fn backoff_ms(base_ms: u64, attempts: i64) -> i64 {",
        "    let exp = (attempts - 1).clamp(0, 20) as u32;",
        "    (base_ms as i64)",
        "        .saturating_mul(1 << exp)",
    ];
    assert!(growing_wait(&notify));
    assert!(!growing_wait(&[
        "tokio::time::sleep(backoff.next_delay()).await;"
    ]));
    assert!(!growing_wait(&["let timeout = self.timeout * 2;"]));
    assert!(!growing_wait(&[
        "// retry",
        "a",
        "b",
        "c",
        "let big = 1 << 20;"
    ]));
    assert!(hand_mask(r#"f.write_str("Secrets(***)")"#));
    assert!(hand_mask(r#"out = out.replace(v, "***");"#));
    assert!(!hand_mask("out = out.replace(v, MASK);"));
}

/// The agent's files, each a node (`decide` and any other folder one node): node → the
/// nodes it names (`super::x`, `crate::agent::x`, `self::x` from a folder's `mod.rs`).
fn agent_graph() -> BTreeMap<String, BTreeSet<String>> {
    let agent = root().join("src/agent");
    let mut files = Vec::new();
    rust_files(&agent, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let Some(path) = module_path(&agent, file) else {
            continue;
        };
        if path.is_empty() {
            continue; // agent/mod.rs: the root only declares and re-exports.
        }
        let text = std::fs::read_to_string(file).expect("read source");
        let code: Vec<&str> = code_lines(&text).map(|(_, l)| l).collect();
        let code = code.join("\n");
        let node = path[0].clone();
        let targets = graph.entry(node.clone()).or_default();
        for to in agent_names(&code, &path) {
            if to != node {
                targets.insert(to);
            }
        }
    }
    graph
}

/// The module path of `file` below `src/agent`: `run.rs` → [run], `decide/mod.rs` →
/// [decide], `decide/windows.rs` → [decide, windows], `mod.rs` → [].
fn module_path(agent: &Path, file: &Path) -> Option<Vec<String>> {
    let rel = file.strip_prefix(agent).ok()?;
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| {
            c.as_os_str()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_string()
        })
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    Some(parts)
}

/// The agent's top-level modules that `code` (of the module at `path`) names: a file's
/// `self` is its own path and `super` its parent's (`decide/windows.rs`: `decide`).
fn agent_names(code: &str, path: &[String]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for start in ["crate::agent::", "super::", "self::"] {
        for (i, _) in code.match_indices(start) {
            let before = &code[..i];
            if before.ends_with("::") || before.ends_with(|c: char| c.is_alphanumeric() || c == '_')
            {
                continue; // inside a longer path (`super::super::`) or a longer name
            }
            let mut rest = &code[i..];
            let base: &[String] = if let Some(t) = rest.strip_prefix("crate::agent::") {
                rest = t;
                &[]
            } else if let Some(t) = rest.strip_prefix("self::") {
                rest = t;
                path
            } else {
                let mut up = 0;
                while let Some(t) = rest.strip_prefix("super::") {
                    up += 1;
                    rest = t;
                }
                &path[..path.len().saturating_sub(up)]
            };
            match base.first() {
                Some(top) => {
                    out.insert(top.clone());
                }
                None => out.extend(named_modules(rest)),
            }
        }
    }
    out
}

/// A cycle in `graph`, as its nodes in order, if there is one.
fn cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        m: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == m) {
            let mut found = path[i..].to_vec();
            found.push(m.to_string());
            return Some(found);
        }
        if !done.insert(m.to_string()) {
            return None;
        }
        path.push(m.to_string());
        for to in graph.get(m).into_iter().flatten() {
            if let Some(c) = visit(to, graph, path, done) {
                return Some(c);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|m| visit(m, graph, &mut Vec::new(), &mut done))
}

#[test]
fn the_agents_files_name_each_other_without_a_cycle() {
    let graph = agent_graph();
    assert!(graph.len() > 10, "the agent's files were read: {graph:?}");
    assert!(
        graph.get("run").is_some_and(|t| t.contains("outbox")),
        "the graph holds the agent's arrows: {graph:?}"
    );
    if let Some(c) = cycle(&graph) {
        panic!("the agent's files form a cycle: {}", c.join(" -> "));
    }
}

#[test]
fn the_agent_cycle_fence_reads_paths_and_finds_cycles() {
    let p = |s: &[&str]| -> Vec<String> { s.iter().map(|x| x.to_string()).collect() };
    let names = |code: &str, path: &[&str]| -> Vec<String> {
        agent_names(code, &p(path)).into_iter().collect()
    };
    assert_eq!(names("use super::run::Agent;", &["pass"]), ["run"]);
    assert_eq!(
        names("use super::{hub, state::Phase};", &["pass"]),
        ["hub", "state"]
    );
    assert_eq!(
        names("use super::Finding;", &["decide", "watch"]),
        ["decide"]
    );
    assert_eq!(
        names("use super::super::state::Step;", &["decide", "watch"]),
        ["state"]
    );
    assert_eq!(
        names("use crate::agent::outbox::Outbox;", &["decide"]),
        ["outbox"]
    );
    assert_eq!(names("use super::state::Phase;", &["decide"]), ["state"]);
    assert_eq!(names("use self::x::Y;", &["decide"]), ["decide"]);
    let g = |edges: &[(&str, &str)]| {
        let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in edges {
            g.entry(a.to_string()).or_default().insert(b.to_string());
        }
        g
    };
    let three = g(&[("health", "pass"), ("pass", "run"), ("run", "health")]);
    assert!(cycle(&three).is_some_and(|c| c.len() == 4));
    assert!(cycle(&g(&[("pass", "run"), ("run", "state"), ("pass", "state")])).is_none());
}
