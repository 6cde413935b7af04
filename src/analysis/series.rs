//! Raw usage series and OOM-kill observations as they arrive in
//! `resource-analysis-input/v2`. Shared by sizing and by the leak detector.

use serde::{Deserialize, Deserializer, Serialize};

use super::error::go_quote;

/// One source observation: Unix milliseconds and a value in the series' unit.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    /// Unix milliseconds of the source observation.
    #[serde(default)]
    pub timestamp: i64,
    /// Millicores, bytes or cumulative CPU seconds, by the series kind.
    #[serde(default)]
    pub value: f64,
}

/// How a series' values are to be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum SampleKind {
    /// CPU millicores or memory bytes, as measured.
    #[serde(rename = "gauge")]
    Gauge,
    /// Cumulative CPU seconds; the engine converts adjacent pairs into millicores.
    #[serde(rename = "cpu-counter-seconds")]
    CpuCounterSeconds,
}

impl<'de> Deserialize<'de> for SampleKind {
    /// Accepts the two contract spellings; anything else fails with the contract text
    /// `unsupported sample kind "<k>"`.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let kind = String::deserialize(deserializer)?;
        match kind.as_str() {
            "gauge" => Ok(SampleKind::Gauge),
            "cpu-counter-seconds" => Ok(SampleKind::CpuCounterSeconds),
            other => Err(serde::de::Error::custom(format!(
                "unsupported sample kind {}",
                go_quote(other)
            ))),
        }
    }
}

/// One container lifetime's samples (one pod, one restart generation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Series {
    #[serde(default)]
    pub id: String,
    #[serde(default, rename = "podUID", skip_serializing_if = "String::is_empty")]
    pub pod_uid: String,
    #[serde(default, rename = "workloadUID")]
    pub workload_uid: String,
    #[serde(default)]
    pub release: String,
    pub kind: SampleKind,
    #[serde(default)]
    pub samples: Vec<Sample>,
}

/// A normalized OOM termination event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OomKill {
    #[serde(default)]
    pub id: String,
    #[serde(default, rename = "podUID", skip_serializing_if = "String::is_empty")]
    pub pod_uid: String,
    #[serde(default, rename = "workloadUID")]
    pub workload_uid: String,
    #[serde(default)]
    pub release: String,
    #[serde(default)]
    pub timestamp: i64,
    /// Finite limit in force at termination; 0 = unknown or unlimited.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub memory_limit_bytes: f64,
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}
