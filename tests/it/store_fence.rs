//! The store has one way in: units of work. Callers take a `store::Read` from
//! `Store::reading` or a `store::Tx` from `Store::writing` / `Store::write_audited` and
//! call the queries as their methods, which live in the table files. No async wrapper per
//! query, no forwarding layer in `tx.rs`, no query taking a bare connection from outside
//! the store, and one `Page<T>` for every paged answer.

use std::path::Path;

use crate::support::source_tree::{code_lines, root, rust_files};

/// The doors: the only `pub async fn` of the store, each with the file it lives in.
const DOORS: &[(&str, &str)] = &[
    // The readiness probe's schema check: no query of a table, and no unit of work.
    ("src/store/mod.rs", "is_current"),
    ("src/store/tx.rs", "reading"),
    ("src/store/tx.rs", "writing"),
    ("src/store/tx.rs", "write_audited"),
    // The usage store's (issue 30): appends and prunes carry the open chunks' cache.
    ("src/store/usage/mod.rs", "append"),
    ("src/store/usage/mod.rs", "prune"),
    ("src/store/usage/mod.rs", "reading"),
    ("src/store/usage/mod.rs", "backup_to"),
];

/// The store's functions on a bare connection that stay reachable from outside it, and
/// why: they run before (or without) a `Store`.
const CONNECTION_FNS: &[(&str, &str)] = &[
    (
        "open_connection",
        "`kerf migrate --status` reads a database it must not migrate",
    ),
    ("status", "the migration status of that connection"),
];

/// `tx.rs` holds the doors and the two types; a forwarding layer would make it grow.
const TX_RS_MAX_LINES: usize = 150;

/// The name of each `pub async fn` declared in `code`.
fn pub_async_fns(code: &str) -> Vec<String> {
    code_lines(code)
        .filter_map(|(_, l)| l.trim_start().strip_prefix("pub async fn "))
        .map(|rest| {
            rest.chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect()
        })
        .collect()
}

/// Each `pub fn` of `code` (crate-visible, not `pub(in …)`/`pub(super)`) whose first
/// parameter is a rusqlite connection or transaction: a query callers could reach around
/// the units of work. A signature may span lines.
fn connection_fns(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (at, _) in code.match_indices("pub fn ") {
        let line_start = code[..at].rfind('\n').map_or(0, |i| i + 1);
        if code[line_start..at].trim_start().starts_with("//") {
            continue;
        }
        let rest = &code[at + "pub fn ".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let Some(open) = rest.find('(') else { continue };
        let params = &rest[open + 1..];
        let first = params.split([',', ')']).next().unwrap_or("");
        let bare = ["Connection", "Transaction"]
            .iter()
            .any(|t| first.contains(&format!("&{t}")) || first.contains(&format!("::{t}")));
        if bare && !first.trim_start().starts_with("&self") {
            out.push(name);
        }
    }
    out
}

/// Each `Result<(Vec<…>, Option<…>)>` or `Result<(Vec<…>, bool)>` of `code`: a page
/// answered as a tuple (items and a cursor, or items and whether more follow), by the
/// line it is on.
fn paged_tuples(code: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for (at, _) in code.match_indices("Result<(Vec<") {
        let body = &code[at + "Result<(".len()..];
        let mut depth = 0i32;
        let second = body.char_indices().find_map(|(i, c)| {
            match c {
                '<' | '(' => depth += 1,
                '>' | ')' => depth -= 1,
                ',' if depth == 0 => return Some(body[i + 1..].trim_start()),
                _ => {}
            }
            None
        });
        if second.is_some_and(|t| t.starts_with("Option<") || t.starts_with("bool)")) {
            out.push(code[..at].matches('\n').count() + 1);
        }
    }
    out
}

/// Each `struct …Page` of `code` other than the one `Page`.
fn page_structs(code: &str) -> Vec<String> {
    code_lines(code)
        .filter_map(|(_, l)| {
            let l = l.trim_start();
            let rest = l
                .strip_prefix("pub struct ")
                .or_else(|| l.strip_prefix("struct "))?;
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            (name.ends_with("Page") && name != "Page").then_some(name)
        })
        .collect()
}

fn store_files() -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    rust_files(&root().join("src/store"), &mut files);
    files.sort();
    files
}

