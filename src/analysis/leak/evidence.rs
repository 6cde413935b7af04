//! The detector's output: `memoryLeak` and its per-episode evidence (contract §4,
//! "MemoryLeakAnalysis"). Field order here is JSON key order.

use serde::{Deserialize, Serialize};

use super::super::reason::Reason;

/// Verdict of one episode or of the whole `memoryLeak` result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LeakStatus {
    /// The baseline grew steadily and is still growing.
    PotentialLeak,
    /// Evaluable evidence showed no qualifying pattern.
    NoLeakPattern,
    /// Evidence was incomplete or unavailable.
    InsufficientData,
}

/// `memoryLeak` in a memory result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryLeakAnalysis {
    /// Always [`super::DETECTOR_VERSION`].
    pub detector_version: String,
    /// Aggregate verdict over all episodes.
    pub status: LeakStatus,
    /// Start of the leak window, Unix ms.
    pub window_start: i64,
    /// End of the leak window (the evaluation time), Unix ms.
    pub window_end: i64,
    /// Episodes with a `potential-leak` or `no-leak-pattern` verdict.
    pub evaluated_episodes: i64,
    /// Episodes with a `potential-leak` verdict.
    pub suspected_episodes: i64,
    /// Episodes with an `insufficient-data` verdict.
    pub skipped_episodes: i64,
    /// Why the aggregate status was reached.
    pub reasons: Vec<Reason>,
    /// One entry per episode, in series-ID then time order.
    pub episodes: Vec<MemoryLeakEvidence>,
}

impl MemoryLeakAnalysis {
    /// True when at least one episode passed the heuristic.
    pub fn is_potential_leak(&self) -> bool {
        self.status == LeakStatus::PotentialLeak
    }
}

/// The evidence for one episode: one container lifetime (or the part of it between
/// OOM kills) inside the leak window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemoryLeakEvidence {
    /// The series the episode comes from.
    #[serde(rename = "seriesID")]
    pub series_id: String,
    /// The series' pod UID, when known.
    #[serde(default, rename = "podUID", skip_serializing_if = "String::is_empty")]
    pub pod_uid: String,
    /// This episode's verdict.
    pub status: LeakStatus,
    /// First analysed sample, Unix ms (0 when none).
    pub observed_start: i64,
    /// Last analysed sample, Unix ms (0 when none).
    pub observed_end: i64,
    /// Distinct analysed samples.
    pub sample_count: i64,
    /// Complete buckets between the analysis start and the effective end.
    pub bucket_count: i64,
    /// Fraction of the bucketed time covered by samples, capped at 1.
    pub coverage: f64,
    /// Median P10 baseline of the first quarter of usable buckets.
    pub baseline_start_bytes: f64,
    /// Median P10 baseline of the last quarter of usable buckets.
    pub baseline_end_bytes: f64,
    /// `baselineEndBytes − baselineStartBytes`.
    pub growth_bytes: f64,
    /// Growth as a fraction of the starting baseline; absent when that is 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relative_growth: Option<f64>,
    /// Theil–Sen slope over all usable baselines.
    pub slope_bytes_per_hour: f64,
    /// Theil–Sen slope over the latest quarter (at least six baselines).
    pub recent_slope_bytes_per_hour: f64,
    /// Fraction of baseline pairs that increase.
    pub trend_consistency: f64,
    /// The same fraction over the latest quarter.
    pub recent_trend_consistency: f64,
    /// OOM kills that ended this episode while its usage was fresh.
    #[serde(rename = "oomKillIDs", default, skip_serializing_if = "Vec::is_empty")]
    pub oom_kill_ids: Vec<String>,
    /// Why this verdict was reached.
    pub reasons: Vec<Reason>,
}

impl MemoryLeakEvidence {
    /// An `insufficient-data` episode with nothing measured yet.
    pub(crate) fn empty(series_id: &str, pod_uid: &str) -> MemoryLeakEvidence {
        MemoryLeakEvidence {
            series_id: series_id.to_string(),
            pod_uid: pod_uid.to_string(),
            status: LeakStatus::InsufficientData,
            observed_start: 0,
            observed_end: 0,
            sample_count: 0,
            bucket_count: 0,
            coverage: 0.0,
            baseline_start_bytes: 0.0,
            baseline_end_bytes: 0.0,
            growth_bytes: 0.0,
            relative_growth: None,
            slope_bytes_per_hour: 0.0,
            recent_slope_bytes_per_hour: 0.0,
            trend_consistency: 0.0,
            recent_trend_consistency: 0.0,
            oom_kill_ids: Vec::new(),
            reasons: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evidence_serializes_contract_keys_in_order_and_omits_empty_optionals() {
        let mut e = MemoryLeakEvidence::empty("s1", "");
        e.reasons.push(Reason::MissingUsage);
        let json = serde_json::to_string(&e).expect("json");
        assert_eq!(
            json,
            "{\"seriesID\":\"s1\",\"status\":\"insufficient-data\",\"observedStart\":0,\
\"observedEnd\":0,\"sampleCount\":0,\"bucketCount\":0,\"coverage\":0.0,\
\"baselineStartBytes\":0.0,\"baselineEndBytes\":0.0,\"growthBytes\":0.0,\
\"slopeBytesPerHour\":0.0,\"recentSlopeBytesPerHour\":0.0,\"trendConsistency\":0.0,\
\"recentTrendConsistency\":0.0,\"reasons\":[\"missing-usage\"]}"
        );
    }

    #[test]
    fn evidence_keeps_pod_relative_growth_and_oom_ids_when_present() {
        let mut e = MemoryLeakEvidence::empty("s1", "pod-a");
        e.status = LeakStatus::PotentialLeak;
        e.relative_growth = Some(0.5);
        e.oom_kill_ids = vec!["oom-1".into()];
        let v: serde_json::Value = serde_json::to_value(&e).expect("json");
        assert_eq!(v["podUID"], "pod-a");
        assert_eq!(v["status"], "potential-leak");
        assert_eq!(v["relativeGrowth"], 0.5);
        assert_eq!(v["oomKillIDs"][0], "oom-1");
        let back: MemoryLeakEvidence = serde_json::from_value(v).expect("round trip");
        assert_eq!(back, e);
    }

    #[test]
    fn analysis_serializes_contract_keys_in_order() {
        let a = MemoryLeakAnalysis {
            detector_version: "3".into(),
            status: LeakStatus::NoLeakPattern,
            window_start: 1,
            window_end: 2,
            evaluated_episodes: 0,
            suspected_episodes: 0,
            skipped_episodes: 0,
            reasons: Vec::new(),
            episodes: Vec::new(),
        };
        let json = serde_json::to_string(&a).expect("json");
        assert_eq!(
            json,
            "{\"detectorVersion\":\"3\",\"status\":\"no-leak-pattern\",\"windowStart\":1,\
\"windowEnd\":2,\"evaluatedEpisodes\":0,\"suspectedEpisodes\":0,\"skippedEpisodes\":0,\
\"reasons\":[],\"episodes\":[]}"
        );
        assert!(!a.is_potential_leak());
    }
}
