//! `[collector]`: the agent as collector of usage (all-in-one and agent modes). It
//! scrapes each node's kubelet (`/metrics/cadvisor`) for CPU usage and memory working
//! set, turns its watches into kube-state-metrics-shaped series, and ships both to the
//! hub by Prometheus remote write, buffering (bounded) while the hub is away.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::ConfigError;

/// Whether the agent collects.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CollectorEnabled {
    /// When the hub says the cluster's usage source is its embedded store.
    #[default]
    Auto,
    On,
    Off,
}

/// `[collector]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CollectorConfig {
    /// `auto` (when the hub reads this cluster's usage from its embedded store), `on`
    /// or `off`.
    pub enabled: CollectorEnabled,
    /// Time between two collections, e.g. `30s` (5s to 1h).
    pub interval: String,
    /// Time one node's kubelet may take to answer, e.g. `10s` (at most `interval`).
    pub scrape_timeout: String,
    /// Kubelets scraped at once (1 to 64).
    pub max_concurrent_nodes: usize,
    /// Samples held while the hub is away; beyond, the oldest are dropped first.
    pub buffer_max_samples: usize,
}

impl Default for CollectorConfig {
    fn default() -> Self {
        CollectorConfig {
            enabled: CollectorEnabled::Auto,
            interval: "30s".into(),
            scrape_timeout: "10s".into(),
            max_concurrent_nodes: 4,
            buffer_max_samples: 1_000_000,
        }
    }
}

fn duration(key: &str, text: &str) -> Result<Duration, ConfigError> {
    super::bounds::duration(&format!("collector.{key}"), text, "\"30s\" or \"1m\"")
}

impl CollectorConfig {
    /// `interval`, parsed (checked by [`CollectorConfig::validate`]).
    pub fn interval(&self) -> Result<Duration, ConfigError> {
        duration("interval", &self.interval)
    }

    /// `scrape_timeout`, parsed.
    pub fn scrape_timeout(&self) -> Result<Duration, ConfigError> {
        duration("scrape_timeout", &self.scrape_timeout)
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        let (interval, timeout) = (self.interval()?, self.scrape_timeout()?);
        let checks = [
            (
                (Duration::from_secs(5)..=Duration::from_secs(3600)).contains(&interval),
                "collector.interval must be between 5s and 1h",
            ),
            (
                timeout >= Duration::from_secs(1) && timeout <= interval,
                "collector.scrape_timeout must be at least 1s and at most collector.interval",
            ),
            (
                (1..=64).contains(&self.max_concurrent_nodes),
                "collector.max_concurrent_nodes must be between 1 and 64",
            ),
            (
                (10_000..=50_000_000).contains(&self.buffer_max_samples),
                "collector.buffer_max_samples must be between 10000 and 50000000",
            ),
        ];
        super::bounds::first_failed(&checks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_read_as_people_write_them_and_bounds_name_the_key() {
        let c = CollectorConfig::default();
        assert_eq!(c.interval().unwrap(), Duration::from_secs(30));
        assert!(c.validate().is_ok());
        let bad = |f: fn(&mut CollectorConfig)| {
            let mut c = CollectorConfig::default();
            f(&mut c);
            c.validate().unwrap_err().to_string()
        };
        assert!(bad(|c| c.interval = "soon".into()).contains("collector.interval \"soon\""));
        assert!(bad(|c| c.interval = "1s".into()).contains("collector.interval"));
        assert!(bad(|c| c.scrape_timeout = "1m".into()).contains("collector.scrape_timeout"));
        assert!(bad(|c| c.max_concurrent_nodes = 0).contains("max_concurrent_nodes"));
        assert!(bad(|c| c.buffer_max_samples = 5).contains("buffer_max_samples"));
    }
}
