//! The chunks on disk: one XOR chunk per series and slot, open or closed.
//!
//! A chunk's id puts time first (slot number × 2^32 + series id, see the migration). A
//! chunk is open while the hub's clock has not passed its slot's end by
//! [`CLOSE_GRACE_MS`]: it lives in `open_chunks`, rewritten as samples arrive. Then
//! [`close`] moves it, once, to `chunks`: the appends that pass a slot's end plus the
//! grace move that slot's chunks, in id order, so each lands at the end of the table and
//! its pages fill up densely and are never written again (with one write per chunk).
//!
//! The two tables are one to the rest of the store through [`Border`]: every id in
//! `chunks` is below every id in `open_chunks`, so a chunk's place follows from its id
//! alone. `close` takes the lowest open ids first and a chunk whose id is below the
//! border is written to `chunks` (a late sample for a closed slot, or a backfilled one:
//! rare, and then a row of `chunks` is written in place), so the rule holds after any
//! append or prune, and the border is read back, not stored.

use rusqlite::types::Type;
use rusqlite::{Connection, OptionalExtension};

use super::{StoreError, SLOT_MS};
use crate::analysis::Sample;
use crate::xor::{self, Appender, XorError};

/// How long after its slot's end a chunk stays open for late samples: an hour, as
/// Prometheus's head keeps a finished 2-hour range an hour more before it writes the
/// range's block.
pub(super) const CLOSE_GRACE_MS: i64 = 3_600_000;

/// Chunks closed by one append at most: the first appends after a slot's end plus the
/// grace share the work when there are many series.
pub(super) const CLOSE_BATCH: i64 = 10_000;

/// The greatest series id a chunk id can hold.
pub(super) const MAX_SERIES_ID: i64 = u32::MAX as i64;

/// The last time a chunk id can hold (slot numbers stay below 2^31).
pub(super) const LAST_MS: i64 = (1 << 31) * SLOT_MS - 1;

/// The slot (start, Unix ms) holding time `t`: 2-hour slots aligned to the Unix epoch.
pub fn slot_of(t: i64) -> i64 {
    t - t.rem_euclid(SLOT_MS)
}

/// The id of `series`' chunk in the slot starting at `slot` (never negative: samples
/// before 1970 are refused).
pub(super) fn chunk_id(series: i64, slot: i64) -> i64 {
    ((slot / SLOT_MS) << 32) | series
}

/// The series and the slot of chunk `id`.
pub(super) fn parts(id: i64) -> (i64, i64) {
    (id & 0xffff_ffff, (id >> 32) * SLOT_MS)
}

/// The first id of the chunks of the slot starting at `slot`, all series.
pub(super) fn slot_start_id(slot: i64) -> i64 {
    chunk_id(0, slot)
}

/// Every id below it is a closed chunk (in `chunks`), every id at or above it an open
/// one (in `open_chunks`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Border(i64);

impl Border {
    /// The border of the database `conn` sees.
    pub(super) fn read(conn: &Connection) -> Result<Border, StoreError> {
        let id: i64 = conn
            .prepare_cached("SELECT COALESCE(MAX(id) + 1, 0) FROM chunks")?
            .query_row([], |r| r.get(0))?;
        Ok(Border(id))
    }

    /// True when chunk `id` is closed.
    pub fn closed(self, id: i64) -> bool {
        id < self.0
    }

    /// `closed` when chunk `id` is closed, else `open` (a statement per table).
    pub fn pick(self, id: i64, closed: &'static str, open: &'static str) -> &'static str {
        if self.closed(id) {
            closed
        } else {
            open
        }
    }
}

/// The bytes of `series`' chunk of `slot`, from whichever table holds it.
pub(super) fn data(
    conn: &Connection,
    border: Border,
    series: i64,
    slot: i64,
) -> Result<Option<Vec<u8>>, StoreError> {
    let id = chunk_id(series, slot);
    let sql = border.pick(
        id,
        "SELECT data FROM chunks WHERE id = ?1",
        "SELECT data FROM open_chunks WHERE id = ?1",
    );
    Ok(conn
        .prepare_cached(sql)?
        .query_row([id], |r| r.get(0))
        .optional()?)
}

/// A series' chunk being appended to (kept in memory between appends, see `cache`).
#[derive(Debug, Clone)]
pub(super) struct OpenChunk {
    pub slot: i64,
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
    border: Border,
    series: i64,
    slot: i64,
) -> Result<Option<OpenChunk>, StoreError> {
    let Some(data) = data(conn, border, series, slot)? else {
        return Ok(None);
    };
    let appender = Appender::resume(&data).map_err(|e| corrupt(series, slot, e))?;
    Ok(Some(OpenChunk {
        slot,
        dirty: false,
        stored: Some((appender.len(), data.len())),
        appender,
    }))
}

