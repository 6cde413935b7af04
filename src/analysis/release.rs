//! Release-boundary inference (contract §5): where the selected rollout starts when the
//! caller did not say, or when a later visible rollback (A→B→A) moves it.

use super::input::CurrentIdentity;
use super::normalize::{series_facts, SeriesFacts};
use super::series::{OomKill, Sample, Series};

/// The series and events that reveal rollout boundaries for one workload.
pub(crate) struct BoundaryView<'a> {
    /// Target workload UID.
    pub workload_uid: &'a str,
    /// Target release.
    pub release: &'a str,
    /// CPU and memory series of every release.
    pub series: [&'a [Series]; 2],
    /// All OOM events of the container.
    pub oom_kills: &'a [OomKill],
    /// Input window start.
    pub window_start: i64,
    /// Evaluation time of this view.
    pub evaluation_time: i64,
}

/// The identity after inference, and the facts of every series in the view (this is
/// the first pass over them), in the view's order.
pub(crate) struct Boundary {
    /// `identity` with `releaseStartedAt` inferred or moved, and `releaseStartInferred`
    /// set when that happened.
    pub identity: CurrentIdentity,
    /// The facts of `series[0]` and `series[1]`.
    pub facts: [Vec<SeriesFacts>; 2],
}

/// Infers or moves the release start of `identity` from what `view` shows.
pub(crate) fn infer_release_start(identity: &CurrentIdentity, view: &BoundaryView<'_>) -> Boundary {
    let facts = view.series.map(|list| {
        list.iter()
            .map(|s| series_facts(&s.samples))
            .collect::<Vec<_>>()
    });
    let identity = infer_with(identity, view, &facts);
    Boundary { identity, facts }
}

fn infer_with(
    identity: &CurrentIdentity,
    view: &BoundaryView<'_>,
    facts: &[Vec<SeriesFacts>; 2],
) -> CurrentIdentity {
    let eval = view.evaluation_time;
    let all_series = || {
        view.series
            .iter()
            .zip(facts)
            .flat_map(|(list, facts)| list.iter().zip(facts.iter().map(|f| f.sorted)))
    };
    let mut cutoff = view.window_start - 1;
    for (s, sorted) in all_series() {
        if s.workload_uid == view.workload_uid && !s.release.is_empty() && s.release != view.release
        {
            if let Some(latest) = latest_at_or_before(&s.samples, sorted, eval) {
                cutoff = cutoff.max(latest);
            }
        }
    }
    let selected = |uid: &str, release: &str| uid == view.workload_uid && release == view.release;
    let mut boundary: Option<i64> = None;
    let mut consider = |ts: i64| {
        if ts > cutoff && ts <= eval && boundary.is_none_or(|b| ts < b) {
            boundary = Some(ts);
        }
    };
    for (s, sorted) in all_series().filter(|(s, _)| selected(&s.workload_uid, &s.release)) {
        if let Some(earliest) = earliest_after(&s.samples, sorted, cutoff, eval) {
            consider(earliest);
        }
    }
    for kill in view
        .oom_kills
        .iter()
        .filter(|k| selected(&k.workload_uid, &k.release))
    {
        consider(kill.timestamp);
    }
    let boundary = match boundary {
        Some(ts) => ts,
        None if cutoff >= view.window_start => cutoff + 1,
        None => 0,
    };
    let mut out = identity.clone();
    let unknown = identity.release_started_at == 0;
    let rolled_back =
        cutoff >= identity.release_started_at && boundary > identity.release_started_at;
    if unknown || rolled_back {
        out.release_started_at = boundary;
        out.release_start_inferred = true;
    }
    out
}

/// The latest sample timestamp at or before `eval`: a binary search on the usual sorted
/// series, a scan otherwise.
fn latest_at_or_before(samples: &[Sample], sorted: bool, eval: i64) -> Option<i64> {
    if sorted {
        let end = samples.partition_point(|s| s.timestamp <= eval);
        return end.checked_sub(1).map(|i| samples[i].timestamp);
    }
    samples
        .iter()
        .map(|s| s.timestamp)
        .filter(|&ts| ts <= eval)
        .max()
}

/// The earliest sample timestamp in `(after, eval]`, found the same way.
fn earliest_after(samples: &[Sample], sorted: bool, after: i64, eval: i64) -> Option<i64> {
    if sorted {
        let first = samples.partition_point(|s| s.timestamp <= after);
        return samples
            .get(first)
            .map(|s| s.timestamp)
            .filter(|&ts| ts <= eval);
    }
    samples
        .iter()
        .map(|s| s.timestamp)
        .filter(|&ts| ts > after && ts <= eval)
        .min()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::series::{Sample, SampleKind};

    fn series(id: &str, release: &str, ts: &[i64]) -> Series {
        Series {
            id: id.into(),
            pod_uid: String::new(),
            workload_uid: "uid".into(),
            release: release.into(),
            kind: SampleKind::Gauge,
            samples: ts
                .iter()
                .map(|&timestamp| Sample {
                    timestamp,
                    value: 1.0,
                })
                .collect(),
        }
    }

    fn infer(rsa: i64, cpu: &[Series]) -> CurrentIdentity {
        let identity = CurrentIdentity {
            release_started_at: rsa,
            ..CurrentIdentity::default()
        };
        let view = BoundaryView {
            workload_uid: "uid",
            release: "A",
            series: [cpu, &[]],
            oom_kills: &[],
            window_start: 1000,
            evaluation_time: 10_000,
        };
        infer_release_start(&identity, &view).identity
    }

    #[test]
    fn unknown_start_is_the_first_selected_sample_and_marked_inferred() {
        let id = infer(0, &[series("a", "A", &[3000, 2000, 4000])]);
        assert_eq!(id.release_started_at, 2000);
        assert!(id.release_start_inferred);
    }

    #[test]
    fn a_visible_rollback_moves_a_known_start_past_the_other_release() {
        let cpu = [
            series("a1", "A", &[1500, 2000]),
            series("b", "B", &[3000, 4000]),
            series("a2", "A", &[5000, 6000]),
        ];
        let id = infer(1500, &cpu);
        assert_eq!(id.release_started_at, 5000);
        assert!(id.release_start_inferred);
    }

    #[test]
    fn a_known_start_after_the_other_release_is_kept() {
        let cpu = [series("b", "B", &[3000]), series("a", "A", &[5000])];
        let id = infer(4500, &cpu);
        assert_eq!(id.release_started_at, 4500);
        assert!(!id.release_start_inferred);
    }

    #[test]
    fn without_selected_samples_the_boundary_follows_the_other_release() {
        let id = infer(0, &[series("b", "B", &[3000])]);
        assert_eq!(id.release_started_at, 3001);
        let none = infer(0, &[]);
        assert_eq!(none.release_started_at, 0);
        assert!(none.release_start_inferred);
    }
}
