//! Usage measurement (contract §6): per-series aggregation and confidence, then the
//! release-wide union of timestamps, cadence, coverage, usage reasons and confidence.
//! Hot path: no per-sample allocation, selection instead of sorting.

use std::cmp::Ordering;

use super::gaps::{uniform_gap, whole_second_capped_sum};
use super::guards::is_stale;
use super::normalize::{normalize_known, SampleError, SeriesFacts};
use super::output::DataQuality;
use super::policy::EvidencePolicy;
use super::reason::Reason;
use super::series::{Sample, SampleKind, Series};

/// How one series is reduced to a sizing value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Aggregation {
    /// The largest value.
    Maximum,
    /// The nearest-rank percentile (0 < p < 100).
    Percentile(f64),
}

/// The series of one resource and the segment to measure.
pub(crate) struct UsageView<'a> {
    pub series: &'a [Series],
    /// The facts of `series`, in the same order.
    pub facts: &'a [SeriesFacts],
    pub workload_uid: &'a str,
    pub release: &'a str,
    /// max(windowStart, releaseStartedAt).
    pub start: i64,
    pub evaluation_time: i64,
    /// Memory series must be gauges.
    pub memory: bool,
    pub aggregation: Aggregation,
    pub evidence: &'a EvidencePolicy,
}

/// The series that supplied the sizing value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Winner {
    pub series_id: String,
    pub pod_uid: String,
    pub value: f64,
    pub timestamp: i64,
    pub confidence: f64,
}

/// Measured usage of one release segment.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Usage {
    pub winner: Option<Winner>,
    /// Status is a placeholder; reasons are the usage reasons only.
    pub quality: DataQuality,
    pub confidence: i64,
    pub fresh_pods: usize,
}

/// Why usage could not be measured at all.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum UsageError {
    /// A series' samples are invalid; `index` is its position in the input array.
    Sample { index: usize, error: SampleError },
    /// Selected series share an ID or have none.
    DuplicateIds,
    /// A selected memory series is not a gauge.
    MemoryKind { index: usize },
}

impl UsageError {
    /// The input path suffix (`series[i]`) and the contract text.
    pub(crate) fn describe(&self) -> (Option<usize>, String) {
        match self {
            UsageError::Sample { index, error } => (Some(*index), error.message()),
            UsageError::DuplicateIds => (
                None,
                "selected series must have distinct nonempty IDs".into(),
            ),
            UsageError::MemoryKind { index } => {
                (Some(*index), "memory samples must be byte gauges".into())
            }
        }
    }
}

struct SeriesStats {
    value: f64,
    timestamp: i64,
    cadence: f64,
    confidence: f64,
}

/// Measures the selected series of `view`.
pub(crate) fn measure_usage(view: &UsageView<'_>) -> Result<Usage, UsageError> {
    let mut quality = DataQuality::empty();
    let mut selected: Vec<(usize, &Series)> = Vec::new();
    for (index, s) in view.series.iter().enumerate() {
        if s.workload_uid.is_empty() || s.release.is_empty() {
            quality.add(Reason::UnknownSeriesIdentity);
        } else if s.workload_uid == view.workload_uid && s.release == view.release {
            selected.push((index, s));
        }
    }
    selected.sort_by(|a, b| a.1.id.cmp(&b.1.id));
    if selected.iter().any(|(_, s)| s.id.is_empty())
        || selected.windows(2).any(|w| w[0].1.id == w[1].1.id)
    {
        return Err(UsageError::DuplicateIds);
    }
    if view.memory {
        if let Some((index, _)) = selected.iter().find(|(_, s)| s.kind != SampleKind::Gauge) {
            return Err(UsageError::MemoryKind { index: *index });
        }
    }
    let mut scan = Scan::default();
    for (index, s) in &selected {
        let facts = view.facts[*index];
        let samples =
            normalize_known(s, facts, view.start, view.evaluation_time).map_err(|error| {
                UsageError::Sample {
                    index: *index,
                    error,
                }
            })?;
        scan.add_series(s, &samples, view);
    }
    Ok(scan.finish(view, quality))
}

