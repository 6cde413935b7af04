//! The framing of a streamed remote-read answer: each `ChunkedReadResponse` is sent as
//! a uvarint length, a big-endian CRC-32C of the message, and the message. Bytes arrive
//! in arbitrary pieces; whole frames are cut out as soon as they are complete, so only
//! one frame (≤ 1 MiB by Prometheus's default) and a partial one are ever held.

use bytes::{Buf, Bytes, BytesMut};

/// A frame larger than this is refused (Prometheus cuts frames at 1 MiB by default;
/// a bigger length is corruption or a hostile server, not a reason to allocate).
pub const MAX_FRAME_BYTES: u64 = 64 << 20;

/// Why the frame stream cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("remote-read frame of {0} bytes is over the {MAX_FRAME_BYTES}-byte limit")]
    TooLarge(u64),
    #[error("remote-read frame checksum mismatch")]
    Checksum,
    #[error("remote-read frame length is not a valid varint")]
    Length,
    #[error("remote-read answer ended inside a frame")]
    Truncated,
}

/// Accumulates answer bytes and yields whole, checked frames.
#[derive(Default)]
pub struct Frames {
    buf: BytesMut,
}

impl Frames {
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The next complete frame's message, if one is buffered.
    pub fn next_frame(&mut self) -> Result<Option<Bytes>, FrameError> {
        let mut len: u64 = 0;
        let mut header = None;
        for (i, b) in self.buf.iter().take(10).enumerate() {
            len |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                header = Some(i + 1);
                break;
            }
        }
        let Some(varint) = header else {
            return match self.buf.len() >= 10 {
                true => Err(FrameError::Length),
                false => Ok(None),
            };
        };
        if len > MAX_FRAME_BYTES {
            return Err(FrameError::TooLarge(len));
        }
        let total = varint + 4 + len as usize;
        if self.buf.len() < total {
            self.buf.reserve(total - self.buf.len());
            return Ok(None);
        }
        self.buf.advance(varint);
        let expected = self.buf.get_u32();
        let message = self.buf.split_to(len as usize).freeze();
        if crc32c::crc32c(&message) != expected {
            return Err(FrameError::Checksum);
        }
        Ok(Some(message))
    }

    /// Called at the end of the answer: leftover bytes mean it was cut short.
    pub fn finish(&self) -> Result<(), FrameError> {
        match self.buf.is_empty() {
            true => Ok(()),
            false => Err(FrameError::Truncated),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(message: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut len = message.len() as u64;
        loop {
            let b = (len & 0x7f) as u8;
            len >>= 7;
            if len == 0 {
                out.push(b);
                break;
            }
            out.push(b | 0x80);
        }
        out.extend(crc32c::crc32c(message).to_be_bytes());
        out.extend(message);
        out
    }

    #[test]
    fn frames_split_anywhere_are_reassembled_and_corruption_is_refused() {
        let big = vec![7u8; 300];
        let mut wire = frame(b"first");
        wire.extend(frame(&big));
        wire.extend(frame(b""));
        for cut in [1, 2, 3, 7, 64, wire.len()] {
            let mut frames = Frames::default();
            let mut got = Vec::new();
            for piece in wire.chunks(cut) {
                frames.push(piece);
                while let Some(f) = frames.next_frame().expect("frame") {
                    got.push(f.to_vec());
                }
            }
            frames.finish().expect("nothing left over");
            assert_eq!(
                got,
                [b"first".to_vec(), big.clone(), Vec::new()],
                "cut {cut}"
            );
        }
        let mut bad = frame(b"payload");
        let last = bad.len() - 1;
        bad[last] ^= 1;
        let mut frames = Frames::default();
        frames.push(&bad);
        assert_eq!(frames.next_frame(), Err(FrameError::Checksum));
        let mut frames = Frames::default();
        frames.push(&frame(b"abc")[..5]);
        assert_eq!(frames.next_frame(), Ok(None));
        assert_eq!(frames.finish(), Err(FrameError::Truncated));
        let mut frames = Frames::default();
        frames.push(&[0xff, 0xff, 0xff, 0xff, 0x7f]);
        assert!(matches!(frames.next_frame(), Err(FrameError::TooLarge(_))));
        let mut frames = Frames::default();
        frames.push(&[0xff; 12]);
        assert_eq!(frames.next_frame(), Err(FrameError::Length));
    }
}
