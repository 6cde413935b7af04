//! Kubernetes resource quantities (`250m`, `1.5`, `384Mi`, `1e3`, `2G`): what is one,
//! and the number it stands for. The one suffix table: the cluster model parses the
//! values it reads with it, and the events contract validates and prices event values.

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

/// The number a valid quantity stands for, in base units (cores, bytes): `250m` is
/// 0.25, `384Mi` is 402,653,184. `None` for anything [`is_quantity`] refuses.
pub fn value(s: &str) -> Option<f64> {
    if !is_quantity(s) {
        return None;
    }
    let (sign, s) = match s.strip_prefix('-') {
        Some(rest) => (-1.0, rest),
        None => (1.0, s.strip_prefix('+').unwrap_or(s)),
    };
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (number, suffix) = s.split_at(end);
    let n: f64 = number.parse().ok()?;
    let scale = match suffix {
        "" => 1.0,
        "n" => 1e-9,
        "u" => 1e-6,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024f64,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        exp => 10f64.powi(exp[1..].parse().ok()?),
    };
    Some(sign * n * scale)
}

#[cfg(test)]
mod tests {
    use super::{is_quantity, value};

    #[test]
    fn a_quantity_stands_for_its_number_in_base_units() {
        for (q, v) in [
            ("250m", 0.25),
            ("2", 2.0),
            ("1.5", 1.5),
            ("384Mi", 402_653_184.0),
            ("1Gi", 1_073_741_824.0),
            ("2G", 2e9),
            ("1e3", 1000.0),
            ("-100m", -0.1),
        ] {
            let got = value(q).expect(q);
            assert!((got - v).abs() < 1e-9 * v.abs().max(1.0), "{q}: {got}");
        }
        assert_eq!(value("1KB"), None);
    }

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