#[derive(Default)]
struct Scan {
    winner: Option<Winner>,
    timestamps: Vec<i64>,
    cadences: Vec<f64>,
    fresh_pods: Vec<String>,
    sample_count: i64,
    series_count: i64,
    gaps: Vec<i64>,
    values: Vec<f64>,
    merged: Vec<i64>,
}

impl Scan {
    fn add_series(&mut self, s: &Series, samples: &[Sample], view: &UsageView<'_>) {
        let Some(last) = samples.last() else {
            return;
        };
        let stats = series_stats(samples, view, &mut self.gaps, &mut self.values);
        self.sample_count += samples.len() as i64;
        self.series_count += 1;
        if samples.len() >= 2 {
            self.cadences.push(stats.cadence);
        }
        if self.timestamps.is_empty() {
            self.timestamps.extend(samples.iter().map(|x| x.timestamp));
        } else {
            merge_unique(&mut self.timestamps, samples, &mut self.merged);
        }
        let pod = if s.pod_uid.is_empty() {
            &s.id
        } else {
            &s.pod_uid
        };
        if !is_stale(
            last.timestamp,
            view.evaluation_time,
            view.evidence.freshness_seconds,
        ) {
            self.fresh_pods.push(pod.clone());
        }
        let better = match &self.winner {
            None => true,
            Some(w) => match stats.value.partial_cmp(&w.value).unwrap_or(Ordering::Equal) {
                Ordering::Greater => true,
                Ordering::Less => false,
                Ordering::Equal => {
                    stats.confidence > w.confidence
                        || (stats.confidence == w.confidence && stats.timestamp > w.timestamp)
                }
            },
        };
        if better {
            self.winner = Some(Winner {
                series_id: s.id.clone(),
                pod_uid: s.pod_uid.clone(),
                value: stats.value,
                timestamp: stats.timestamp,
                confidence: stats.confidence,
            });
        }
    }

    fn finish(mut self, view: &UsageView<'_>, mut quality: DataQuality) -> Usage {
        self.fresh_pods.sort();
        self.fresh_pods.dedup();
        let Some(winner) = self.winner else {
            quality.add(Reason::MissingUsage);
            return Usage {
                winner: None,
                quality,
                confidence: 0,
                fresh_pods: 0,
            };
        };
        let ts = &self.timestamps;
        let (start, end) = (ts[0], ts[ts.len() - 1]);
        let cadence = if self.cadences.is_empty() {
            0.0
        } else {
            let k = self.cadences.len() / 2;
            *self.cadences.select_nth_unstable_by(k, f64::total_cmp).1
        };
        let covered = cadence + capped_gap_sum(ts, cadence);
        let segment = (view.evaluation_time - view.start) as f64 / 1000.0;
        let coverage = if view.evaluation_time > view.start {
            (covered / segment).min(1.0)
        } else {
            0.0
        };
        let min_span = (end - start) as f64 / 1000.0 + cadence;
        let ev = view.evidence;
        let observations = ts.len() as i64;
        if is_stale(end, view.evaluation_time, ev.freshness_seconds) {
            quality.add(Reason::StaleUsage);
        }
        if min_span < ev.minimum_history_seconds as f64 {
            quality.add(Reason::InsufficientHistory);
        }
        if observations < ev.minimum_samples {
            quality.add(Reason::InsufficientSamples);
        }
        if coverage < ev.minimum_coverage {
            quality.add(Reason::SparseCoverage);
        }
        let release_confidence = confidence(min_span, coverage, observations as f64, ev).floor();
        let confidence = release_confidence.min(winner.confidence.floor()) as i64;
        quality.observed_start = start;
        quality.observed_end = end;
        quality.sample_count = self.sample_count;
        quality.observation_count = observations;
        quality.series_count = self.series_count;
        quality.cadence_seconds = cadence;
        quality.coverage = coverage;
        quality.observed_interval_hours = (end - start) as f64 / 3.6e6;
        Usage {
            winner: Some(winner),
            quality,
            confidence,
            fresh_pods: self.fresh_pods.len(),
        }
    }
}

