//! Kubernetes resource quantities as they appear in event `from`/`to` values.

/// True for a valid Kubernetes quantity such as `250m`, `1.5`, `384Mi`, `1e3`, `2G`.
pub fn is_quantity(s: &str) -> bool {
    let s = s.strip_prefix(['+', '-']).unwrap_or(s);
    let digits_end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, suffix) = s.split_at(digits_end);
    if number.is_empty() || number == "." || number.matches('.').count() > 1 {
        return false;
    }
    const SUFFIXES: &[&str] = &[
        "", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei",
    ];
    if SUFFIXES.contains(&suffix) {
        return true;
    }
    let Some(exp) = suffix.strip_prefix(['e', 'E']) else {
        return false;
    };
    let exp = exp.strip_prefix(['+', '-']).unwrap_or(exp);
    !exp.is_empty() && exp.len() <= 3 && exp.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::is_quantity;

    #[test]
    fn kubernetes_quantities_are_accepted_and_junk_refused() {
        for ok in [
            "250m", "1", "1.5", "384Mi", "1Gi", "2G", "1e3", "0.5", ".5", "100k",
        ] {
            assert!(is_quantity(ok), "{ok}");
        }
        for bad in ["", "Mi", "1.2.3", "12 Mi", "1KB", "1e", "abc", "1mi", "."] {
            assert!(!is_quantity(bad), "{bad}");
        }
    }
}
