//! Encoder and decoder together over the edge cases: every delta-of-delta bucket and its
//! negative side, window reuse and renewal, a 64-bit XOR, NaN bits and the range cut;
//! resuming a chunk anywhere gives the bytes of writing it at once. Both are checked
//! against a real Prometheus's chunks in the integration tests.

use super::*;

fn roundtrip(samples: &[(i64, f64)]) {
    let chunk = encode(samples).expect("increasing times");
    let mut out = Vec::new();
    let n = decode(&chunk, i64::MIN, i64::MAX, &mut out).expect("decode");
    assert_eq!(n, samples.len());
    let got: Vec<(i64, u64)> = out
        .iter()
        .map(|s| (s.timestamp, s.value.to_bits()))
        .collect();
    let want: Vec<(i64, u64)> = samples.iter().map(|(t, v)| (*t, v.to_bits())).collect();
    assert_eq!(got, want);
}

#[test]
fn every_time_bucket_and_value_window_round_trips_bit_for_bit() {
    let base = 1_759_968_000_000;
    let stale = f64::from_bits(0x7ff0_0000_0000_0002);
    roundtrip(&[(base, 1.5)]);
    roundtrip(&[(-5, 0.0), (7, -0.0)]);
    // A first delta far above every delta-of-delta below keeps the times increasing.
    let mut s = vec![(base, 12_345.678_9), (base + (1 << 42), 12_366.1)];
    // dod 0, ±14, ±17, ±20 and 64-bit buckets, with their exact edges.
    for dod in [
        0,
        1,
        -1,
        8192,
        -8191,
        8193,
        65_536,
        -65_535,
        65_537,
        524_288,
        -524_287,
        524_289,
        1 << 40,
        -(1 << 40),
    ] {
        let (t, _) = s[s.len() - 1];
        let (t0, _) = s[s.len() - 2];
        s.push((t + (t - t0) + dod, (t as f64).sqrt()));
    }
    // Repeats (bit 0), reuse of the window, a new window, a full 64-bit XOR, NaN bits.
    for v in [
        7.0,
        7.0,
        7.25,
        7.5,
        1e300,
        -1e-300,
        stale,
        f64::NAN,
        f64::INFINITY,
        7.0,
    ] {
        let (t, _) = s[s.len() - 1];
        s.push((t + 15_000, v));
    }
    roundtrip(&s);
    let counter: Vec<(i64, f64)> = (0..120)
        .map(|i| (base + i * 60_000, 1000.0 + 0.37 * (i * i) as f64))
        .collect();
    roundtrip(&counter);
}

#[test]
fn only_samples_inside_the_range_are_kept_and_bad_chunks_are_errors() {
    let samples: Vec<(i64, f64)> = (0..10).map(|i| (i * 10, i as f64)).collect();
    let chunk = encode(&samples).expect("increasing times");
    let mut out = Vec::new();
    assert_eq!(decode(&chunk, 20, 50, &mut out), Ok(4));
    assert_eq!(out.first().map(|s| s.timestamp), Some(20));
    assert_eq!(out.last().map(|s| s.timestamp), Some(50));
    assert!(decode(&[0], 0, 100, &mut out).is_err());
    assert!(decode(&chunk[..chunk.len() - 3], 0, 100, &mut Vec::new()).is_err());
    let mut claims_more = chunk.clone();
    claims_more[1] = 200;
    assert!(decode(&claims_more, 0, 1000, &mut Vec::new()).is_err());
}

#[test]
fn a_chunk_resumed_after_any_sample_ends_as_the_chunk_written_at_once() {
    let stale = f64::from_bits(0x7ff0_0000_0000_0002);
    let samples: Vec<(i64, f64)> = (0..40)
        .map(|i: i64| {
            let jitter = (i * 7919) % 1_500 - 750;
            let value = match i % 9 {
                0 => stale,
                1 | 2 => 1_000.0,
                _ => 1_000.0 + 0.37 * (i * i) as f64,
            };
            (1_760_000_000_000 + i * 30_000 + jitter, value)
        })
        .collect();
    let whole = encode(&samples).unwrap();
    for k in 0..=samples.len() {
        let mut resumed = Appender::resume(&encode(&samples[..k]).unwrap()).unwrap();
        assert_eq!(resumed.len(), k);
        for &(t, v) in &samples[k..] {
            resumed.append(t, v).unwrap();
        }
        assert_eq!(resumed.bytes(), &whole[..], "resumed after {k} samples");
    }
}

#[test]
fn an_appender_refuses_a_sample_not_after_its_last() {
    let mut chunk = Appender::new();
    assert!(chunk.is_empty() && chunk.last().is_none());
    chunk.append(100, 1.0).unwrap();
    chunk.append(200, 2.0).unwrap();
    assert_eq!(
        chunk.append(200, 3.0),
        Err(AppendError::NotAfter { t: 200, last: 200 })
    );
    assert_eq!(
        chunk.append(150, 3.0),
        Err(AppendError::NotAfter { t: 150, last: 200 })
    );
    assert_eq!(chunk.last(), Some((200, 2.0)));
    assert_eq!(sample_count(chunk.bytes()), Some(2));
}
