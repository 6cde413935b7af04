//! Prometheus remote read with `STREAMED_XOR_CHUNKS` (Prometheus ≥ 2.13, Mimir, Cortex):
//! one POST carries several selectors (snappy-compressed protobuf); the server streams
//! its stored chunks back in checksummed frames instead of rendering JSON, and kerf
//! decodes each XOR chunk straight into samples. [`ReadStream`] yields one whole series
//! at a time, in the server's order (query by query, series sorted by labels), holding
//! at most one frame and the series being assembled.

pub mod frames;
pub mod http;
pub mod proto;

use std::collections::VecDeque;

use prost::Message as _;

use super::samples::{check_order, join_repeats, trim, SeriesFault};
use crate::analysis::Sample;
use crate::datasource::raw::Labels;
use crate::datasource::DatasourceError;
use crate::xor;
use frames::Frames;
pub use proto::MatchType;
use proto::{ChunkEncoding, ChunkedReadResponse, ChunkedSeries, LabelMatcher, ReadRequest};

/// The content type of a streamed answer (anything else means the server did not stream).
pub const STREAMED_CONTENT_TYPE: &str = "application/x-streamed-protobuf";

/// One label matcher of a selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matcher {
    pub kind: MatchType,
    pub name: String,
    pub value: String,
}

impl Matcher {
    pub fn new(kind: MatchType, name: &str, value: &str) -> Matcher {
        Matcher {
            kind,
            name: name.to_string(),
            value: value.to_string(),
        }
    }
}

/// One selector over `[start_ms, end_ms]` (both inclusive).
#[derive(Debug, Clone, PartialEq)]
pub struct ReadQuery {
    pub start_ms: i64,
    pub end_ms: i64,
    pub matchers: Vec<Matcher>,
}

/// One whole series of an answer: which query it answers, its labels, and its raw
/// samples inside the query's range, in time order (staleness markers included).
#[derive(Debug, Clone, PartialEq)]
pub struct ReadSeries {
    pub query: usize,
    pub labels: Labels,
    pub samples: Vec<Sample>,
    /// What was wrong with the samples the server sent (its workload is not analyzed).
    pub fault: Option<SeriesFault>,
}

/// The request body: a snappy block (not the framed format) of the protobuf request,
/// asking for streamed chunks only.
pub fn encode_request(queries: &[ReadQuery]) -> Result<Vec<u8>, DatasourceError> {
    let request = ReadRequest {
        queries: queries
            .iter()
            .map(|q| proto::Query {
                start_timestamp_ms: q.start_ms,
                end_timestamp_ms: q.end_ms,
                matchers: q
                    .matchers
                    .iter()
                    .map(|m| LabelMatcher {
                        r#type: m.kind as i32,
                        name: m.name.clone(),
                        value: m.value.clone(),
                    })
                    .collect(),
            })
            .collect(),
        accepted_response_types: vec![proto::ResponseType::StreamedXorChunks as i32],
    };
    snap::raw::Encoder::new()
        .compress_vec(&request.encode_to_vec())
        .map_err(|e| {
            DatasourceError::Query(format!("cannot compress the remote-read request: {e}"))
        })
}

/// Where a [`ReadStream`] gets its bytes (the HTTP answer body, or bytes in tests).
pub trait Body: Send {
    /// The next piece of the body; `None` at its end.
    fn piece(
        &mut self,
    ) -> impl std::future::Future<Output = Result<Option<bytes::Bytes>, DatasourceError>> + Send;
}

/// What a stream has read so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadCounts {
    pub bytes: u64,
    pub samples: u64,
    pub series: u64,
    /// Bytes of the chunks received (what the server stores, whole chunks, including
    /// any that end up outside the range), without labels, protobuf and frames.
    pub chunk_bytes: u64,
}

/// A streamed answer, read series by series.
pub struct ReadStream<B: Body> {
    body: B,
    frames: Frames,
    /// `(start, end)` of each query, to cut whole chunks to the range asked for.
    ranges: Vec<(i64, i64)>,
    /// Series of the last decoded frame not yet looked at.
    pending: VecDeque<(usize, ChunkedSeries)>,
    /// The series being assembled (a long series continues in the next frame).
    current: Option<ReadSeries>,
    pub counts: ReadCounts,
}

/// The most samples reserved for a series before its chunks show them (16 MiB: a week
/// at one sample a second fits); past it the buffer grows as samples arrive.
const MAX_RESERVED: usize = 1 << 20;

