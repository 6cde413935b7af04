//! One dataset written sample for sample into real TSDBs: remote write (kerf's
//! `remote_write` messages) into Prometheus (`--web.enable-remote-write-receiver`) and
//! VictoriaMetrics, staleness markers included, oldest first across every series so head
//! compaction never puts a later write out of bounds. And the reference: a server's
//! stored samples read back independently of kerf's client, with a raw `/api/v1/query`
//! of `selector[window]` parsed here.

#![allow(dead_code)]

use std::collections::BTreeMap;

use kerf::datasource::prometheus::samples::STALE_NAN_BITS;
use kerf::datasource::raw::Labels;
use kerf::wire::remote_write::{self, WriteRequest};

/// The staleness marker Prometheus writes when a target or series disappears.
pub fn stale() -> f64 {
    f64::from_bits(STALE_NAN_BITS)
}

/// Series as written: labels (with `__name__`) → `(ms, value)` in time order.
#[derive(Default, Clone)]
pub struct Dataset {
    pub series: BTreeMap<Labels, Vec<(i64, f64)>>,
}

pub fn labels(name: &str, pairs: &[(&str, &str)]) -> Labels {
    let mut out: Labels = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    out.insert("__name__".into(), name.into());
    out
}

impl Dataset {
    pub fn add(&mut self, name: &str, pairs: &[(&str, &str)], samples: Vec<(i64, f64)>) {
        self.series
            .entry(labels(name, pairs))
            .or_default()
            .extend(samples);
    }

    /// What a TSDB stores of `[from, to]` as samples: every written sample but the
    /// staleness markers (bits of each value).
    pub fn stored(&self, from: i64, to: i64) -> BTreeMap<Labels, Vec<(i64, u64)>> {
        self.series
            .iter()
            .map(|(l, s)| {
                let kept: Vec<(i64, u64)> = s
                    .iter()
                    .filter(|(t, v)| (from..=to).contains(t) && v.to_bits() != STALE_NAN_BITS)
                    .map(|(t, v)| (*t, v.to_bits()))
                    .collect();
                (l.clone(), kept)
            })
            .filter(|(_, s)| !s.is_empty())
            .collect()
    }

    pub fn sample_count(&self) -> usize {
        self.series.values().map(Vec::len).sum()
    }

    /// The write bodies, oldest first: slice `k` holds every series' samples of
    /// `[first + k × slice, first + (k + 1) × slice)`.
    fn bodies(&self, slice_ms: i64) -> Vec<Vec<u8>> {
        let first = self
            .series
            .values()
            .filter_map(|s| s.first().map(|x| x.0))
            .min()
            .unwrap_or(0);
        let last = self
            .series
            .values()
            .filter_map(|s| s.last().map(|x| x.0))
            .max()
            .unwrap_or(0);
        let mut out = Vec::new();
        let mut from = first;
        while from <= last {
            let to = from + slice_ms;
            let timeseries = self
                .series
                .iter()
                .filter_map(|(l, s)| {
                    let part: Vec<(i64, f64)> = s
                        .iter()
                        .copied()
                        .filter(|(t, _)| (from..to).contains(t))
                        .collect();
                    (!part.is_empty()).then(|| remote_write::series(l, &part))
                })
                .collect();
            let request = WriteRequest { timeseries };
            out.push(remote_write::encode(&request).expect("encode the write"));
            from = to;
        }
        out
    }

    /// Writes the dataset to `url`'s `/api/v1/write`, oldest first.
    pub async fn write_to(&self, url: &str) {
        let http = super::client();
        for body in self.bodies(10 * 60_000) {
            super::prometheus::remote_write(&http, url, body).await;
        }
    }
}

/// The samples `url` stores for `selector` in `[end − window, end]`: a raw instant
/// query of the range selector, parsed here (values by their bits). VictoriaMetrics
/// answers its staleness markers as `NaN`; they are left out, as they are no samples.
pub async fn stored(
    url: &str,
    selector: &str,
    end_ms: i64,
    window_ms: i64,
) -> BTreeMap<Labels, Vec<(i64, u64)>> {
    let form = [
        ("query", format!("{selector}[{window_ms}ms]")),
        ("time", format!("{}.{:03}", end_ms / 1000, end_ms % 1000)),
    ];
    let body: serde_json::Value = super::client()
        .post(format!("{url}/api/v1/query"))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(serde_urlencoded::to_string(form).expect("form"))
        .send()
        .await
        .expect("raw query")
        .json()
        .await
        .expect("raw query json");
    assert_eq!(body["data"]["resultType"], "matrix", "{body}");
    let mut out = BTreeMap::new();
    for item in body["data"]["result"].as_array().expect("result") {
        let labels: Labels = serde_json::from_value(item["metric"].clone()).expect("labels");
        let values = item["values"].as_array().expect("values");
        let samples = values
            .iter()
            .map(|pair| {
                let t = pair[0].as_f64().expect("time");
                let v: f64 = pair[1].as_str().expect("value").parse().expect("float");
                ((t * 1000.0).round() as i64, v)
            })
            .filter(|(_, v)| !v.is_nan())
            .map(|(t, v)| (t, v.to_bits()))
            .collect();
        out.insert(labels, samples);
    }
    out
}
