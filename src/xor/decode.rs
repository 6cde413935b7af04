//! Reading an XOR chunk, straight into the engine's 16-byte samples: a [`Cursor`] walks
//! the bit stream sample by sample and keeps the decoder's state, which is also the
//! state an [`super::Appender`] resumes from.

use crate::analysis::Sample;

/// Why a chunk could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("XOR chunk: {0}")]
pub struct XorError(pub(super) &'static str);

struct Bits<'a> {
    data: &'a [u8],
    /// Position in bits from the start of `data`.
    pos: usize,
}

impl Bits<'_> {
    fn bit(&mut self) -> Result<bool, XorError> {
        let byte = *self
            .data
            .get(self.pos / 8)
            .ok_or(XorError("ends inside a sample"))?;
        let bit = byte & (0x80 >> (self.pos % 8)) != 0;
        self.pos += 1;
        Ok(bit)
    }

    /// `n` (≤ 64) bits, most significant first.
    fn bits(&mut self, mut n: u32) -> Result<u64, XorError> {
        if self.pos + n as usize > self.data.len() * 8 {
            return Err(XorError("ends inside a sample"));
        }
        let mut out: u64 = 0;
        while n > 0 {
            let offset = (self.pos % 8) as u32;
            let take = (8 - offset).min(n);
            let byte = u64::from(self.data[self.pos / 8]);
            let chunk = (byte >> (8 - offset - take)) & ((1u64 << take) - 1);
            out = (out << take) | chunk;
            self.pos += take as usize;
            n -= take;
        }
        Ok(out)
    }

    fn byte(&mut self) -> Result<u8, XorError> {
        self.bits(8).map(|b| b as u8)
    }

    fn uvarint(&mut self) -> Result<u64, XorError> {
        let mut out: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            out |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(out);
            }
        }
        Err(XorError("varint too long"))
    }

    fn varint(&mut self) -> Result<i64, XorError> {
        let u = self.uvarint()?;
        Ok((u >> 1) as i64 ^ -((u & 1) as i64))
    }
}

/// The state after the samples read so far: what the next sample is coded against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct State {
    /// Samples read.
    pub(super) read: usize,
    pub(super) t: i64,
    /// The last time delta.
    pub(super) delta: i64,
    /// The last value's bits.
    pub(super) value: u64,
    /// The XOR bit window (leading, trailing zeros), once a value has changed.
    pub(super) window: Option<(u32, u32)>,
}

/// A position in a chunk's samples.
pub(super) struct Cursor<'a> {
    bits: Bits<'a>,
    count: usize,
    pub(super) state: State,
}

impl<'a> Cursor<'a> {
    pub(super) fn new(chunk: &'a [u8]) -> Result<Cursor<'a>, XorError> {
        let [hi, lo, ..] = chunk else {
            return Err(XorError("shorter than its header"));
        };
        Ok(Cursor {
            bits: Bits {
                data: &chunk[2..],
                pos: 0,
            },
            count: usize::from(u16::from_be_bytes([*hi, *lo])),
            state: State::default(),
        })
    }

    /// Bits read after the header.
    pub(super) fn bit_position(&self) -> usize {
        self.bits.pos
    }

    /// The next sample (time, value bits), or `None` after the last.
    pub(super) fn next_sample(&mut self) -> Result<Option<(i64, u64)>, XorError> {
        let s = &mut self.state;
        if s.read == self.count {
            return Ok(None);
        }
        match s.read {
            0 => {
                s.t = self.bits.varint()?;
                s.value = self.bits.bits(64)?;
            }
            1 => {
                s.delta = self.bits.uvarint()? as i64;
                s.t += s.delta;
                s.value = next_value(&mut self.bits, s.value, &mut s.window)?;
            }
            _ => {
                s.delta += delta_of_delta(&mut self.bits)?;
                s.t += s.delta;
                s.value = next_value(&mut self.bits, s.value, &mut s.window)?;
            }
        }
        s.read += 1;
        Ok(Some((s.t, s.value)))
    }
}

/// Reads the XOR-coded value that follows `prev`, keeping the bit window (leading,
/// trailing zeros).
fn next_value(
    bits: &mut Bits,
    prev: u64,
    window: &mut Option<(u32, u32)>,
) -> Result<u64, XorError> {
    if !bits.bit()? {
        return Ok(prev);
    }
    if bits.bit()? {
        let leading = bits.bits(5)? as u32;
        let mut meaningful = bits.bits(6)? as u32;
        if meaningful == 0 {
            meaningful = 64;
        }
        if leading + meaningful > 64 {
            return Err(XorError("value window wider than 64 bits"));
        }
        *window = Some((leading, 64 - leading - meaningful));
    }
    let (leading, trailing) = window.ok_or(XorError("a value reuses a window never set"))?;
    let meaningful = 64 - leading - trailing;
    let delta = bits.bits(meaningful)?;
    Ok(prev ^ (delta << trailing))
}

fn delta_of_delta(bits: &mut Bits) -> Result<i64, XorError> {
    let mut prefix = 0u32;
    while prefix < 4 && bits.bit()? {
        prefix += 1;
    }
    let size = match prefix {
        0 => return Ok(0),
        1 => 14,
        2 => 17,
        3 => 20,
        _ => return Ok(bits.bits(64)? as i64),
    };
    let raw = bits.bits(size)? as i64;
    // Negative values come back as large unsigned ones (Prometheus's bstream rule).
    Ok(if raw > 1 << (size - 1) {
        raw - (1 << size)
    } else {
        raw
    })
}

/// The number of samples a chunk holds (its header), if it has one.
pub fn sample_count(chunk: &[u8]) -> Option<usize> {
    match chunk {
        [hi, lo, ..] => Some(usize::from(u16::from_be_bytes([*hi, *lo]))),
        _ => None,
    }
}

/// Appends the samples of `chunk` with `from_ms <= t <= to_ms` to `out`, in time order.
/// Values are kept bit for bit (Prometheus's stale marker is a NaN with its own bits).
pub fn decode(
    chunk: &[u8],
    from_ms: i64,
    to_ms: i64,
    out: &mut Vec<Sample>,
) -> Result<usize, XorError> {
    let mut cursor = Cursor::new(chunk)?;
    let mut kept = 0;
    while let Some((t, value)) = cursor.next_sample()? {
        if t > to_ms {
            break;
        }
        if t >= from_ms {
            out.push(Sample {
                timestamp: t,
                value: f64::from_bits(value),
            });
            kept += 1;
        }
    }
    Ok(kept)
}