/// Appends the samples of `series`' chunk of `slot` (none when it has none) to `out`.
pub(super) fn read(
    conn: &Connection,
    border: Border,
    series: i64,
    slot: i64,
    out: &mut Vec<Sample>,
) -> Result<(), StoreError> {
    if let Some(data) = data(conn, border, series, slot)? {
        xor::decode(&data, i64::MIN, i64::MAX, out).map_err(|e| corrupt(series, slot, e))?;
    }
    Ok(())
}

/// Writes `chunk` of `series` as it stands (a new row, or the row's new bytes) to the
/// table its id belongs in.
pub(super) fn write(
    conn: &Connection,
    border: Border,
    series: i64,
    chunk: &mut OpenChunk,
) -> Result<(), StoreError> {
    let id = chunk_id(series, chunk.slot);
    let sql = border.pick(
        id,
        "INSERT INTO chunks (id, data) VALUES (?1, ?2)
         ON CONFLICT (id) DO UPDATE SET data = excluded.data",
        "INSERT INTO open_chunks (id, data) VALUES (?1, ?2)
         ON CONFLICT (id) DO UPDATE SET data = excluded.data",
    );
    conn.prepare_cached(sql)?
        .execute(rusqlite::params![id, chunk.appender.bytes()])?;
    chunk.stored = Some((chunk.appender.len(), chunk.appender.bytes().len()));
    chunk.dirty = false;
    Ok(())
}

/// Closes the open chunks whose slot ended [`CLOSE_GRACE_MS`] or more before `now`, the
/// lowest ids first and at most `limit` ([`CLOSE_BATCH`] for an append): moved to the
/// end of `chunks`, as they are. Returns how many.
pub(super) fn close(conn: &Connection, now: i64, limit: i64) -> Result<usize, StoreError> {
    let ended = now.saturating_sub(CLOSE_GRACE_MS + SLOT_MS);
    if ended < 0 {
        return Ok(0);
    }
    let below = slot_start_id(slot_of(ended.min(LAST_MS)) + SLOT_MS);
    let last: Option<i64> = conn
        .prepare_cached(
            "SELECT MAX(id) FROM
             (SELECT id FROM open_chunks WHERE id < ?1 ORDER BY id LIMIT ?2)",
        )?
        .query_row(rusqlite::params![below, limit], |r| r.get(0))?;
    let Some(last) = last else {
        return Ok(0);
    };
    conn.prepare_cached(
        "INSERT INTO chunks (id, data) SELECT id, data FROM open_chunks WHERE id <= ?1
         ORDER BY id",
    )?
    .execute([last])?;
    Ok(conn
        .prepare_cached("DELETE FROM open_chunks WHERE id <= ?1")?
        .execute([last])?)
}

/// The time of a chunk's first sample: the zig-zag varint after its 2-byte header.
pub(super) fn first_time(chunk: &[u8]) -> Option<i64> {
    let mut raw: u64 = 0;
    for (i, byte) in chunk.get(2..)?.iter().take(10).enumerate() {
        raw |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Some((raw >> 1) as i64 ^ -((raw & 1) as i64));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: i64 = 1_700_000_000_000;

    #[test]
    fn slots_are_two_hours_aligned_to_the_unix_epoch_and_ids_put_time_first() {
        assert_eq!(slot_of(0), 0);
        assert_eq!(slot_of(SLOT_MS - 1), 0);
        assert_eq!(slot_of(SLOT_MS), SLOT_MS);
        assert_eq!(slot_of(T0) % SLOT_MS, 0);
        assert!(slot_of(T0) <= T0 && T0 < slot_of(T0) + SLOT_MS);
        let id = chunk_id(7, slot_of(T0));
        assert_eq!(parts(id), (7, slot_of(T0)));
        let last_series = chunk_id(u32::MAX.into(), slot_of(T0));
        assert!(last_series < slot_start_id(slot_of(T0) + SLOT_MS));
        assert!(chunk_id(1, slot_of(LAST_MS)) > 0);
    }

    #[test]
    fn the_first_time_is_read_from_the_chunk_without_decoding_it() {
        for t in [0, 1, -1, T0, LAST_MS] {
            let chunk = xor::encode(&[(t, 1.0), (t + 5, 2.0)]).expect("encodes");
            assert_eq!(first_time(&chunk), Some(t));
        }
        assert_eq!(first_time(&[0, 1]), None);
    }
}