fn rel(file: &Path) -> String {
    file.strip_prefix(root())
        .expect("in the repo")
        .display()
        .to_string()
}

#[test]
fn the_store_has_one_way_in_units_of_work_with_the_queries_as_methods() {
    let files = store_files();
    assert!(
        files.len() > 20,
        "src/store was read: {} files",
        files.len()
    );
    let mut problems = Vec::new();
    let mut doors_seen = Vec::new();
    for file in &files {
        let code = std::fs::read_to_string(file).expect("read");
        let rel = rel(file);
        for name in pub_async_fns(&code) {
            if DOORS.contains(&(rel.as_str(), name.as_str())) {
                doors_seen.push(name);
            } else {
                problems.push(format!(
                    "{rel}: `pub async fn {name}` is a second way in; make it a method of \
                     `Read` or `Tx` and call it inside `store.reading`/`store.writing`"
                ));
            }
        }
        for name in connection_fns(&code) {
            if !CONNECTION_FNS.iter().any(|(n, _)| *n == name) {
                problems.push(format!(
                    "{rel}: `pub fn {name}` takes a bare connection; make it a method of \
                     `Read` or `Tx` (or private to the store)"
                ));
            }
        }
        for line in paged_tuples(&code) {
            problems.push(format!(
                "{rel}:{line}: a page answered as a tuple; return `Page<T>`"
            ));
        }
        for name in page_structs(&code) {
            problems.push(format!(
                "{rel}: `{name}` is a second page type; use `Page<T>`"
            ));
        }
    }
    doors_seen.sort();
    assert_eq!(
        doors_seen,
        [
            "append",
            "backup_to",
            "is_current",
            "prune",
            "reading",
            "reading",
            "write_audited",
            "writing"
        ],
        "the doors were found where the fence expects them"
    );
    let tx_lines = std::fs::read_to_string(root().join("src/store/tx.rs"))
        .expect("tx.rs")
        .lines()
        .count();
    if tx_lines > TX_RS_MAX_LINES {
        problems.push(format!(
            "src/store/tx.rs has {tx_lines} lines (at most {TX_RS_MAX_LINES}): the queries \
             belong in their table files, not in a forwarding layer"
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_store_fence_catches_wrappers_bare_connections_page_types_and_page_tuples() {
    let wrapper = "impl Store {\n    pub async fn list_runs(&self) -> Result<(), E> {\n";
    assert_eq!(pub_async_fns(wrapper), ["list_runs"]);
    assert!(pub_async_fns("    // pub async fn in_a_comment()\n").is_empty());

    let free = "pub fn get_cluster(\n    conn: &Connection,\n    name: &str,\n) -> R {";
    assert_eq!(connection_fns(free), ["get_cluster"]);
    let qualified = "pub fn prune(tx: &rusqlite::Transaction<'_>, n: i64) {";
    assert_eq!(connection_fns(qualified), ["prune"]);
    let method = "    pub fn cluster(&self, name: &str) -> R {";
    assert!(connection_fns(method).is_empty());
    let private = "pub(in crate::store) fn get(conn: &Connection) {}\nfn h(c: &Connection) {}";
    assert!(connection_fns(private).is_empty());

    let tuple = ") -> Result<(Vec<DeliveryRecord>, Option<i64>), StoreError> {";
    assert_eq!(paged_tuples(tuple), [1]);
    assert_eq!(paged_tuples("x\n) -> Result<(Vec<Row>, bool), E> {"), [2]);
    let pair = ") -> Result<(Vec<AuditRow>, Vec<RunRow>), StoreError> {";
    assert!(paged_tuples(pair).is_empty(), "two lists are no page");

    let pages = "pub struct AuditPage {\n}\npub struct Page<T, C = i64> {\n}\nstruct P;";
    assert_eq!(page_structs(pages), ["AuditPage"]);
}
