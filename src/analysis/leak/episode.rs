//! Episodes: one container lifetime of one series inside the leak window, split
//! further at OOM kills of the same pod (an adapter may reuse a series ID across an
//! OOM restart). Replicas and lifetimes are never stitched together.

use std::borrow::Cow;

use super::super::normalize::series_facts;
use super::super::reason::Reason;
use super::super::series::{OomKill, Sample, Series};

/// The time ranges that decide which samples belong to an episode.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ranges {
    /// Start of the release range, `max(windowStart, releaseStartedAt)`, Unix ms.
    pub release_start: i64,
    /// Start of the leak window, Unix ms.
    pub window_start: i64,
    /// Evaluation time, Unix ms; the end of both ranges.
    pub end: i64,
    /// `evidence.freshnessSeconds` in ms.
    pub freshness_ms: i64,
}

/// One lifetime segment of a series, restricted to the leak window.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Episode<'a> {
    /// First observation of the lifetime in the release range (drives warm-up).
    pub lifetime_start: i64,
    /// Distinct samples inside the leak window, sorted by time (never empty). Borrowed
    /// from the series when its samples were already sorted, as they usually are.
    pub samples: Cow<'a, [Sample]>,
    /// IDs of same-pod OOM kills that ended the episode while its usage was fresh.
    pub oom_kill_ids: Vec<String>,
}

/// A lifetime segment over the whole release range, with the kills that ended it.
struct Segment<'s, 'k> {
    samples: &'s [Sample],
    kills: Vec<&'k OomKill>,
}

/// Splits `series` into episodes. `Err` carries the reason of the one skipped episode
/// a series without samples in the window becomes: `missing-usage` when it was never
/// observed in the release range, else `stale-usage`.
pub(crate) fn split<'a>(
    series: &'a Series,
    kills: &[&OomKill],
    ranges: &Ranges,
) -> Result<Vec<Episode<'a>>, Reason> {
    let own_kills: Vec<&OomKill> = if series.pod_uid.is_empty() {
        Vec::new()
    } else {
        kills
            .iter()
            .copied()
            .filter(|k| k.pod_uid == series.pod_uid)
            .collect()
    };
    let samples = &series.samples;
    let episodes: Vec<Episode<'a>> = if series_facts(samples).sorted {
        let lo = samples.partition_point(|s| s.timestamp < ranges.release_start);
        let hi = samples
            .partition_point(|s| s.timestamp <= ranges.end)
            .max(lo);
        episodes(&samples[lo..hi], &own_kills, ranges)?
    } else {
        let sorted = release_samples(series, ranges);
        episodes(&sorted, &own_kills, ranges)?
            .into_iter()
            .map(Episode::into_owned)
            .collect()
    };
    if episodes.is_empty() {
        Err(Reason::StaleUsage)
    } else {
        Ok(episodes)
    }
}

impl Episode<'_> {
    fn into_owned(self) -> Episode<'static> {
        Episode {
            lifetime_start: self.lifetime_start,
            samples: Cow::Owned(self.samples.into_owned()),
            oom_kill_ids: self.oom_kill_ids,
        }
    }
}

/// The episodes of release-range samples (sorted, distinct); `Err` when there are none.
fn episodes<'s>(
    samples: &'s [Sample],
    kills: &[&OomKill],
    ranges: &Ranges,
) -> Result<Vec<Episode<'s>>, Reason> {
    if samples.is_empty() {
        return Err(Reason::MissingUsage);
    }
    Ok(segments(samples, kills)
        .into_iter()
        .filter_map(|segment| episode(segment, ranges))
        .collect())
}

/// Samples in the release range, sorted by time, one per timestamp (the slow path for
/// unsorted input).
fn release_samples(series: &Series, ranges: &Ranges) -> Vec<Sample> {
    let mut samples: Vec<Sample> = series
        .samples
        .iter()
        .copied()
        .filter(|s| s.timestamp >= ranges.release_start && s.timestamp <= ranges.end)
        .collect();
    samples.sort_by_key(|s| s.timestamp);
    samples.dedup_by_key(|s| s.timestamp);
    samples
}

