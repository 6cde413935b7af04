//! The repository's own source as the fence tests read it: its root, its Rust files,
//! their code lines (comments left out), the top-level module a file of `src` is in and
//! the modules a `crate::` path names.

use std::path::{Path, PathBuf};

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
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
pub fn code_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim_start().starts_with("//"))
}

/// The top-level module a file of `src` belongs to (`None` for lib.rs and main.rs).
pub fn module_of(file: &Path) -> Option<String> {
    let rel = file.strip_prefix(root().join("src")).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    let name = first.trim_end_matches(".rs");
    (name != "lib" && name != "main").then(|| name.to_string())
}

/// The top-level modules named right after `crate::` in `rest`: `x` of `crate::x::…`,
/// or the first name of each item of a group, `a` and `b` of `crate::{a::X, b::{Y, Z}}`
/// (a group may span lines).
pub fn named_modules(rest: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let Some(group) = rest.strip_prefix('{') else {
        return vec![ident(rest)]
            .into_iter()
            .filter(|n| !n.is_empty())
            .collect();
    };
    let mut items = Vec::new();
    let (mut depth, mut item_start) = (0usize, 0usize);
    for (at, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(&group[item_start..at]);
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&group[item_start..at]);
                item_start = at + 1;
            }
            _ => {}
        }
    }
    items
        .into_iter()
        .map(ident)
        .filter(|n| !n.is_empty() && n != "self")
        .collect()
}
