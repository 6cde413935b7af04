//! `*` globs for selector and team patterns (`shop-*`, `*-prod`, `*`).

/// True when `value` matches `pattern`, where `*` matches any run of characters.
pub fn glob_match(pattern: &str, value: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == value;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !value.starts_with(first) || value.len() < first.len() + last.len() || !value.ends_with(last)
    {
        return false;
    }
    let mut rest = &value[first.len()..value.len() - last.len()];
    for middle in &parts[1..parts.len() - 1] {
        match rest.find(middle) {
            Some(i) => rest = &rest[i + middle.len()..],
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    #[test]
    fn globs_match_prefixes_suffixes_and_middles() {
        for (p, v) in [
            ("*", "x"),
            ("shop-*", "shop-eu"),
            ("*-prod", "a-prod"),
            ("a*b*c", "axxbyyc"),
            ("exact", "exact"),
        ] {
            assert!(glob_match(p, v), "{p} {v}");
        }
        for (p, v) in [
            ("shop-*", "shops"),
            ("*-prod", "prod"),
            ("a*b*c", "acb"),
            ("exact", "exactly"),
            ("ab*ba", "aba"),
        ] {
            assert!(!glob_match(p, v), "{p} {v}");
        }
    }
}
