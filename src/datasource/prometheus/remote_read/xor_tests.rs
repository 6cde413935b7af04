//! The decoder against a test-only encoder that follows Prometheus's writer rule for
//! rule (`chunkenc/xor.go`), over the edge cases: every delta-of-delta bucket and its
//! negative side, window reuse and renewal, a 64-bit XOR, NaN bits and the range cut.
//! The decoder is also checked against a real Prometheus in the integration tests.

use super::*;

#[derive(Default)]
struct Writer {
    bytes: Vec<u8>,
    bits: usize,
}

impl Writer {
    fn bit(&mut self, on: bool) {
        if self.bits.is_multiple_of(8) {
            self.bytes.push(0);
        }
        if on {
            let last = self.bytes.len() - 1;
            self.bytes[last] |= 0x80 >> (self.bits % 8);
        }
        self.bits += 1;
    }
    fn write(&mut self, value: u64, n: u32) {
        for i in (0..n).rev() {
            self.bit(value >> i & 1 == 1);
        }
    }
    fn uvarint(&mut self, mut v: u64) {
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                self.write(u64::from(b), 8);
                return;
            }
            self.write(u64::from(b | 0x80), 8);
        }
    }
}

/// Encodes samples as Prometheus's XOR appender does (shared with the stream tests).
pub(crate) fn encode(samples: &[(i64, f64)]) -> Vec<u8> {
    let mut w = Writer::default();
    let (mut t_prev, mut delta_prev, mut v_prev) = (0i64, 0i64, 0u64);
    let (mut leading, mut trailing) = (0xffu32, 0u32);
    for (i, &(t, v)) in samples.iter().enumerate() {
        let v = v.to_bits();
        if i == 0 {
            w.uvarint(((t << 1) ^ (t >> 63)) as u64);
            w.write(v, 64);
        } else {
            let delta = t - t_prev;
            if i == 1 {
                w.uvarint(delta as u64);
            } else {
                let dod = delta - delta_prev;
                let fits = |n: u32| -((1i64 << (n - 1)) - 1) <= dod && dod <= 1 << (n - 1);
                match dod {
                    0 => w.bit(false),
                    _ if fits(14) => (w.write(0b10, 2), w.write(dod as u64, 14)).1,
                    _ if fits(17) => (w.write(0b110, 3), w.write(dod as u64, 17)).1,
                    _ if fits(20) => (w.write(0b1110, 4), w.write(dod as u64, 20)).1,
                    _ => (w.write(0b1111, 4), w.write(dod as u64, 64)).1,
                }
            }
            delta_prev = delta;
            let x = v ^ v_prev;
            if x == 0 {
                w.bit(false);
            } else {
                w.bit(true);
                let lead = x.leading_zeros().min(31);
                let trail = x.trailing_zeros();
                if leading != 0xff && lead >= leading && trail >= trailing {
                    w.bit(false);
                    w.write(x >> trailing, 64 - leading - trailing);
                } else {
                    (leading, trailing) = (lead, trail);
                    w.bit(true);
                    w.write(u64::from(lead), 5);
                    let sig = 64 - lead - trail;
                    w.write(u64::from(sig % 64), 6);
                    w.write(x >> trail, sig);
                }
            }
        }
        t_prev = t;
        v_prev = v;
    }
    let mut out = (samples.len() as u16).to_be_bytes().to_vec();
    out.extend(w.bytes);
    out
}

fn roundtrip(samples: &[(i64, f64)]) {
    let chunk = encode(samples);
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
    let mut s = vec![(base, 12_345.678_9), (base + 60_000, 12_366.1)];
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
    let chunk = encode(&samples);
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