/// Cuts sorted samples at each kill: samples at or before a kill stay with the earlier
/// segment. Kills before the first sample end no segment and are dropped.
fn segments<'s, 'k>(samples: &'s [Sample], kills: &[&'k OomKill]) -> Vec<Segment<'s, 'k>> {
    if kills.is_empty() {
        return vec![Segment {
            samples,
            kills: Vec::new(),
        }];
    }
    let mut out = Vec::new();
    let (mut begin, mut current_kills) = (0, Vec::new());
    let mut pending = kills.iter().copied().peekable();
    for (i, sample) in samples.iter().enumerate() {
        while let Some(kill) = pending.next_if(|k| k.timestamp < sample.timestamp) {
            if i > begin {
                current_kills.push(kill);
            }
        }
        if !current_kills.is_empty() {
            out.push(Segment {
                samples: &samples[begin..i],
                kills: std::mem::take(&mut current_kills),
            });
            begin = i;
        }
    }
    current_kills.extend(pending);
    out.push(Segment {
        samples: &samples[begin..],
        kills: current_kills,
    });
    out
}

/// The part of `segment` inside the leak window, if any, with its corroborating kills.
fn episode<'s>(segment: Segment<'s, '_>, ranges: &Ranges) -> Option<Episode<'s>> {
    let lifetime_start = segment.samples.first()?.timestamp;
    let skip = segment
        .samples
        .partition_point(|s| s.timestamp < ranges.window_start);
    let samples = &segment.samples[skip..];
    let last = samples.last()?.timestamp;
    let oom_kill_ids = segment
        .kills
        .iter()
        .filter(|k| fresh_at(last, k.timestamp, ranges.freshness_ms))
        .map(|k| k.id.clone())
        .collect();
    Some(Episode {
        lifetime_start,
        samples: Cow::Borrowed(samples),
        oom_kill_ids,
    })
}

/// Contract freshness: `ts` is fresh at `now` unless it is ≤ 0, after `now`, or more
/// than `freshness_ms` older than `now`.
pub(crate) fn fresh_at(ts: i64, now: i64, freshness_ms: i64) -> bool {
    ts > 0 && ts <= now && now.saturating_sub(ts) <= freshness_ms
}

#[cfg(test)]
mod tests {
    use super::super::super::series::SampleKind;
    use super::*;

    const MIN: i64 = 60_000;

    fn series(pod: &str, times: &[i64]) -> Series {
        Series {
            id: "s".into(),
            pod_uid: pod.into(),
            workload_uid: "uid".into(),
            release: "A".into(),
            kind: SampleKind::Gauge,
            samples: times
                .iter()
                .map(|&t| Sample {
                    timestamp: t,
                    value: t as f64,
                })
                .collect(),
        }
    }

    fn kill(id: &str, pod: &str, t: i64) -> OomKill {
        OomKill {
            id: id.into(),
            pod_uid: pod.into(),
            workload_uid: "uid".into(),
            release: "A".into(),
            timestamp: t,
            memory_limit_bytes: 0.0,
        }
    }

    fn ranges(release_start: i64, window_start: i64, end: i64) -> Ranges {
        Ranges {
            release_start,
            window_start,
            end,
            freshness_ms: 5 * MIN,
        }
    }

    fn times(e: &Episode) -> Vec<i64> {
        e.samples.iter().map(|s| s.timestamp).collect()
    }

    #[test]
    fn series_never_seen_in_the_release_range_is_missing_usage() {
        let s = series("p", &[MIN, 2 * MIN]);
        let r = ranges(10 * MIN, 10 * MIN, 20 * MIN);
        assert_eq!(split(&s, &[], &r), Err(Reason::MissingUsage));
        assert_eq!(split(&series("p", &[]), &[], &r), Err(Reason::MissingUsage));
    }

    #[test]
    fn series_seen_only_before_the_leak_window_is_stale_usage() {
        let s = series("p", &[MIN, 2 * MIN]);
        let r = ranges(MIN, 10 * MIN, 20 * MIN);
        assert_eq!(split(&s, &[], &r), Err(Reason::StaleUsage));
    }

    #[test]
    fn lifetime_starts_at_first_release_range_sample_and_window_samples_are_deduplicated() {
        let s = series("p", &[12 * MIN, 3 * MIN, 12 * MIN, 11 * MIN, 2 * MIN]);
        let eps = split(&s, &[], &ranges(3 * MIN, 10 * MIN, 20 * MIN)).expect("episodes");
        assert_eq!(eps.len(), 1);
        assert_eq!(eps[0].lifetime_start, 3 * MIN);
        assert_eq!(times(&eps[0]), vec![11 * MIN, 12 * MIN]);
        assert!(eps[0].oom_kill_ids.is_empty());
    }