/// Merges the sorted, distinct timestamps of `samples` into the sorted, distinct
/// `union` (linear; no sort, since both inputs are already ordered).
fn merge_unique(union: &mut Vec<i64>, samples: &[Sample], scratch: &mut Vec<i64>) {
    scratch.clear();
    scratch.reserve(union.len() + samples.len());
    let (mut i, mut j) = (0, 0);
    while i < union.len() && j < samples.len() {
        let (a, b) = (union[i], samples[j].timestamp);
        if a < b {
            scratch.push(a);
            i += 1;
        } else if b < a {
            scratch.push(b);
            j += 1;
        } else {
            scratch.push(a);
            i += 1;
            j += 1;
        }
    }
    scratch.extend_from_slice(&union[i..]);
    scratch.extend(samples[j..].iter().map(|s| s.timestamp));
    std::mem::swap(union, scratch);
}

/// 95 × history factor × coverage × sample factor (unfloored).
fn confidence(span: f64, coverage: f64, samples: f64, ev: &EvidencePolicy) -> f64 {
    95.0 * (span / ev.minimum_history_seconds as f64).min(1.0)
        * coverage
        * (samples / ev.minimum_samples as f64).min(1.0)
}

/// Σ over consecutive timestamps of min(gap seconds, cadence), in timestamp order.
fn capped_gap_sum(ts: &[i64], cadence: f64) -> f64 {
    whole_second_capped_sum(ts.iter().copied(), cadence).unwrap_or_else(|| {
        ts.windows(2)
            .map(|w| ((w[1] - w[0]) as f64 / 1000.0).min(cadence))
            .sum()
    })
}

fn series_stats(
    samples: &[Sample],
    view: &UsageView<'_>,
    gaps: &mut Vec<i64>,
    values: &mut Vec<f64>,
) -> SeriesStats {
    let n = samples.len();
    let timestamps = || samples.iter().map(|s| s.timestamp);
    let cadence = if let Some(gap) = uniform_gap(timestamps()) {
        gap as f64 / 1000.0
    } else if n < 2 {
        0.0
    } else {
        gaps.clear();
        gaps.extend(samples.windows(2).map(|w| w[1].timestamp - w[0].timestamp));
        let k = (gaps.len() - 1) / 2;
        *gaps.select_nth_unstable(k).1 as f64 / 1000.0
    };
    let (first, last) = (samples[0].timestamp, samples[n - 1].timestamp);
    let span = (last - first) as f64 / 1000.0 + cadence;
    let gap_sum = whole_second_capped_sum(timestamps(), cadence).unwrap_or_else(|| {
        samples
            .windows(2)
            .map(|w| ((w[1].timestamp - w[0].timestamp) as f64 / 1000.0).min(cadence))
            .sum::<f64>()
    });
    let covered = cadence + gap_sum;
    let coverage = if span > 0.0 {
        (covered / span).min(1.0)
    } else {
        0.0
    };
    let confidence = confidence(span, coverage, n as f64, view.evidence);
    let (value, timestamp) = match view.aggregation {
        Aggregation::Maximum => maximum(samples),
        Aggregation::Percentile(p) => percentile(samples, p, values),
    };
    SeriesStats {
        value,
        timestamp,
        cadence,
        confidence,
    }
}

/// The largest value and the latest timestamp carrying it.
fn maximum(samples: &[Sample]) -> (f64, i64) {
    let mut best = (samples[0].value, samples[0].timestamp);
    for s in &samples[1..] {
        if s.value >= best.0 {
            best = (s.value, s.timestamp);
        }
    }
    best
}

/// Nearest rank: 0-based index ⌈p/100 × n⌉ − 1 of the values ordered by (value,
/// timestamp); the timestamp is the latest sample carrying the selected value.
pub(crate) fn percentile(samples: &[Sample], p: f64, values: &mut Vec<f64>) -> (f64, i64) {
    let n = samples.len();
    let rank = ((p / 100.0 * n as f64).ceil() as i64 - 1).clamp(0, n as i64 - 1) as usize;
    values.clear();
    values.extend(samples.iter().map(|s| s.value));
    let cmp = |a: &f64, b: &f64| a.partial_cmp(b).unwrap_or(Ordering::Equal);
    let value = *values.select_nth_unstable_by(rank, cmp).1;
    let timestamp = samples
        .iter()
        .rev()
        .find(|s| s.value == value)
        .map_or(samples[n - 1].timestamp, |s| s.timestamp);
    (value, timestamp)
}

#[cfg(test)]
#[path = "usage_tests.rs"]
mod tests;
