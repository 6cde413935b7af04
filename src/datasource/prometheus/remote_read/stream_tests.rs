//! The stream reader over hand-built answers: series continued across frames, queries
//! in turn, chunks cut to the range, overlapping chunks merged, bodies split anywhere.

use bytes::Bytes;
use prost::Message as _;

use super::proto::{Chunk, ChunkEncoding, ChunkedReadResponse, ChunkedSeries, Label};
use super::*;

struct Pieces(VecDeque<Bytes>);

impl Body for Pieces {
    async fn piece(&mut self) -> Result<Option<Bytes>, DatasourceError> {
        Ok(self.0.pop_front())
    }
}

fn chunk(samples: &[(i64, f64)]) -> Chunk {
    Chunk {
        min_time_ms: samples[0].0,
        max_time_ms: samples[samples.len() - 1].0,
        r#type: ChunkEncoding::Xor as i32,
        data: Bytes::from(xor::encode_unordered(samples)),
    }
}

fn series(name: &str, chunks: Vec<Chunk>) -> ChunkedSeries {
    ChunkedSeries {
        labels: vec![Label {
            name: "__name__".into(),
            value: name.into(),
        }],
        chunks,
    }
}

fn frame(query: i64, series: Vec<ChunkedSeries>) -> Vec<u8> {
    let message = ChunkedReadResponse {
        chunked_series: series,
        query_index: query,
    }
    .encode_to_vec();
    let mut out = Vec::new();
    prost::encoding::encode_varint(message.len() as u64, &mut out);
    out.extend(crc32c::crc32c(&message).to_be_bytes());
    out.extend(message);
    out
}

fn query(start_ms: i64, end_ms: i64) -> ReadQuery {
    ReadQuery {
        start_ms,
        end_ms,
        matchers: vec![Matcher::new(MatchType::Eq, "__name__", "a")],
    }
}

async fn read_all(
    wire: &[u8],
    cut: usize,
    queries: &[ReadQuery],
) -> Vec<(usize, String, Vec<i64>)> {
    let pieces = wire.chunks(cut).map(Bytes::copy_from_slice).collect();
    let mut stream = ReadStream::new(Pieces(pieces), queries);
    let mut out = Vec::new();
    while let Some(s) = stream.next().await.expect("series") {
        let times = s.samples.iter().map(|x| x.timestamp).collect();
        out.push((s.query, s.labels["__name__"].clone(), times));
    }
    assert_eq!(stream.counts.bytes, wire.len() as u64);
    assert_eq!(stream.counts.series, out.len() as u64);
    out
}

#[tokio::test]
async fn series_are_whole_in_query_order_cut_to_range_and_merged() {
    let mut wire = frame(
        0,
        vec![
            series("a", vec![chunk(&[(0, 1.0), (10, 2.0)])]),
            series("b", vec![chunk(&[(0, 1.0), (10, 2.0), (20, 3.0)])]),
        ],
    );
    // b continues in the next frame, with an overlapping, out-of-order chunk.
    wire.extend(frame(
        0,
        vec![series(
            "b",
            vec![
                chunk(&[(30, 4.0), (40, 5.0)]),
                chunk(&[(20, 3.0), (25, 3.5)]),
            ],
        )],
    ));
    wire.extend(frame(
        1,
        vec![series(
            "a",
            vec![chunk(&[(100, 1.0), (200, 2.0), (300, 3.0)])],
        )],
    ));
    let queries = [query(10, 30), query(150, 1000)];
    for cut in [1, 5, 13, wire.len()] {
        let got = read_all(&wire, cut, &queries).await;
        assert_eq!(
            got,
            vec![
                (0, "a".to_string(), vec![10]),
                (0, "b".to_string(), vec![10, 20, 25, 30]),
                (1, "a".to_string(), vec![200, 300]),
            ],
            "cut {cut}"
        );
    }
}

