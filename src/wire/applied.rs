//! How a suggested value is applied: CPU in whole millicores and memory in whole MiB,
//! rounded up, at least one of each. The agent applies by this rule, so the hub prices,
//! shows and exports recommendations by it too: one number everywhere.

const MIB: f64 = 1024.0 * 1024.0;

/// Millicores as applied.
pub fn cpu_millis(millis: f64) -> u64 {
    millis.ceil().max(1.0) as u64
}

/// Whole MiB as applied.
pub fn memory_mib(bytes: f64) -> u64 {
    (bytes / MIB).ceil().max(1.0) as u64
}

/// Memory bytes as applied (whole MiB).
pub fn memory_bytes(bytes: f64) -> u64 {
    memory_mib(bytes) * MIB as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_up_to_whole_millicores_and_mib() {
        assert_eq!(cpu_millis(1144.3), 1145);
        assert_eq!(cpu_millis(0.2), 1);
        assert_eq!(memory_mib(987_654_321.0), 942);
        assert_eq!(memory_bytes(1.0), 1 << 20);
    }
}
