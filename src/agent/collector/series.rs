//! Collected samples as remote write carries them: one [`TimeSeries`] per series and
//! round (labels sorted by name, `__name__` among them, none empty, one sample), never
//! sent twice for the same time ([`Fresh`]: a kubelet that has not moved on serves its
//! last sample again), and cut into write requests of at most [`SAMPLES_PER_REQUEST`]
//! samples, each encoded once, so a retry resends exactly the same bytes.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use bytes::Bytes;

use crate::wire::remote_write::{
    encode, Label, RemoteWriteError, TimeSeries, WriteRequest, WriteSample,
};

/// Samples in one write request (Prometheus's own `max_samples_per_send`): a body of
/// some 100 KiB, well inside what the hub takes at once.
pub const SAMPLES_PER_REQUEST: usize = 2_000;

/// How long a series that stopped appearing is remembered by [`Fresh`].
const FORGET_AFTER_MS: i64 = 3_600_000;

/// One sample of the series `name{labels}`, labels sorted by name as remote write wants.
/// A label with an empty value is left out: remote write refuses empty values, and
/// Prometheus reads an empty label as an absent one (`container=""` matches either).
pub fn point<K: Into<String>, V: Into<String>>(
    name: &str,
    labels: impl IntoIterator<Item = (K, V)>,
    value: f64,
    timestamp_ms: i64,
) -> TimeSeries {
    let mut labels: Vec<Label> = labels
        .into_iter()
        .map(|(k, v)| Label {
            name: k.into(),
            value: v.into(),
        })
        .filter(|l| !l.value.is_empty())
        .chain([Label {
            name: "__name__".into(),
            value: name.into(),
        }])
        .collect();
    labels.sort_by(|a, b| a.name.cmp(&b.name));
    TimeSeries {
        labels,
        samples: vec![WriteSample {
            value,
            timestamp: timestamp_ms,
        }],
    }
}

fn key(labels: &[Label]) -> u64 {
    let mut h = DefaultHasher::new();
    labels.hash(&mut h);
    h.finish()
}

/// The last time sent per series: a sample at or before it is not sent again (the hub
/// would take an exact duplicate, but refuses a series going back in time).
#[derive(Default)]
pub struct Fresh {
    last: HashMap<u64, i64>,
}

impl Fresh {
    /// The samples of `points` that are newer than what was sent of their series.
    pub fn keep(&mut self, points: Vec<TimeSeries>, now_ms: i64) -> Vec<TimeSeries> {
        let out: Vec<TimeSeries> = points
            .into_iter()
            .filter_map(|mut p| {
                let slot = self.last.entry(key(&p.labels)).or_insert(i64::MIN);
                p.samples.retain(|s| s.timestamp > *slot);
                let newest = p.samples.iter().map(|s| s.timestamp).max()?;
                *slot = newest;
                Some(p)
            })
            .collect();
        self.last.retain(|_, t| *t >= now_ms - FORGET_AFTER_MS);
        out
    }

    /// Series remembered.
    #[cfg(test)]
    fn remembered(&self) -> usize {
        self.last.len()
    }
}

/// Encoded write requests of `points`: each body with its sample count.
pub fn requests(points: Vec<TimeSeries>) -> Result<Vec<(Bytes, usize)>, RemoteWriteError> {
    let mut out = Vec::new();
    let mut request = WriteRequest::default();
    let mut samples = 0;
    for p in points {
        samples += p.samples.len();
        request.timeseries.push(p);
        if samples >= SAMPLES_PER_REQUEST {
            out.push((Bytes::from(encode(&request)?), samples));
            (request, samples) = (WriteRequest::default(), 0);
        }
    }
    if samples > 0 {
        out.push((Bytes::from(encode(&request)?), samples));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::remote_write::decode;

    #[test]
    fn a_point_sorts_its_labels_with_the_name_among_them_and_leaves_empty_ones_out() {
        let p = point(
            "m",
            [("pod", "web-1"), ("container", ""), ("namespace", "shop")],
            2.5,
            7,
        );
        let names: Vec<&str> = p.labels.iter().map(|l| l.name.as_str()).collect();
        assert_eq!(names, ["__name__", "namespace", "pod"]);
        assert_eq!(p.labels[0].value, "m");
        assert_eq!((p.samples[0].value, p.samples[0].timestamp), (2.5, 7));
    }

    #[test]
    fn a_sample_not_newer_than_the_last_sent_of_its_series_is_left_out() {
        let mut fresh = Fresh::default();
        let round = |t_a: i64, t_b: i64| {
            vec![
                point("m", [("pod", "a")], 1.0, t_a),
                point("m", [("pod", "b")], 1.0, t_b),
            ]
        };
        assert_eq!(fresh.keep(round(10, 10), 10).len(), 2);
        // The kubelet of `a` has not moved on; `b`'s has.
        let kept = fresh.keep(round(10, 20), 20);
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].labels[1].value, "b");
        assert!(
            fresh.keep(round(5, 20), 20).is_empty(),
            "never back in time"
        );
        // A series gone for an hour is forgotten.
        fresh.keep(vec![point("m", [("pod", "b")], 1.0, 4_000_000)], 4_000_000);
        assert_eq!(fresh.remembered(), 1);
    }

    #[test]
    fn requests_hold_at_most_their_share_of_samples_and_decode_to_what_was_collected() {
        let points: Vec<TimeSeries> = (0..SAMPLES_PER_REQUEST * 2 + 5)
            .map(|i| point("m", [("pod", format!("p{i}"))], i as f64, 1_000))
            .collect();
        let made = requests(points).expect("encode");
        let counts: Vec<usize> = made.iter().map(|(_, n)| *n).collect();
        assert_eq!(counts, [SAMPLES_PER_REQUEST, SAMPLES_PER_REQUEST, 5]);
        let last = decode(&made[2].0).expect("decode");
        assert_eq!(last.sample_count(), 5);
        assert_eq!(
            last.timeseries[4].labels[1].value,
            format!("p{}", SAMPLES_PER_REQUEST * 2 + 4)
        );
        assert!(requests(Vec::new()).expect("nothing").is_empty());
    }
}
