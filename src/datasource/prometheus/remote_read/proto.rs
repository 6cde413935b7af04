//! The remote-read messages kerf sends and reads, written by hand as `prost` structs
//! (field numbers and types from Prometheus's `prompb/remote.proto` and `types.proto`):
//! no build script, no protoc. Only what kerf uses is declared; unknown fields of an
//! answer are skipped by the decoder, so newer servers stay readable.

/// `prometheus.ReadRequest`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ReadRequest {
    #[prost(message, repeated, tag = "1")]
    pub queries: Vec<Query>,
    /// `ResponseType` values the client accepts, preferred first.
    #[prost(enumeration = "ResponseType", repeated, tag = "2")]
    pub accepted_response_types: Vec<i32>,
}

/// `prometheus.ReadRequest.ResponseType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum ResponseType {
    /// One snappy-compressed `ReadResponse` with raw samples (not used by kerf).
    Samples = 0,
    /// Length-prefixed, checksummed `ChunkedReadResponse` frames of stored XOR chunks.
    StreamedXorChunks = 1,
}

/// `prometheus.Query`: one selector over a time range (both ends inclusive, ms).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Query {
    #[prost(int64, tag = "1")]
    pub start_timestamp_ms: i64,
    #[prost(int64, tag = "2")]
    pub end_timestamp_ms: i64,
    #[prost(message, repeated, tag = "3")]
    pub matchers: Vec<LabelMatcher>,
}

/// `prometheus.LabelMatcher`.
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct LabelMatcher {
    #[prost(enumeration = "MatchType", tag = "1")]
    pub r#type: i32,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(string, tag = "3")]
    pub value: String,
}

/// `prometheus.LabelMatcher.Type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum MatchType {
    Eq = 0,
    Neq = 1,
    Re = 2,
    Nre = 3,
}

/// `prometheus.ChunkedReadResponse`: one frame of a streamed answer.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ChunkedReadResponse {
    #[prost(message, repeated, tag = "1")]
    pub chunked_series: Vec<ChunkedSeries>,
    /// Which query of the request these series answer.
    #[prost(int64, tag = "2")]
    pub query_index: i64,
}

/// `prometheus.ChunkedSeries`: a series and some of its chunks (a long series continues
/// in the next frame with the same labels).
#[derive(Clone, PartialEq, prost::Message)]
pub struct ChunkedSeries {
    #[prost(message, repeated, tag = "1")]
    pub labels: Vec<Label>,
    #[prost(message, repeated, tag = "2")]
    pub chunks: Vec<Chunk>,
}

/// `prometheus.Label`.
#[derive(Clone, PartialEq, Eq, prost::Message)]
pub struct Label {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub value: String,
}

/// `prometheus.Chunk`: one stored chunk, whole (it may reach outside the query's range).
#[derive(Clone, PartialEq, prost::Message)]
pub struct Chunk {
    #[prost(int64, tag = "1")]
    pub min_time_ms: i64,
    #[prost(int64, tag = "2")]
    pub max_time_ms: i64,
    #[prost(enumeration = "ChunkEncoding", tag = "3")]
    pub r#type: i32,
    /// Shares the frame's buffer (no copy per chunk).
    #[prost(bytes = "bytes", tag = "4")]
    pub data: bytes::Bytes,
}

/// `prometheus.Chunk.Encoding`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, prost::Enumeration)]
#[repr(i32)]
pub enum ChunkEncoding {
    Unknown = 0,
    Xor = 1,
    Histogram = 2,
    FloatHistogram = 3,
}