#[tokio::test]
async fn a_truncated_answer_an_unasked_query_and_histograms_are_errors() {
    let wire = frame(0, vec![series("a", vec![chunk(&[(0, 1.0)])])]);
    let queries = [query(0, 10)];
    let mut short = ReadStream::new(
        Pieces(VecDeque::from([Bytes::copy_from_slice(
            &wire[..wire.len() - 1],
        )])),
        &queries,
    );
    assert!(short.next().await.is_err());
    let unasked = frame(3, vec![series("a", vec![chunk(&[(0, 1.0)])])]);
    let mut s = ReadStream::new(Pieces(VecDeque::from([Bytes::from(unasked)])), &queries);
    assert!(s.next().await.is_err());
    let mut histogram = chunk(&[(0, 1.0)]);
    histogram.r#type = ChunkEncoding::Histogram as i32;
    let wire = frame(0, vec![series("a", vec![histogram])]);
    let mut s = ReadStream::new(Pieces(VecDeque::from([Bytes::from(wire)])), &queries);
    let err = s.next().await.expect_err("histogram");
    assert!(err.to_string().contains("not XOR"), "{err}");
    let empty = ReadStream::new(Pieces(VecDeque::new()), &queries)
        .next()
        .await;
    assert_eq!(empty.expect("empty answer"), None);
}

#[tokio::test]
async fn a_series_buffer_is_sized_once_from_its_first_chunk_and_the_estimate_is_capped() {
    // A week at 60 s in chunks of 120 samples, as Prometheus stores it, over 3 frames.
    let week: Vec<(i64, f64)> = (0..10_081).map(|i| (i * 60_000, i as f64)).collect();
    let chunks: Vec<Chunk> = week.chunks(120).map(chunk).collect();
    let mut wire = Vec::new();
    for part in chunks.chunks(30) {
        wire.extend(frame(0, vec![series("a", part.to_vec())]));
    }
    let queries = [query(0, 10_080 * 60_000)];
    let pieces = wire.chunks(4096).map(Bytes::copy_from_slice).collect();
    let mut stream = ReadStream::new(Pieces(pieces), &queries);
    let s = stream.next().await.expect("series").expect("one series");
    assert_eq!(s.samples.len(), 10_081);
    // Reserved from the first chunk's spacing (plus one spare slot), never doubled.
    assert!(s.samples.capacity() <= 10_082, "{}", s.samples.capacity());
    assert_eq!(stream.next().await.expect("end"), None);

    // A chunk claiming two samples a millisecond apart cannot make kerf reserve more
    // than the cap, and one sample alone reserves one.
    let mut tight = chunk(&[(0, 1.0), (1, 2.0)]);
    assert_eq!(expected_samples(&tight, 0, i64::MAX / 2), MAX_RESERVED);
    tight.max_time_ms = 0;
    assert_eq!(expected_samples(&tight, 0, 1_000), 2);
    assert_eq!(expected_samples(&chunk(&[(0, 1.0)]), 0, 1_000_000), 1);
}

#[tokio::test]
async fn a_chunk_out_of_order_or_two_values_at_one_time_mark_their_series_faulty() {
    let wire = [
        frame(0, vec![series("ok", vec![chunk(&[(0, 1.0), (10, 2.0)])])]),
        // Time runs backwards inside one chunk: no TSDB writes that.
        frame(
            0,
            vec![series(
                "back",
                vec![chunk(&[(0, 1.0), (20, 2.0), (10, 3.0)])],
            )],
        ),
        // Overlapping chunks that disagree at 20 ms: the engine's contract refuses it.
        frame(
            0,
            vec![series(
                "split",
                vec![
                    chunk(&[(0, 1.0), (20, 2.0)]),
                    chunk(&[(20, 2.5), (30, 3.0)]),
                ],
            )],
        ),
    ]
    .concat();
    let queries = [query(0, 100)];
    let mut stream = ReadStream::new(Pieces(VecDeque::from([Bytes::from(wire)])), &queries);
    let mut faults = Vec::new();
    while let Some(s) = stream.next().await.expect("series") {
        faults.push((s.labels["__name__"].clone(), s.fault.map(|f| f.to_string())));
    }
    assert_eq!(faults[0], ("ok".to_string(), None));
    assert_eq!(faults[1].0, "back");
    assert!(faults[1]
        .1
        .as_deref()
        .is_some_and(|f| f.contains("out of time order")));
    assert_eq!(faults[2].0, "split");
    assert!(faults[2]
        .1
        .as_deref()
        .is_some_and(|f| f.contains("conflicting samples")));
}
