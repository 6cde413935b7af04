//! A run's state stays typed: no text status, phase or trigger (or phase times,
//! collection figures, errors) in `store::RunRecord` or `RunFilter`, and no
//! `Result<_, String>` in `src/runs` (its failures are `runs::RunFailure`).

use crate::support::source_tree::{root, rust_files};

/// Files of `src/runs` the typed-errors rule leaves alone, and why.
const STRING_ERRORS_ELSEWHERE: &[(&str, &str)] = &[(
    "src/runs/schedule.rs",
    "the schedule's reading of a cron text (owned by `cron`; its error is the settings' message)",
)];

/// The error types of every `Result<T, E>` in `code` (whole text: a type may span
/// lines), with the line each starts on.
fn result_error_types(code: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (at, _) in code.match_indices("Result<") {
        let body = &code[at + "Result<".len()..];
        let mut depth = 0i32;
        let Some(end) = body.char_indices().find_map(|(i, c)| {
            match c {
                '<' | '(' | '[' => depth += 1,
                ')' | ']' => depth -= 1,
                '>' if depth == 0 => return Some(i),
                '>' => depth -= 1,
                _ => {}
            }
            None
        }) else {
            continue;
        };
        // The arguments without a trailing comma; the error type follows the last
        // comma outside brackets.
        let args = body[..end].trim_end().trim_end_matches(',');
        let mut depth = 0i32;
        let comma = args.char_indices().filter_map(|(i, c)| {
            match c {
                '<' | '(' | '[' => depth += 1,
                '>' | ')' | ']' => depth -= 1,
                ',' if depth == 0 => return Some(i),
                _ => {}
            }
            None
        });
        if let Some(comma) = comma.last() {
            let line = code[..at].matches('\n').count() + 1;
            out.push((line, args[comma + 1..].split_whitespace().collect()));
        }
    }
    out
}

/// The fields of `pub struct name { … }` in `code`: (field, its type).
fn struct_fields(code: &str, name: &str) -> Vec<(String, String)> {
    let Some(start) = code.find(&format!("pub struct {name} {{")) else {
        return Vec::new();
    };
    let body = &code[start..];
    let body =
        &body[body.find('{').expect("a brace") + 1..body.find("\n}").expect("the struct ends")];
    body.lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("//") && !l.starts_with('#'))
        .filter_map(|l| {
            let (field, ty) = l.strip_prefix("pub ")?.split_once(':')?;
            Some((
                field.trim().to_string(),
                ty.trim().trim_end_matches(',').to_string(),
            ))
        })
        .collect()
}

/// The run record's fields that must stay typed: a `String` (or `Option<String>`) here is
/// the untyped state this fence keeps out.
const TYPED_RUN_FIELDS: &[&str] = &[
    "status",
    "phase",
    "trigger",
    "phase_ms",
    "collect_stats",
    "errors",
];

fn untyped_run_fields(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for name in ["RunRecord", "RunFilter"] {
        for (field, ty) in struct_fields(code, name) {
            let bare = ty.trim_start_matches("Option<").trim_end_matches('>');
            if TYPED_RUN_FIELDS.contains(&field.as_str()) && bare == "String" {
                out.push(format!("{name}.{field}: {ty}"));
            }
        }
    }
    out
}

#[test]
fn run_state_stays_typed_and_run_errors_are_no_strings() {
    let store = std::fs::read_to_string(root().join("src/store/runs.rs")).expect("runs.rs");
    assert!(
        struct_fields(&store, "RunRecord").len() > 10,
        "RunRecord was read"
    );
    assert!(
        !struct_fields(&store, "RunFilter").is_empty(),
        "RunFilter was read"
    );
    let untyped = untyped_run_fields(&store);
    assert!(
        untyped.is_empty(),
        "src/store/runs.rs keeps run state as text again (use crate::run_vocabulary's types): {untyped:?}"
    );
    let mut files = Vec::new();
    rust_files(&root().join("src/runs"), &mut files);
    let mut problems = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(root()).expect("in the repo");
        if STRING_ERRORS_ELSEWHERE
            .iter()
            .any(|(f, _)| rel.ends_with(f))
        {
            continue;
        }
        let text = std::fs::read_to_string(file).expect("read source");
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
        for (line, error) in result_error_types(&code) {
            if error == "String" || error == "&str" || error == "&'staticstr" {
                problems.push(format!("{}:{line}: Result<_, {error}>", rel.display()));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "src/runs returns text errors again (add a variant to runs::RunFailure or a typed error):\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_run_fence_catches_text_state_and_text_errors() {
    let errors = |code: &str| -> Vec<String> {
        result_error_types(code)
            .into_iter()
            .map(|(_, e)| e)
            .collect()
    };
    assert_eq!(errors("fn f() -> Result<(), String> {"), ["String"]);
    assert_eq!(
        errors("fn f() -> Result<\n    (Vec<u8>, HashMap<String, u8>),\n    String,\n> {"),
        ["String"]
    );
    assert_eq!(
        errors("fn f() -> Result<Vec<String>, RunFailure> {"),
        ["RunFailure"]
    );
    assert_eq!(errors("fn f() -> io::Result<()> {"), Vec::<String>::new());
    let record = "pub struct RunRecord {\n    pub id: String,\n    pub status: String,\n    \
                  pub phase: Phase,\n}\n\npub struct RunFilter {\n    pub trigger: Option<String>,\n}\n";
    assert_eq!(
        untyped_run_fields(record),
        [
            "RunRecord.status: String",
            "RunFilter.trigger: Option<String>"
        ]
    );
    let typed = "pub struct RunRecord {\n    pub id: String,\n    pub status: RunStatus,\n}\n";
    assert!(untyped_run_fields(typed).is_empty());
}
