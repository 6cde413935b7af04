//! The chunks table, and the chunks being written: each series' latest chunk with its
//! XOR appender, kept in memory between appends so an append does not decode its chunk
//! again. The cache is an optimisation only: a chunk missing from it is read back and
//! resumed (`xor::Appender::resume`), bit for bit what appending on would have made.
//! It is bounded twice: the chunks of slots that closed more than a slot ago are
//! dropped as the clock passes, and past its capacity those of the oldest slots go first.

use std::collections::HashMap;

use rusqlite::types::Type;
use rusqlite::{params, Connection, OptionalExtension};

use super::{StoreError, SLOT_MS};
use crate::analysis::Sample;
use crate::xor::{self, Appender, XorError};

/// The slot (start, Unix ms) holding time `t`: 2-hour slots aligned to the Unix epoch.
pub fn slot_of(t: i64) -> i64 {
    t - t.rem_euclid(SLOT_MS)
}

/// The id of a series' chunk in the slot starting at `slot` (see the migration: series
/// id × 2^24 + slot number). Slots are never negative: samples before 1970 are refused.
pub(super) fn chunk_id(series: i64, slot: i64) -> i64 {
    (series << 24) + slot / SLOT_MS
}

/// The chunk ids of `series` from the slot holding `from` to the one holding `to`.
pub(super) fn chunk_ids(series: i64, from: i64, to: i64) -> (i64, i64) {
    let first = slot_of(from.max(0));
    let last = slot_of(to.clamp(0, (1 << 24) * SLOT_MS - 1));
    (chunk_id(series, first), chunk_id(series, last))
}

/// A series' latest chunk.
#[derive(Debug, Clone)]
pub(super) struct OpenChunk {
    pub slot: i64,
    /// Its first sample's time.
    pub min_ms: i64,
    pub appender: Appender,
    /// Changed since it was read or written.
    pub dirty: bool,
    /// What the database holds of it (samples, bytes); `None` before its first write.
    pub stored: Option<(usize, usize)>,
}

/// How much a series holds, or how much that changes: chunks, samples, chunk bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Totals {
    pub chunks: i64,
    pub samples: i64,
    pub bytes: i64,
}

impl Totals {
    pub fn add(&mut self, other: Totals) {
        self.chunks += other.chunks;
        self.samples += other.samples;
        self.bytes += other.bytes;
    }
}

impl OpenChunk {
    /// A new chunk holding its first sample.
    pub fn start(t: i64, value: f64) -> OpenChunk {
        let mut appender = Appender::new();
        appender
            .append(t, value)
            .expect("the first sample of an empty chunk is always taken");
        OpenChunk {
            slot: slot_of(t),
            min_ms: t,
            appender,
            dirty: true,
            stored: None,
        }
    }

    /// What writing it now adds to its series' totals.
    pub fn growth(&self) -> Totals {
        let (samples, bytes) = self.stored.unwrap_or_default();
        Totals {
            chunks: i64::from(self.stored.is_none()),
            samples: (self.appender.len() - samples) as i64,
            bytes: self.appender.bytes().len() as i64 - bytes as i64,
        }
    }
}

/// The error of a stored chunk that does not decode (its series id and slot).
pub(super) fn corrupt(series: i64, slot: i64, e: XorError) -> StoreError {
    let why = format!("chunk of series {series} at slot {slot} ms: {e}");
    StoreError::Sqlite(rusqlite::Error::FromSqlConversionFailure(
        0,
        Type::Blob,
        why.into(),
    ))
}

