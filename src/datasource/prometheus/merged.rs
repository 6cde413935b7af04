//! Usage series collapsed onto the labels kerf keeps
//! ([`USAGE_LABELS`](super::queries::USAGE_LABELS)), series that
//! then coincide merged by their max — the `max by (namespace, pod, container, id)`
//! Prometheus would have computed, done once per sample on kerf's side. Both protocols
//! go through it: `query_range` pieces of one series are joined here too. [`usage_of`]
//! turns a workload's raw series into the engine's usage, as every datasource that reads
//! raw samples (Prometheus's protocols, the embedded store) hands them on.

use std::collections::BTreeMap;

use super::queries::{self, USAGE_LABELS};
use super::samples::{check_order, drop_stale, trim, SeriesFault};
use crate::analysis::Sample;
use crate::datasource::raw::{label, metric, Labels, RawSeries, RawUsage};

/// `metric{namespace, pod, container, id}`: a series as a fault names it.
fn series_name(labels: &Labels) -> String {
    let kept: Vec<String> = USAGE_LABELS
        .iter()
        .filter_map(|k| Some(format!("{k}={}", queries::quote(labels.get(*k)?))))
        .collect();
    let name = labels.get(label::NAME).map_or("", String::as_str);
    format!("{name}{{{}}}", kept.join(","))
}

/// A fault of the series `labels` names.
pub fn fault_in(fault: &SeriesFault, labels: &Labels) -> String {
    format!("{fault} in {}", series_name(labels))
}

/// One workload's raw usage series as the engine takes them: each in strict time order
/// (else the fault, named), staleness markers dropped, series that coincide on the kept
/// labels merged by their max.
pub fn usage_of(raw: Vec<RawSeries>) -> Result<RawUsage, String> {
    if let Some(fault) = raw.iter().find_map(|s| {
        check_order(&s.samples)
            .err()
            .map(|f| fault_in(&f, &s.labels))
    }) {
        return Err(fault);
    }
    let (mut cpu, mut memory) = (Merged::default(), Merged::default());
    for mut s in raw {
        drop_stale(&mut s.samples);
        if s.samples.is_empty() {
            continue;
        }
        trim(&mut s.samples);
        let target = match s.labels.get(label::NAME).map(String::as_str) {
            Some(metric::CPU) => &mut cpu,
            Some(metric::MEMORY) => &mut memory,
            _ => continue,
        };
        target.add(s.labels, Some(USAGE_LABELS), s.samples);
    }
    Ok(RawUsage {
        cpu: cpu.into_series(),
        memory: memory.into_series(),
    })
}

/// Series by their kept labels.
#[derive(Debug, Default)]
pub struct Merged {
    series: BTreeMap<Labels, Vec<Sample>>,
}

impl Merged {
    /// Adds one series (time order); with `keep`, only those labels are kept.
    pub fn add(&mut self, mut labels: Labels, keep: Option<&[&str]>, samples: Vec<Sample>) {
        if let Some(keep) = keep {
            labels.retain(|k, _| keep.contains(&k.as_str()));
        }
        match self.series.get_mut(&labels) {
            Some(existing) => merge_max(existing, samples),
            None => {
                self.series.insert(labels, samples);
            }
        }
    }

    pub fn into_series(self) -> Vec<RawSeries> {
        self.series
            .into_iter()
            .map(|(labels, samples)| RawSeries { labels, samples })
            .collect()
    }
}

/// Appends `more` to `samples` (both in time order): the next range piece is appended
/// as is; samples of a coinciding series are merged, the max kept at equal times.
fn merge_max(samples: &mut Vec<Sample>, more: Vec<Sample>) {
    match (samples.last(), more.first()) {
        (Some(last), Some(first)) if last.timestamp < first.timestamp => {
            samples.reserve_exact(more.len());
            samples.extend(more);
        }
        (_, None) => {}
        _ => {
            let mut out = Vec::with_capacity(samples.len() + more.len());
            let (mut i, mut j) = (0, 0);
            while i < samples.len() || j < more.len() {
                let take = match (samples.get(i), more.get(j)) {
                    (Some(x), Some(y)) if x.timestamp == y.timestamp => {
                        i += 1;
                        j += 1;
                        Sample {
                            timestamp: x.timestamp,
                            value: x.value.max(y.value),
                        }
                    }
                    (Some(x), Some(y)) if x.timestamp < y.timestamp => {
                        i += 1;
                        *x
                    }
                    (Some(x), None) => {
                        i += 1;
                        *x
                    }
                    (_, Some(y)) => {
                        j += 1;
                        *y
                    }
                    (None, None) => break,
                };
                out.push(take);
            }
            out.shrink_to_fit();
            *samples = out;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(points: &[(i64, f64)]) -> Vec<Sample> {
        points
            .iter()
            .map(|&(timestamp, value)| Sample { timestamp, value })
            .collect()
    }

    #[test]
    fn range_pieces_append_and_coinciding_series_keep_the_max() {
        let mut a = s(&[(1, 1.0), (2, 5.0)]);
        merge_max(&mut a, s(&[(3, 2.0)]));
        assert_eq!(a, s(&[(1, 1.0), (2, 5.0), (3, 2.0)]));
        merge_max(&mut a, s(&[(2, 7.0), (3, 1.0), (4, 4.0)]));
        assert_eq!(a, s(&[(1, 1.0), (2, 7.0), (3, 2.0), (4, 4.0)]));
        merge_max(&mut a, Vec::new());
        assert_eq!(a.len(), 4);
    }
}
