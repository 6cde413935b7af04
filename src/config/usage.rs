//! `[usage]`: the hub's embedded usage store (`usage.db` beside `kerf.db`), which keeps
//! what agents and Prometheus remote writers send to `POST /v1/clusters/{cluster}/write`
//! for clusters without a Prometheus datasource.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::ConfigError;

/// `[usage]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UsageConfig {
    /// How long samples are kept, e.g. `14d` (1d to 400d): at least the longest
    /// analysis window in use; older samples are refused and pruned.
    pub retention: String,
    /// Series one cluster may have (1,000 to 10,000,000); a new series past it is
    /// refused, counted, and named in the cluster's readiness.
    pub max_series_per_cluster: usize,
    /// Largest remote-write body in bytes, as sent (snappy-compressed; 64 KiB to 64 MiB).
    /// Its uncompressed form may be 8 times as large.
    pub max_write_bytes: usize,
}

impl Default for UsageConfig {
    fn default() -> Self {
        UsageConfig {
            retention: "14d".into(),
            max_series_per_cluster: 200_000,
            max_write_bytes: 16 * 1024 * 1024,
        }
    }
}

impl UsageConfig {
    /// `retention`, parsed (checked by [`UsageConfig::validate`]).
    pub fn retention(&self) -> Result<Duration, ConfigError> {
        super::bounds::duration("usage.retention", &self.retention, "\"14d\"")
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        let day = Duration::from_secs(24 * 3600);
        let retention = self.retention()?;
        let checks = [
            (
                (day..=day * 400).contains(&retention),
                "usage.retention must be between 1d and 400d",
            ),
            (
                (1_000..=10_000_000).contains(&self.max_series_per_cluster),
                "usage.max_series_per_cluster must be between 1000 and 10000000",
            ),
            (
                (64 * 1024..=64 * 1024 * 1024).contains(&self.max_write_bytes),
                "usage.max_write_bytes must be between 65536 and 67108864",
            ),
        ];
        super::bounds::first_failed(&checks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_hold_two_weeks_and_bad_values_name_their_key() {
        let c = UsageConfig::default();
        assert_eq!(c.retention().unwrap(), Duration::from_secs(14 * 24 * 3600));
        assert!(c.validate().is_ok());
        let bad = |f: fn(&mut UsageConfig)| {
            let mut c = UsageConfig::default();
            f(&mut c);
            c.validate().unwrap_err().to_string()
        };
        assert!(bad(|c| c.retention = "a while".into()).contains("usage.retention \"a while\""));
        assert!(bad(|c| c.retention = "1h".into()).contains("usage.retention"));
        assert!(bad(|c| c.max_series_per_cluster = 5).contains("max_series_per_cluster"));
        assert!(bad(|c| c.max_write_bytes = 10).contains("max_write_bytes"));
    }
}
