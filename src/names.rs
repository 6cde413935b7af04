//! What names may be, in one place: clusters (DNS labels, safe in URLs, labels and file
//! names), users, teams, API tokens, notification channels and rules, display names.
//! The API, the command line and policy validation all check names here, so they
//! cannot drift; no name takes a control character. Lengths count characters.

/// Why a name was refused: a sentence naming the rule.
pub type NameError = &'static str;

/// Cluster names are DNS labels: 1 to 63 lower-case letters, digits or '-', starting
/// and ending with a letter or digit.
pub fn cluster(name: &str) -> Result<(), NameError> {
    let b = name.as_bytes();
    let ok = !b.is_empty()
        && b.len() <= 63
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-';
    ok.then_some(()).ok_or(
        "must be 1 to 63 lower-case letters, digits or '-', starting and ending with a letter or digit",
    )
}

/// Usernames: 1 to 64 letters, digits, `.`, `_`, `-` or `@`.
pub fn user(name: &str) -> Result<(), NameError> {
    let ok = !name.is_empty()
        && name.chars().count() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '@'));
    ok.then_some(())
        .ok_or("must be 1 to 64 letters, digits, '.', '_', '-' or '@'")
}

/// Team names: 1 to 63 letters, digits, `-`, `_` or `.`.
pub fn team(name: &str) -> Result<(), NameError> {
    let ok = !name.is_empty()
        && name.chars().count() <= 63
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    ok.then_some(())
        .ok_or("must be 1 to 63 letters, digits, '-', '_' or '.'")
}

/// API token names: a [`free`] name of at most 100 characters.
pub fn token(name: &str) -> Result<(), String> {
    free(name, 100)
}

/// Names people choose freely (API tokens, notification channels and rules), checked
/// before they are trimmed: 1 to `max` characters once trimmed, and no control
/// characters anywhere (see [`text`]).
pub fn free(name: &str, max: usize) -> Result<(), String> {
    let n = name.trim().chars().count();
    if !(1..=max).contains(&n) {
        return Err(format!("must be 1 to {max} characters"));
    }
    text(name, false).map_err(str::to_string)
}

/// Display names (of users and clusters): empty or up to `max` characters, no control
/// characters.
pub fn display(name: &str, max: usize) -> Result<(), String> {
    if name.chars().count() > max {
        return Err(format!("must be at most {max} characters"));
    }
    text(name, false).map_err(str::to_string)
}

/// Text people read in logs, terminals, CSV files and messages (display names, label
/// values, descriptions): no control characters, which could forge log lines or
/// terminal output; `multiline` text may hold line breaks and tabs.
pub fn text(s: &str, multiline: bool) -> Result<(), NameError> {
    let allowed = |c: char| multiline && matches!(c, '\n' | '\t');
    if s.chars().any(|c| c.is_control() && !allowed(c)) {
        return Err(if multiline {
            "must not contain control characters other than line breaks and tabs"
        } else {
            "must not contain control characters"
        });
    }
    Ok(())
}

/// Cluster label keys: 1 to 63 letters, digits, '-', '_', '.' or '/', starting and
/// ending with a letter or digit (the characters of a Kubernetes label key).
pub fn label_key(key: &str) -> Result<(), NameError> {
    let b = key.as_bytes();
    let ok = !b.is_empty()
        && b.len() <= 63
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.' | b'/'))
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric();
    ok.then_some(()).ok_or(
        "must be 1 to 63 letters, digits, '-', '_', '.' or '/', starting and ending with a letter or digit",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_names_are_dns_labels() {
        for ok in ["prod", "eu-west-1", "a", "x9"] {
            assert!(cluster(ok).is_ok(), "{ok}");
        }
        for bad in ["", "-a", "a-", "Prod", "a_b", &"a".repeat(64)] {
            assert!(cluster(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn token_names_count_characters_not_bytes() {
        assert!(token(&"é".repeat(100)).is_ok());
        assert!(token(&"é".repeat(101)).is_err());
        assert!(token("   ").is_err());
    }

    #[test]
    fn text_refuses_control_characters_and_label_keys_take_their_alphabet() {
        assert!(text("prod \u{e9}t\u{e9}", false).is_ok());
        assert!(text("a\nb", false).is_err());
        assert!(text("a\nb\tc", true).is_ok());
        for bad in ["\u{1b}[31mred", "a\rb", "\u{7}", "x\u{85}y"] {
            assert!(text(bad, true).is_err(), "{bad:?}");
        }
        assert!(token("ops\n2026-01-01 INFO forged").is_err());
        for ok in ["env", "kerf.dev/tier", "a_b-c"] {
            assert!(label_key(ok).is_ok(), "{ok}");
        }
        for bad in ["", "-a", "a b", "a\u{1b}", "\u{e9}", &"a".repeat(64)] {
            assert!(label_key(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn no_name_check_takes_a_control_character() {
        type Check = fn(&str) -> bool;
        let checks: [(&str, Check); 7] = [
            ("cluster", |n| cluster(n).is_ok()),
            ("user", |n| user(n).is_ok()),
            ("team", |n| team(n).is_ok()),
            ("token", |n| token(n).is_ok()),
            ("free", |n| free(n, 100).is_ok()),
            ("display", |n| display(n, 100).is_ok()),
            ("label key", |n| label_key(n).is_ok()),
        ];
        for (what, ok) in checks {
            assert!(ok("ops1"), "{what} takes a plain name");
            for c in ['\r', '\n', '\0', '\t', '\u{1b}', '\u{7f}', '\u{85}'] {
                assert!(!ok(&format!("ops{c}1")), "{what} takes {c:?}");
            }
        }
        assert_eq!(free(" ", 100).unwrap_err(), "must be 1 to 100 characters");
        assert!(free("ops\n", 100).is_err(), "checked before trimming");
        assert!(display("", 100).is_ok());
        assert!(display(&"é".repeat(101), 100).is_err());
    }

    #[test]
    fn user_and_team_names_take_their_alphabets() {
        assert!(user("ann.lee@example").is_ok());
        assert!(user("ann lee").is_err());
        assert!(team("platform_team-1.x").is_ok());
        assert!(team("a/b").is_err());
    }
}
