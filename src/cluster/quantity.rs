//! Kubernetes quantities of CPU (to millicores) and memory (to bytes), both ways.
//! Parsing rounds up, as the API server does when it canonicalizes a value finer than
//! its resolution (`0.1m` of CPU is stored as `1m`).

/// Parses a quantity (`"250m"`, `"1.5"`, `"2Gi"`, `"1e3"`, `"128M"`, read by
/// `crate::quantity`) scaled by `unit_scale` (1000 for millicores, 1 for bytes), rounded
/// up to a whole number.
fn parse(text: &str, unit_scale: f64) -> Option<u64> {
    let v = crate::quantity::value(text.trim())?;
    if !v.is_finite() || v < 0.0 {
        return None;
    }
    scaled(v * unit_scale)
}

fn scaled(v: f64) -> Option<u64> {
    // Guard against 0.1 * 1000 = 100.00000000000001 rounding up to 101.
    let rounded = v.round();
    let whole = if (v - rounded).abs() < 1e-6 {
        rounded
    } else {
        v.ceil()
    };
    (whole <= u64::MAX as f64).then_some(whole as u64)
}

/// CPU quantity → millicores.
pub fn cpu_millis(text: &str) -> Option<u64> {
    parse(text, 1000.0)
}

/// Memory quantity → bytes.
pub fn memory_bytes(text: &str) -> Option<u64> {
    parse(text, 1.0)
}

/// Millicores → the shortest exact quantity (`"2"`, `"250m"`).
pub fn format_cpu(millis: u64) -> String {
    if millis.is_multiple_of(1000) {
        format!("{}", millis / 1000)
    } else {
        format!("{millis}m")
    }
}

/// Bytes → the shortest exact binary quantity (`"512Mi"`, `"1Gi"`, `"1000"`).
pub fn format_memory(bytes: u64) -> String {
    const UNITS: [(&str, u64); 4] = [
        ("Ti", 1 << 40),
        ("Gi", 1 << 30),
        ("Mi", 1 << 20),
        ("Ki", 1 << 10),
    ];
    for (suffix, size) in UNITS {
        if bytes >= size && bytes.is_multiple_of(size) {
            return format!("{}{suffix}", bytes / size);
        }
    }
    bytes.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_quantities_parse_to_millicores() {
        assert_eq!(cpu_millis("250m"), Some(250));
        assert_eq!(cpu_millis("1"), Some(1000));
        assert_eq!(cpu_millis("1.5"), Some(1500));
        assert_eq!(cpu_millis("0.1"), Some(100));
        assert_eq!(cpu_millis("0.0001"), Some(1), "finer than 1m rounds up");
        assert_eq!(cpu_millis("1e3"), Some(1_000_000));
        assert_eq!(cpu_millis("2k"), Some(2_000_000));
        assert_eq!(cpu_millis(""), None);
        assert_eq!(cpu_millis("-1"), None);
        assert_eq!(cpu_millis("1 core"), None);
    }

    #[test]
    fn memory_quantities_parse_to_bytes() {
        assert_eq!(memory_bytes("512Mi"), Some(512 << 20));
        assert_eq!(memory_bytes("1Gi"), Some(1 << 30));
        assert_eq!(memory_bytes("128M"), Some(128_000_000));
        assert_eq!(memory_bytes("1.5Gi"), Some(1536 << 20));
        assert_eq!(memory_bytes("1000"), Some(1000));
        assert_eq!(memory_bytes("1e6"), Some(1_000_000));
        assert_eq!(memory_bytes("12Xi"), None);
    }

    #[test]
    fn formatting_round_trips() {
        for m in [1, 250, 1000, 1500, 64_000] {
            assert_eq!(cpu_millis(&format_cpu(m)), Some(m));
        }
        for b in [1, 1000, 1 << 20, 300 << 20, 1 << 30, (1 << 30) + 1] {
            assert_eq!(memory_bytes(&format_memory(b)), Some(b));
        }
        assert_eq!(format_cpu(2000), "2");
        assert_eq!(format_cpu(250), "250m");
        assert_eq!(format_memory(512 << 20), "512Mi");
        assert_eq!(format_memory(1 << 30), "1Gi");
    }
}