/// Reads `series`' chunk of `slot`, if stored, to resume appending to it.
pub(super) fn load(
    conn: &Connection,
    series: i64,
    slot: i64,
) -> Result<Option<OpenChunk>, StoreError> {
    let row: Option<(i64, Vec<u8>)> = conn
        .prepare_cached("SELECT min_ms, data FROM chunks WHERE id = ?1")?
        .query_row([chunk_id(series, slot)], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    let Some((min_ms, data)) = row else {
        return Ok(None);
    };
    let appender = Appender::resume(&data).map_err(|e| corrupt(series, slot, e))?;
    Ok(Some(OpenChunk {
        slot,
        min_ms,
        dirty: false,
        stored: Some((appender.len(), data.len())),
        appender,
    }))
}

/// Appends the samples of `series`' chunk of `slot` (none when it has none) to `out`.
pub(super) fn read(
    conn: &Connection,
    series: i64,
    slot: i64,
    out: &mut Vec<Sample>,
) -> Result<(), StoreError> {
    let data: Option<Vec<u8>> = conn
        .prepare_cached("SELECT data FROM chunks WHERE id = ?1")?
        .query_row([chunk_id(series, slot)], |r| r.get(0))
        .optional()?;
    if let Some(data) = data {
        xor::decode(&data, i64::MIN, i64::MAX, out).map_err(|e| corrupt(series, slot, e))?;
    }
    Ok(())
}

/// Writes `chunk` of `series` as it stands (a new row, or the row's new bytes).
pub(super) fn write(
    conn: &Connection,
    series: i64,
    chunk: &mut OpenChunk,
) -> Result<(), StoreError> {
    let max_ms = chunk.appender.last().map_or(chunk.min_ms, |(t, _)| t);
    conn.prepare_cached(
        "INSERT INTO chunks (id, min_ms, max_ms, samples, data) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (id) DO UPDATE
         SET max_ms = excluded.max_ms, samples = excluded.samples, data = excluded.data",
    )?
    .execute(params![
        chunk_id(series, chunk.slot),
        chunk.min_ms,
        max_ms,
        chunk.appender.len() as i64,
        chunk.appender.bytes()
    ])?;
    chunk.stored = Some((chunk.appender.len(), chunk.appender.bytes().len()));
    chunk.dirty = false;
    Ok(())
}

/// The cache: series id → its latest chunk.
#[derive(Debug)]
pub(super) struct OpenChunks {
    chunks: HashMap<i64, OpenChunk>,
    capacity: usize,
    /// The slot of the last sweep of closed slots.
    swept: i64,
}

impl OpenChunks {
    pub fn new(capacity: usize) -> OpenChunks {
        OpenChunks {
            chunks: HashMap::new(),
            capacity: capacity.max(1),
            swept: i64::MIN,
        }
    }

    /// Takes `series`' chunk out: an append works on it and puts it back when it commits,
    /// so a failed append leaves no half-applied chunk behind.
    pub fn take(&mut self, series: i64) -> Option<OpenChunk> {
        self.chunks.remove(&series)
    }

    /// Puts back the chunks of a committed append (`now` is its clock), then applies
    /// the bounds.
    pub fn put_back(&mut self, chunks: impl IntoIterator<Item = (i64, OpenChunk)>, now: i64) {
        for (series, mut chunk) in chunks {
            chunk.dirty = false;
            self.chunks.insert(series, chunk);
        }
        let current = slot_of(now);
        if current != self.swept {
            self.swept = current;
            // The previous slot stays: samples arrive a little late.
            self.chunks.retain(|_, c| c.slot >= current - SLOT_MS);
        }
        if self.chunks.len() > self.capacity {
            let mut slots: Vec<i64> = self.chunks.values().map(|c| c.slot).collect();
            let excess = self.chunks.len() - self.capacity;
            let (older, cut, _) = slots.select_nth_unstable(excess - 1);
            let cut = *cut;
            let mut at_cut = excess - older.iter().filter(|s| **s < cut).count();
            self.chunks.retain(|_, c| {
                if c.slot == cut && at_cut > 0 {
                    at_cut -= 1;
                    return false;
                }
                c.slot >= cut
            });
        }
    }

    /// Forgets `series`' chunk when it is the one of `slot` (pruned).
    pub fn forget(&mut self, series: i64, slot: i64) {
        if self.chunks.get(&series).is_some_and(|c| c.slot == slot) {
            self.chunks.remove(&series);
        }
    }

    /// Forgets everything (after a panic left the writer in doubt).
    pub fn clear(&mut self) {
        self.chunks.clear();
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.chunks.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: i64 = 1_700_000_000_000;

    fn chunk(t: i64) -> OpenChunk {
        OpenChunk::start(t, 1.0)
    }

    #[test]
    fn slots_are_two_hours_aligned_to_the_unix_epoch() {
        assert_eq!(slot_of(0), 0);
        assert_eq!(slot_of(SLOT_MS - 1), 0);
        assert_eq!(slot_of(SLOT_MS), SLOT_MS);
        assert_eq!(slot_of(T0) % SLOT_MS, 0);
        assert!(slot_of(T0) <= T0 && T0 < slot_of(T0) + SLOT_MS);
        let id = chunk_id(7, slot_of(T0));
        assert_eq!(id >> 24, 7);
        assert_eq!((id & 0xff_ffff) * SLOT_MS, slot_of(T0));
    }

    #[test]
    fn chunks_of_slots_closed_more_than_a_slot_ago_are_dropped_as_the_clock_passes() {
        let mut cache = OpenChunks::new(100);
        cache.put_back([(1, chunk(T0)), (2, chunk(T0 + SLOT_MS))], T0 + SLOT_MS);
        assert_eq!(cache.len(), 2, "the previous slot stays");
        cache.put_back([(3, chunk(T0 + 2 * SLOT_MS))], T0 + 2 * SLOT_MS);
        assert_eq!(cache.len(), 2);
        assert!(cache.take(1).is_none(), "the chunk two slots back went");
        assert!(cache.take(2).is_some() && cache.take(3).is_some());
    }

    #[test]
    fn past_capacity_the_chunks_of_the_oldest_slots_go_first() {
        let mut cache = OpenChunks::new(2);
        let now = T0 + SLOT_MS;
        cache.put_back([(1, chunk(T0)), (2, chunk(now)), (3, chunk(now))], now);
        assert_eq!(cache.len(), 2);
        assert!(cache.take(1).is_none());
        cache.put_back([(4, chunk(now))], now);
        assert_eq!(cache.len(), 2);
    }

    #[test]
    fn forgetting_a_pruned_chunk_leaves_a_newer_one_of_the_series() {
        let mut cache = OpenChunks::new(10);
        cache.put_back([(1, chunk(T0))], T0);
        cache.forget(1, slot_of(T0) - SLOT_MS);
        assert_eq!(cache.len(), 1);
        cache.forget(1, slot_of(T0));
        assert_eq!(cache.len(), 0);
    }
}
