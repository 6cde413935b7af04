//! Prometheus remote write 1.0 (`prometheus.WriteRequest`, `prompb/remote.proto` and
//! `types.proto`), written by hand as `prost` structs: samples with the timestamps their
//! writer chose, staleness markers included, sent as one snappy block (`Content-Encoding:
//! snappy`, `Content-Type: application/x-protobuf`, `X-Prometheus-Remote-Write-Version:
//! 0.1.0`). The agent ships what it collects to the hub this way
//! (`POST /v1/clusters/{cluster}/write`), the hub reads the same messages, and tests fill
//! Prometheus and VictoriaMetrics with one dataset through it.

use std::collections::BTreeMap;

use prost::Message as _;

/// The header naming the protocol version a write speaks.
pub const VERSION_HEADER: &str = "X-Prometheus-Remote-Write-Version";
/// The value of [`VERSION_HEADER`] for these messages.
pub const VERSION: &str = "0.1.0";
/// The `Content-Type` of a write.
pub const CONTENT_TYPE: &str = "application/x-protobuf";
/// The `Content-Encoding` of a write.
pub const CONTENT_ENCODING: &str = "snappy";

/// A body that cannot be made or read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RemoteWriteError {
    #[error("cannot compress the remote write: {0}")]
    Compress(String),
    #[error("the remote write is not a snappy block: {0}")]
    Snappy(String),
    #[error("the remote write is not a WriteRequest: {0}")]
    Protobuf(String),
}

/// `prometheus.WriteRequest`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct WriteRequest {
    #[prost(message, repeated, tag = "1")]
    pub timeseries: Vec<TimeSeries>,
}

/// `prometheus.TimeSeries`: labels (sorted by name) and samples in time order.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TimeSeries {
    #[prost(message, repeated, tag = "1")]
    pub labels: Vec<Label>,
    #[prost(message, repeated, tag = "2")]
    pub samples: Vec<WriteSample>,
}

/// `prometheus.Label`.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, prost::Message)]
pub struct Label {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub value: String,
}

/// `prometheus.Sample`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct WriteSample {
    #[prost(double, tag = "1")]
    pub value: f64,
    #[prost(int64, tag = "2")]
    pub timestamp: i64,
}

/// One series of a write: its labels (`__name__` included; a map, so sorted by name) and
/// `(ms, value)` samples.
pub fn series(labels: &BTreeMap<String, String>, samples: &[(i64, f64)]) -> TimeSeries {
    TimeSeries {
        labels: labels
            .iter()
            .map(|(name, value)| Label {
                name: name.clone(),
                value: value.clone(),
            })
            .collect(),
        samples: samples
            .iter()
            .map(|&(timestamp, value)| WriteSample { value, timestamp })
            .collect(),
    }
}

impl WriteRequest {
    /// Samples in the request, over all its series.
    pub fn sample_count(&self) -> usize {
        self.timeseries.iter().map(|s| s.samples.len()).sum()
    }
}

/// The body of a write: the request as a snappy block.
pub fn encode(request: &WriteRequest) -> Result<Vec<u8>, RemoteWriteError> {
    snap::raw::Encoder::new()
        .compress_vec(&request.encode_to_vec())
        .map_err(|e| RemoteWriteError::Compress(e.to_string()))
}

/// A body of a write read back.
pub fn decode(body: &[u8]) -> Result<WriteRequest, RemoteWriteError> {
    let raw = snap::raw::Decoder::new()
        .decompress_vec(body)
        .map_err(|e| RemoteWriteError::Snappy(e.to_string()))?;
    WriteRequest::decode(raw.as_slice()).map_err(|e| RemoteWriteError::Protobuf(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Prometheus's staleness marker (`value.StaleNaN`).
    const STALE_NAN_BITS: u64 = 0x7ff0_0000_0000_0002;

    #[test]
    fn a_write_keeps_its_timestamps_and_the_staleness_marker_bits() {
        let labels: BTreeMap<String, String> = [("__name__".to_string(), "m".to_string())].into();
        let stale = f64::from_bits(STALE_NAN_BITS);
        let request = WriteRequest {
            timeseries: vec![series(&labels, &[(1_500, 1.0), (2_750, stale)])],
        };
        let back = decode(&encode(&request).expect("encode")).expect("decode");
        assert_eq!(back.timeseries[0].samples[0].timestamp, 1_500);
        assert_eq!(
            back.timeseries[0].samples[1].value.to_bits(),
            STALE_NAN_BITS
        );
        assert_eq!(back.timeseries[0].labels[0].name, "__name__");
        assert_eq!(back.sample_count(), 2);
    }

    #[test]
    fn a_body_that_is_not_snappy_or_not_a_request_says_which() {
        assert!(matches!(
            decode(b"\xff\xff\xff\xff"),
            Err(RemoteWriteError::Snappy(_))
        ));
        let not_proto = snap::raw::Encoder::new()
            .compress_vec(b"\x0a\xff")
            .expect("compress");
        assert!(matches!(
            decode(&not_proto),
            Err(RemoteWriteError::Protobuf(_))
        ));
    }
}
