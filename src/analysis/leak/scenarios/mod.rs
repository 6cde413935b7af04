//! Whole-detector scenarios through [`detect`]: a fixture that owns the input, and
//! synthetic usage shapes. `episodes` covers each episode status and reason,
//! `aggregate` the aggregate rules, OOM splitting, windows and robustness.

mod aggregate;
mod episodes;

use super::super::series::{Sample, SampleKind};
use super::*;

pub(super) const MIB: f64 = 1024.0 * 1024.0;
pub(super) const HOUR: i64 = 3_600_000;
pub(super) const T0: i64 = 1_800_000_000_000;
/// Evaluation time: 24 hours after the window (and the release) started.
pub(super) const EVAL: i64 = T0 + 24 * HOUR;

/// A detector input held by value; `run` lends it out as a [`LeakContext`].
pub(super) struct Fixture {
    pub(super) series: Vec<Series>,
    pub(super) kills: Vec<OomKill>,
    pub(super) window_start: i64,
    pub(super) release_started_at: i64,
    pub(super) evaluation_time: i64,
}

impl Fixture {
    pub(super) fn new(series: Vec<Series>) -> Fixture {
        Fixture {
            series,
            kills: Vec::new(),
            window_start: T0,
            release_started_at: T0,
            evaluation_time: EVAL,
        }
    }

    pub(super) fn run(&self) -> MemoryLeakAnalysis {
        let policy = MemoryLeakPolicy::default().normalized().expect("defaults");
        self.run_with(&policy)
    }

    pub(super) fn run_with(&self, policy: &MemoryLeakPolicy) -> MemoryLeakAnalysis {
        let series: Vec<&Series> = self.series.iter().collect();
        let kills: Vec<&OomKill> = self.kills.iter().collect();
        let ctx = LeakContext {
            window_start: self.window_start,
            release_started_at: self.release_started_at,
            evaluation_time: self.evaluation_time,
            series: &series,
            oom_kills: &kills,
            minimum_coverage: 0.9,
            freshness_seconds: 300,
        };
        detect(&ctx, policy)
    }
}

/// Samples every `step_s` seconds in [from, to], valued by hours since T0.
pub(super) fn series(
    id: &str,
    pod: &str,
    from: i64,
    to: i64,
    step_s: i64,
    f: impl Fn(f64) -> f64,
) -> Series {
    let samples = (0..)
        .map(|i| from + i * step_s * 1000)
        .take_while(|&t| t <= to)
        .map(|t| Sample {
            timestamp: t,
            value: f((t - T0) as f64 / HOUR as f64),
        })
        .collect();
    Series {
        id: id.into(),
        pod_uid: pod.into(),
        workload_uid: "uid".into(),
        release: "A".into(),
        kind: SampleKind::Gauge,
        samples,
    }
}

/// Steady baseline growth of 20 MiB/h from 200 MiB, with GC peaks on top.
pub(super) fn leaking(hours: f64) -> f64 {
    200.0 * MIB + 20.0 * MIB * hours + gc_peaks(hours)
}

/// A sawtooth of 0–90 MiB repeating every 10 minutes.
pub(super) fn gc_peaks(hours: f64) -> f64 {
    let minute = (hours * 60.0).round() as i64;
    (minute % 10) as f64 * 10.0 * MIB
}

pub(super) fn full_day(id: &str, pod: &str, f: impl Fn(f64) -> f64) -> Series {
    series(id, pod, T0, EVAL, 30, f)
}

pub(super) fn kill(id: &str, pod: &str, t: i64) -> OomKill {
    OomKill {
        id: id.into(),
        pod_uid: pod.into(),
        workload_uid: "uid".into(),
        release: "A".into(),
        timestamp: t,
        memory_limit_bytes: 0.0,
    }
}

pub(super) fn episode_reasons(a: &MemoryLeakAnalysis) -> Vec<Vec<Reason>> {
    a.episodes.iter().map(|e| e.reasons.clone()).collect()
}