    #[test]
    fn same_pod_oom_kill_splits_and_corroborates_the_earlier_episode() {
        let s = series("p", &[MIN, 2 * MIN, 3 * MIN, 5 * MIN, 6 * MIN]);
        let k = kill("k1", "p", 4 * MIN);
        let eps = split(&s, &[&k], &ranges(0, 0, 10 * MIN)).expect("episodes");
        assert_eq!(eps.len(), 2);
        assert_eq!(times(&eps[0]), vec![MIN, 2 * MIN, 3 * MIN]);
        assert_eq!(eps[0].oom_kill_ids, vec!["k1".to_string()]);
        assert_eq!(eps[1].lifetime_start, 5 * MIN);
        assert!(eps[1].oom_kill_ids.is_empty());
    }

    #[test]
    fn kill_long_after_the_last_sample_splits_without_corroborating() {
        let s = series("p", &[MIN, 2 * MIN, 30 * MIN]);
        let k = kill("k1", "p", 20 * MIN);
        let eps = split(&s, &[&k], &ranges(0, 0, 40 * MIN)).expect("episodes");
        assert_eq!(eps.len(), 2);
        assert!(eps[0].oom_kill_ids.is_empty());
    }

    #[test]
    fn sample_at_the_kill_time_belongs_to_the_ending_episode() {
        let s = series("p", &[MIN, 2 * MIN, 3 * MIN]);
        let k = kill("k1", "p", 2 * MIN);
        let eps = split(&s, &[&k], &ranges(0, 0, 10 * MIN)).expect("episodes");
        assert_eq!(times(&eps[0]), vec![MIN, 2 * MIN]);
        assert_eq!(eps[0].oom_kill_ids, vec!["k1".to_string()]);
    }

    #[test]
    fn kill_after_the_final_sample_corroborates_the_last_episode() {
        let s = series("p", &[MIN, 2 * MIN]);
        let k = kill("k1", "p", 2 * MIN + 30_000);
        let eps = split(&s, &[&k], &ranges(0, 0, 60 * MIN)).expect("episodes");
        assert_eq!(eps.len(), 1);
        assert_eq!(eps[0].oom_kill_ids, vec!["k1".to_string()]);
    }

    #[test]
    fn kills_of_other_or_unknown_pods_never_split() {
        let s = series("p", &[MIN, 2 * MIN, 3 * MIN]);
        let other = kill("k1", "q", 2 * MIN + 1);
        let unknown = kill("k2", "", 2 * MIN + 2);
        let eps = split(&s, &[&other, &unknown], &ranges(0, 0, 10 * MIN)).expect("episodes");
        assert_eq!(eps.len(), 1);
        assert!(eps[0].oom_kill_ids.is_empty());
    }

    #[test]
    fn series_without_pod_uid_is_never_split() {
        let s = series("", &[MIN, 2 * MIN, 3 * MIN]);
        let k = kill("k1", "", 2 * MIN + 1);
        let eps = split(&s, &[&k], &ranges(0, 0, 10 * MIN)).expect("episodes");
        assert_eq!(eps.len(), 1);
    }

    #[test]
    fn segment_entirely_before_the_window_is_dropped_but_sets_no_lifetime() {
        let s = series("p", &[MIN, 2 * MIN, 12 * MIN, 13 * MIN]);
        let k = kill("k1", "p", 3 * MIN);
        let eps = split(&s, &[&k], &ranges(0, 10 * MIN, 20 * MIN)).expect("episodes");
        assert_eq!(eps.len(), 1);
        assert_eq!(eps[0].lifetime_start, 12 * MIN);
    }

    #[test]
    fn freshness_is_inclusive_and_rejects_future_or_nonpositive_times() {
        assert!(fresh_at(100, 100 + 300_000, 300_000));
        assert!(!fresh_at(100, 101 + 300_000, 300_000));
        assert!(!fresh_at(200, 100, 300_000));
        assert!(!fresh_at(0, 100, 300_000));
        assert!(!fresh_at(i64::MIN + 1, i64::MAX, 300_000));
    }
}
