//! Namespace patterns of teams: a cluster and a namespace, each a DNS-label-like name in
//! which `*` matches any run of characters (`prod-*`, `payments-*`, `*`).

/// Why a pattern was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PatternError {
    #[error("must be 1 to 63 characters of a-z, 0-9, '-', '.' or the glob '*'")]
    Invalid,
}

/// Checks one pattern half (cluster or namespace).
pub fn validate(p: &str) -> Result<(), PatternError> {
    let ok = !p.is_empty()
        && p.len() <= 63
        && p.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'.' | b'*')
        });
    if ok {
        Ok(())
    } else {
        Err(PatternError::Invalid)
    }
}

/// True when `name` matches the glob `pattern` (`*` = any run, possibly empty).
pub fn matches(pattern: &str, name: &str) -> bool {
    let (p, n) = (pattern.as_bytes(), name.as_bytes());
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, ni));
            pi += 1;
        } else if pi < p.len() && p[pi] == n[ni] {
            pi += 1;
            ni += 1;
        } else if let Some((sp, sn)) = star {
            pi = sp + 1;
            ni = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|b| *b == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_runs_and_exact_names() {
        for (p, n) in [
            ("*", "x"),
            ("prod-*", "prod-eu"),
            ("a*b*c", "aXbYc"),
            ("shop", "shop"),
            ("*", ""),
        ] {
            assert!(matches(p, n), "{p} ~ {n}");
        }
        for (p, n) in [("prod-*", "staging"), ("shop", "shopping"), ("a*c", "ab")] {
            assert!(!matches(p, n), "{p} !~ {n}");
        }
    }

    #[test]
    fn patterns_are_dns_like_with_stars() {
        assert!(validate("prod-*").is_ok());
        for bad in ["", "Prod", "a b", "x?", "[a]", &"a".repeat(64)] {
            assert!(validate(bad).is_err(), "{bad}");
        }
    }
}