/// How many samples a series whose first chunk in range is `first` will hold in
/// `[from, to]`, from that chunk's sample spacing, so its buffer is sized once
/// instead of doubled and copied on the way (10,000 samples a week at 60 s).
fn expected_samples(first: &proto::Chunk, from: i64, to: i64) -> usize {
    let n = xor::sample_count(&first.data).unwrap_or(0);
    let span = first.max_time_ms - first.min_time_ms;
    if n < 2 || span <= 0 {
        return n;
    }
    let spacing = (span / (n as i64 - 1)).max(1);
    let ahead = (to - first.min_time_ms.max(from)).max(0) / spacing + 2;
    usize::try_from(ahead)
        .unwrap_or(MAX_RESERVED)
        .clamp(n, MAX_RESERVED)
}

fn decode_err(e: impl std::fmt::Display) -> DatasourceError {
    DatasourceError::Decode(format!("remote read: {e}"))
}

impl<B: Body> ReadStream<B> {
    pub fn new(body: B, queries: &[ReadQuery]) -> ReadStream<B> {
        ReadStream {
            body,
            frames: Frames::default(),
            ranges: queries.iter().map(|q| (q.start_ms, q.end_ms)).collect(),
            pending: VecDeque::new(),
            current: None,
            counts: ReadCounts::default(),
        }
    }

    /// The next whole series, or `None` once the answer is complete. A series of query
    /// `i` means every query before `i` is complete.
    pub async fn next(&mut self) -> Result<Option<ReadSeries>, DatasourceError> {
        loop {
            if let Some((query, series)) = self.pending.pop_front() {
                let labels: Labels = series
                    .labels
                    .into_iter()
                    .map(|l| (l.name, l.value))
                    .collect();
                let continues = self
                    .current
                    .as_ref()
                    .is_some_and(|c| c.query == query && c.labels == labels);
                if !continues {
                    if let Some(done) = self.current.take() {
                        // The series just popped starts the next one: keep it for the
                        // next call and hand out the finished one.
                        let labels = labels
                            .into_iter()
                            .map(|(name, value)| proto::Label { name, value })
                            .collect();
                        let chunks = series.chunks;
                        self.pending
                            .push_front((query, ChunkedSeries { labels, chunks }));
                        return Ok(Some(self.complete(done)));
                    }
                    self.current = Some(ReadSeries {
                        query,
                        labels,
                        samples: Vec::new(),
                        fault: None,
                    });
                }
                self.append(&series.chunks)?;
                continue;
            }
            if let Some(message) = self.frames.next_frame().map_err(decode_err)? {
                let frame = ChunkedReadResponse::decode(message).map_err(decode_err)?;
                let query = usize::try_from(frame.query_index)
                    .ok()
                    .filter(|q| *q < self.ranges.len())
                    .ok_or_else(|| decode_err("frame for a query that was not asked"))?;
                self.pending
                    .extend(frame.chunked_series.into_iter().map(|s| (query, s)));
                continue;
            }
            match self.body.piece().await? {
                Some(bytes) => {
                    self.counts.bytes += bytes.len() as u64;
                    self.frames.push(&bytes);
                }
                None => {
                    self.frames.finish().map_err(decode_err)?;
                    return Ok(self.current.take().map(|s| self.complete(s)));
                }
            }
        }
    }

    fn append(&mut self, chunks: &[proto::Chunk]) -> Result<(), DatasourceError> {
        let Some(series) = self.current.as_mut() else {
            return Ok(());
        };
        let (from, to) = self.ranges[series.query];
        if series.samples.capacity() == 0 {
            if let Some(first) = chunks.iter().find(|c| c.max_time_ms >= from) {
                series.samples.reserve(expected_samples(first, from, to));
            }
        }
        for chunk in chunks {
            self.counts.chunk_bytes += chunk.data.len() as u64;
            if chunk.max_time_ms < from || chunk.min_time_ms > to {
                continue;
            }
            if chunk.r#type != ChunkEncoding::Xor as i32 {
                // Native histograms carry no usage kerf reads; say so rather than guess.
                return Err(decode_err(format!(
                    "chunk encoding {} is not XOR (float samples)",
                    chunk.r#type
                )));
            }
            let before = series.samples.len();
            let n = xor::decode(&chunk.data, from, to, &mut series.samples).map_err(decode_err)?;
            self.counts.samples += n as u64;
            // Within a chunk time only moves forward; chunks may overlap each other.
            if let Err(fault) = check_order(&series.samples[before..]) {
                series.fault.get_or_insert(fault);
            }
        }
        Ok(())
    }

    /// A series whose chunks are all read: in time order, one sample per timestamp
    /// (chunks of overlapping blocks can repeat samples; two values at one time are a
    /// fault).
    fn complete(&mut self, mut series: ReadSeries) -> ReadSeries {
        self.counts.series += 1;
        if let Err(fault) = join_repeats(&mut series.samples) {
            series.fault.get_or_insert(fault);
        }
        trim(&mut series.samples);
        series
    }
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
