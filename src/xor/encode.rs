//! Writing an XOR chunk as Prometheus's appender does (`chunkenc/xor.go`), one sample at
//! a time: the chunk's bytes are complete after every append (header count included),
//! so a store can keep them as they are and resume appending later.

use super::decode::{Cursor, State, XorError};

/// Why a sample could not be appended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AppendError {
    /// Times must increase within a chunk.
    #[error("sample at {t} ms is not after the chunk's last sample at {last} ms")]
    NotAfter { t: i64, last: i64 },
    /// The header counts in 16 bits.
    #[error("the chunk holds 65,535 samples already")]
    Full,
}

/// An XOR chunk being written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Appender {
    /// Header (sample count, big-endian u16) and bit stream.
    bytes: Vec<u8>,
    /// Bits written after the header.
    bits: usize,
    state: State,
}

impl Default for Appender {
    fn default() -> Self {
        Appender::new()
    }
}

impl Appender {
    /// An empty chunk.
    pub fn new() -> Appender {
        Appender {
            bytes: vec![0, 0],
            bits: 0,
            state: State::default(),
        }
    }

    /// Continues `chunk` (read whole once to recover the writer's state).
    pub fn resume(chunk: &[u8]) -> Result<Appender, XorError> {
        let mut cursor = Cursor::new(chunk)?;
        while cursor.next_sample()?.is_some() {}
        let bits = cursor.bit_position();
        let mut bytes = chunk[..2 + bits.div_ceil(8)].to_vec();
        // Bits past the last sample are padding; the next append writes over them.
        if bits % 8 != 0 {
            let last = bytes.len() - 1;
            bytes[last] &= !(0xffu8 >> (bits % 8));
        }
        Ok(Appender {
            bytes,
            bits,
            state: cursor.state,
        })
    }

    /// The chunk as it stands: valid after every append.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Samples in the chunk.
    pub fn len(&self) -> usize {
        self.state.read
    }

    pub fn is_empty(&self) -> bool {
        self.state.read == 0
    }

    /// The last sample's time and value.
    pub fn last(&self) -> Option<(i64, f64)> {
        (self.state.read > 0).then(|| (self.state.t, f64::from_bits(self.state.value)))
    }

    /// Appends one sample; its value is kept bit for bit (a staleness marker too).
    pub fn append(&mut self, t: i64, value: f64) -> Result<(), AppendError> {
        let s = self.state;
        if s.read == usize::from(u16::MAX) {
            return Err(AppendError::Full);
        }
        if s.read > 0 && t <= s.t {
            return Err(AppendError::NotAfter { t, last: s.t });
        }
        self.append_any(t, value);
        Ok(())
    }

    /// Appends without the time check: what a faulty server's chunk may hold (tests).
    fn append_any(&mut self, t: i64, value: f64) {
        let s = self.state;
        let v = value.to_bits();
        match s.read {
            0 => {
                self.uvarint(((t << 1) ^ (t >> 63)) as u64);
                self.write(v, 64);
            }
            1 => {
                self.state.delta = t - s.t;
                self.uvarint(self.state.delta as u64);
                self.value(v);
            }
            _ => {
                let delta = t - s.t;
                self.delta_of_delta(delta - s.delta);
                self.state.delta = delta;
                self.value(v);
            }
        }
        self.state.t = t;
        self.state.value = v;
        self.state.read += 1;
        let count = (self.state.read as u16).to_be_bytes();
        self.bytes[..2].copy_from_slice(&count);
    }

    fn delta_of_delta(&mut self, dod: i64) {
        let fits = |n: u32| -((1i64 << (n - 1)) - 1) <= dod && dod <= 1 << (n - 1);
        let (prefix, prefix_bits, size) = match dod {
            0 => return self.bit(false),
            _ if fits(14) => (0b10, 2, 14),
            _ if fits(17) => (0b110, 3, 17),
            _ if fits(20) => (0b1110, 4, 20),
            _ => (0b1111, 4, 64),
        };
        self.write(prefix, prefix_bits);
        // Two's complement, cut to `size` bits (the reader sign-extends).
        let mask = if size == 64 {
            u64::MAX
        } else {
            (1u64 << size) - 1
        };
        self.write(dod as u64 & mask, size);
    }

    fn value(&mut self, v: u64) {
        let x = v ^ self.state.value;
        if x == 0 {
            return self.bit(false);
        }
        self.bit(true);
        let lead = x.leading_zeros().min(31);
        let trail = x.trailing_zeros();
        match self.state.window {
            Some((leading, trailing)) if lead >= leading && trail >= trailing => {
                self.bit(false);
                self.write(x >> trailing, 64 - leading - trailing);
            }
            _ => {
                self.state.window = Some((lead, trail));
                self.bit(true);
                self.write(u64::from(lead), 5);
                let meaningful = 64 - lead - trail;
                // 64 is written as 0: six bits hold 0–63.
                self.write(u64::from(meaningful % 64), 6);
                self.write(x >> trail, meaningful);
            }
        }
    }

    fn bit(&mut self, on: bool) {
        let at = 2 + self.bits / 8;
        if at == self.bytes.len() {
            self.bytes.push(0);
        }
        if on {
            self.bytes[at] |= 0x80 >> (self.bits % 8);
        }
        self.bits += 1;
    }

    /// The low `n` bits of `value`, most significant first.
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
                return self.write(u64::from(b), 8);
            }
            self.write(u64::from(b | 0x80), 8);
        }
    }
}

/// The chunk of `samples` (time, value), which must be in increasing time order.
pub fn encode(samples: &[(i64, f64)]) -> Result<Vec<u8>, AppendError> {
    let mut chunk = Appender::new();
    for &(t, v) in samples {
        chunk.append(t, v)?;
    }
    Ok(chunk.bytes)
}

/// The chunk of `samples` in the order given, times going back or repeating included:
/// what a faulty server may send (tests of the readers).
#[cfg(test)]
pub(crate) fn encode_unordered(samples: &[(i64, f64)]) -> Vec<u8> {
    let mut chunk = Appender::new();
    for &(t, v) in samples {
        chunk.append_any(t, v);
    }
    chunk.bytes
}
