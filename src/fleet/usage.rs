//! What a cluster's writers send to `POST /v1/clusters/{cluster}/write`: a Prometheus
//! remote-write 1.0 body (a snappy block holding a `WriteRequest`), read within its
//! bounds and stored in the embedded usage store in one transaction. The kerf agent's
//! collector ships its samples this way, and so can any standard writer (Prometheus in
//! agent mode, Grafana Alloy, vmagent, the OpenTelemetry collector).
//!
//! A body that cannot be read is refused whole ([`WriteError`], nothing stored). A
//! readable one is stored sample by sample under the store's rules: what it refuses
//! (out of order, too old, a conflicting value, a series past the cluster's limit, ...)
//! is counted by reason in the [`WriteOutcome`], and the rest is stored.

use std::collections::BTreeMap;

use crate::store::usage::{AppendOutcome, Labels, Refusal, UsageStore, WriteSeries};
use crate::store::StoreError;
use crate::wire::remote_write::{TimeSeries, WriteRequest};

/// How much larger than its body a write may grow once decompressed.
pub const MAX_EXPANSION: usize = 8;

/// Why a write was not stored at all.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// Larger than the hub takes, as sent or decompressed.
    #[error("the write is {size} bytes{}; at most {limit} are taken", if *.decompressed { " decompressed" } else { "" })]
    TooLarge {
        size: usize,
        limit: usize,
        decompressed: bool,
    },
    /// Not a snappy block (the block format, not the framed one).
    #[error("the body is not a snappy block: {0}")]
    Snappy(String),
    /// Decompressed, but not a `prometheus.WriteRequest`.
    #[error("the body is not a remote-write 1.0 WriteRequest: {0}")]
    Protobuf(String),
    /// The usage store failed (nothing of the write was kept): try again.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What a write did: the store's outcome, with the series refused before it (two labels
/// of one name) counted in.
pub type WriteOutcome = AppendOutcome;

/// Reads `body` (at most `max_bytes` as sent) and stores its samples for `cluster` at
/// the hub's `now_ms`.
pub async fn write(
    usage: &UsageStore,
    now_ms: i64,
    cluster: &str,
    body: &[u8],
    max_bytes: usize,
) -> Result<WriteOutcome, WriteError> {
    let request = read(body, max_bytes)?;
    let (series, refused) = into_series(request);
    let mut outcome = usage.append(cluster, series, now_ms).await?;
    for (samples, example) in refused {
        *outcome.refused.entry(Refusal::BadLabels).or_default() += samples;
        if outcome.refused_examples.len() < crate::store::usage::REFUSED_EXAMPLES {
            outcome.refused_examples.push(example);
        }
    }
    Ok(outcome)
}

/// The request in `body`, within its bounds.
pub fn read(body: &[u8], max_bytes: usize) -> Result<WriteRequest, WriteError> {
    use prost::Message as _;
    if body.len() > max_bytes {
        return Err(WriteError::TooLarge {
            size: body.len(),
            limit: max_bytes,
            decompressed: false,
        });
    }
    let limit = max_bytes.saturating_mul(MAX_EXPANSION);
    // The block's header states its decompressed length: checked before allocating.
    let size = snap::raw::decompress_len(body).map_err(|e| WriteError::Snappy(e.to_string()))?;
    if size > limit {
        return Err(WriteError::TooLarge {
            size,
            limit,
            decompressed: true,
        });
    }
    let raw = snap::raw::Decoder::new()
        .decompress_vec(body)
        .map_err(|e| WriteError::Snappy(e.to_string()))?;
    WriteRequest::decode(raw.as_slice()).map_err(|e| WriteError::Protobuf(e.to_string()))
}

/// The request's series as the store takes them, and the series refused here (a label
/// name given twice: which value is meant cannot be told) as (samples, example).
fn into_series(request: WriteRequest) -> (Vec<WriteSeries>, Vec<(u64, String)>) {
    let mut series = Vec::with_capacity(request.timeseries.len());
    let mut refused = Vec::new();
    for TimeSeries { labels, samples } in request.timeseries {
        let count = labels.len();
        let map: Labels = labels.into_iter().map(|l| (l.name, l.value)).collect();
        if map.len() != count {
            let name = map.get("__name__").map(String::as_str).unwrap_or("");
            refused.push((
                samples.len() as u64,
                format!("{name}{{…}}: a label name given twice"),
            ));
            continue;
        }
        series.push(WriteSeries {
            labels: map,
            samples: samples.iter().map(|s| (s.timestamp, s.value)).collect(),
        });
    }
    (series, refused)
}

/// The outcome's refusals as one line for the writer's log: counts by reason, then a
/// few examples naming their series.
pub fn refusal_summary(outcome: &WriteOutcome) -> String {
    let counts: BTreeMap<&str, u64> = outcome
        .refused
        .iter()
        .map(|(reason, n)| (reason.as_str(), *n))
        .collect();
    let counts: Vec<String> = counts.iter().map(|(r, n)| format!("{n} {r}")).collect();
    let mut line = format!("samples refused: {}", counts.join(", "));
    if !outcome.refused_examples.is_empty() {
        line.push_str("; e.g. ");
        line.push_str(&outcome.refused_examples.join("; "));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::remote_write::{encode, Label, WriteSample};

    fn label(name: &str, value: &str) -> Label {
        Label {
            name: name.into(),
            value: value.into(),
        }
    }

    #[test]
    fn a_body_past_its_bounds_or_not_a_write_is_refused_naming_why() {
        let request = WriteRequest {
            timeseries: vec![TimeSeries {
                labels: vec![label("__name__", "m")],
                samples: vec![WriteSample {
                    value: 1.0,
                    timestamp: 5,
                }],
            }],
        };
        let body = encode(&request).unwrap();
        assert_eq!(read(&body, 1 << 20).unwrap(), request);
        assert!(matches!(
            read(&body, 4),
            Err(WriteError::TooLarge {
                decompressed: false,
                ..
            })
        ));
        // A block whose header claims 1 GiB is refused before anything is allocated.
        let mut bomb = Vec::new();
        let mut n: u64 = 1 << 30;
        while n >= 0x80 {
            bomb.push((n as u8) | 0x80);
            n >>= 7;
        }
        bomb.push(n as u8);
        bomb.extend_from_slice(b"\x00");
        assert!(matches!(
            read(&bomb, 1 << 20),
            Err(WriteError::TooLarge {
                decompressed: true,
                ..
            })
        ));
        assert!(matches!(
            read(b"\xff\xff\xff\xff\xff", 1 << 20),
            Err(WriteError::Snappy(_))
        ));
        let not_proto = snap::raw::Encoder::new().compress_vec(b"\x0a\xff").unwrap();
        assert!(matches!(
            read(&not_proto, 1 << 20),
            Err(WriteError::Protobuf(_))
        ));
    }

    #[test]
    fn a_series_naming_a_label_twice_is_refused_and_the_rest_kept() {
        let sample = WriteSample {
            value: 1.0,
            timestamp: 5,
        };
        let request = WriteRequest {
            timeseries: vec![
                TimeSeries {
                    labels: vec![label("__name__", "a"), label("pod", "x"), label("pod", "y")],
                    samples: vec![sample.clone(), sample.clone()],
                },
                TimeSeries {
                    labels: vec![label("__name__", "b")],
                    samples: vec![sample],
                },
            ],
        };
        let (series, refused) = into_series(request);
        assert_eq!(series.len(), 1);
        assert_eq!(series[0].labels["__name__"], "b");
        assert_eq!(refused, vec![(2, "a{…}: a label name given twice".into())]);
    }
}
