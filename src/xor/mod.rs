//! Prometheus's XOR chunk encoding (Gorilla-style), both ways: remote read decodes the
//! chunks Prometheus sends, and the usage store keeps what agents and remote writers
//! send in the same chunks. Layout: a big-endian u16 sample count, then a bit stream:
//! the first sample as a zig-zag varint time and 64 raw value bits; the second as a
//! uvarint time delta and an XOR-coded value; every later one as a delta-of-delta in one
//! of five bit buckets (`0`, `10`+14, `110`+17, `1110`+20, `1111`+64 bits) and an
//! XOR-coded value (`0` same value; `10` meaningful bits in the previous window; `11` +
//! 5 bits leading zeros + 6 bits length (0 = 64) + the bits). Pure: no IO.

mod decode;
mod encode;

pub use decode::{decode, sample_count, XorError};
#[cfg(test)]
pub(crate) use encode::encode_unordered;
pub use encode::{encode, AppendError, Appender};

#[cfg(test)]
mod tests;
