//! Prometheus remote write (`prometheus.WriteRequest`, `prompb/remote.proto` and
//! `types.proto`), written by hand as `prost` structs like the remote-read ones: samples
//! with the timestamps their writer chose, staleness markers included, POSTed as a
//! snappy block. Tests fill Prometheus and VictoriaMetrics with one dataset this way;
//! a hub that takes remote write reads the same messages.

use prost::Message as _;

use super::remote_read::proto::Label;
use crate::datasource::raw::Labels;
use crate::datasource::DatasourceError;

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

/// `prometheus.Sample`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct WriteSample {
    #[prost(double, tag = "1")]
    pub value: f64,
    #[prost(int64, tag = "2")]
    pub timestamp: i64,
}

/// One series of a write: its labels (`__name__` included) and `(ms, value)` samples.
pub fn series(labels: &Labels, samples: &[(i64, f64)]) -> TimeSeries {
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

/// The body of `POST /api/v1/write`: the request as a snappy block.
pub fn encode(request: &WriteRequest) -> Result<Vec<u8>, DatasourceError> {
    snap::raw::Encoder::new()
        .compress_vec(&request.encode_to_vec())
        .map_err(|e| DatasourceError::Query(format!("cannot compress the remote write: {e}")))
}

/// A body of `POST /api/v1/write` read back.
pub fn decode(body: &[u8]) -> Result<WriteRequest, DatasourceError> {
    let raw = snap::raw::Decoder::new()
        .decompress_vec(body)
        .map_err(|e| DatasourceError::Decode(format!("remote write: {e}")))?;
    WriteRequest::decode(raw.as_slice())
        .map_err(|e| DatasourceError::Decode(format!("remote write: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datasource::prometheus::samples::STALE_NAN_BITS;

    #[test]
    fn a_write_keeps_its_timestamps_and_the_staleness_marker_bits() {
        let labels: Labels = [("__name__".to_string(), "m".to_string())].into();
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
    }
}
