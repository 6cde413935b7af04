//! Pruning: the chunks whose newest sample is older than a cut-off, a batch per
//! transaction, then the series they leave without chunks, then the freed pages given
//! back to the file system. Chunks are taken in id order, so the oldest slots first and
//! closed chunks before open ones: every chunk of a slot that ended by the cut-off goes
//! (read no further than its header), and of the slot holding the cut-off those whose
//! last sample is before it.

use std::collections::BTreeMap;

use rusqlite::{params, Connection, TransactionBehavior};

use super::chunks::{self, corrupt, parts, slot_of, slot_start_id, Border, Totals, LAST_MS};
use super::{StoreError, Writer, SLOT_MS};
use crate::xor;

/// Pages given back per transaction (4 MiB): ingest waits for one step at most.
pub(super) const GIVE_BACK_PAGES: i64 = 1024;

/// What a prune deleted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pruned {
    pub chunks: u64,
    pub samples: u64,
    /// Series left without chunks.
    pub series: u64,
    /// Refused series not refused since the cut-off.
    pub refused_series: u64,
    /// Transactions that deleted something.
    pub batches: u64,
}

impl Pruned {
    pub(super) fn add(&mut self, other: &Pruned) {
        self.chunks += other.chunks;
        self.samples += other.samples;
        self.series += other.series;
        self.refused_series += other.refused_series;
        self.batches += other.batches;
    }
}

/// The chunks a batch looks at, after the id `?1` and below `?2`, at most `?4`; of those
/// below `?3` (slots that ended by the cut-off) only the header.
const CANDIDATES: [&str; 2] = [
    "SELECT id, CASE WHEN id < ?3 THEN substr(data, 1, 2) ELSE data END, length(data)
     FROM chunks WHERE id > ?1 AND id < ?2 ORDER BY id LIMIT ?4",
    "SELECT id, CASE WHEN id < ?3 THEN substr(data, 1, 2) ELSE data END, length(data)
     FROM open_chunks WHERE id > ?1 AND id < ?2 ORDER BY id LIMIT ?4",
];

/// Looks at up to `batch` chunks after the id `after` and deletes those whose newest
/// sample is before `older_than`, with the series they leave empty, in one transaction.
/// Returns what it deleted and the id to go on after (`None`: nothing is left to see).
pub(super) fn prune_batch(
    w: &mut Writer,
    older_than: i64,
    batch: usize,
    after: i64,
) -> Result<(Pruned, Option<i64>), StoreError> {
    let mut done = Pruned::default();
    if older_than <= 0 {
        return Ok((done, None));
    }
    let Writer { conn, open } = w;
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let border = Border::read(&tx)?;
    let cut_slot = slot_of(older_than.min(LAST_MS));
    let (ended, upto) = (slot_start_id(cut_slot), slot_start_id(cut_slot + SLOT_MS));
    // Every closed id is below every open one: the closed candidates come first.
    let mut seen: Vec<(i64, Vec<u8>, i64)> = Vec::new();
    for sql in CANDIDATES {
        let want = (batch - seen.len()) as i64;
        let mut stmt = tx.prepare_cached(sql)?;
        let rows = stmt.query_map(params![after, upto, ended, want], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })?;
        for row in rows {
            seen.push(row?);
        }
        if seen.len() == batch {
            break;
        }
    }
    // Per series: what it lost, and the slot of its newest chunk deleted.
    let mut lost: BTreeMap<i64, (Totals, i64)> = BTreeMap::new();
    for (id, data, bytes) in &seen {
        let (series, slot) = parts(*id);
        if *id >= ended && !ends_before(data, older_than).map_err(|e| corrupt(series, slot, e))? {
            continue;
        }
        let sql = border.pick(
            *id,
            "DELETE FROM chunks WHERE id = ?1",
            "DELETE FROM open_chunks WHERE id = ?1",
        );
        tx.prepare_cached(sql)?.execute([id])?;
        // Before the commit: a cache entry forgotten in vain is only read back later.
        open.forget(series, slot);
        let samples = xor::sample_count(data).unwrap_or(0) as i64;
        let entry = lost.entry(series).or_default();
        entry.0.add(Totals {
            chunks: 1,
            samples,
            bytes: *bytes,
        });
        entry.1 = slot;
        done.chunks += 1;
        done.samples += samples as u64;
    }
    for (series, (lost, slot)) in lost {
        if !shrink(&tx, border, series, lost, slot)? {
            done.series += 1;
        }
    }
    tx.commit()?;
    done.batches = u64::from(done.chunks > 0);
    let next = (seen.len() == batch).then(|| seen[batch - 1].0);
    Ok((done, next))
}

/// True when the chunk `data` has no sample at or after `t`.
fn ends_before(data: &[u8], t: i64) -> Result<bool, xor::XorError> {
    let mut samples = Vec::new();
    xor::decode(data, i64::MIN, i64::MAX, &mut samples)?;
    Ok(samples.last().is_none_or(|s| s.timestamp < t))
}

/// Takes `lost` off `series`' totals and starts it at its first chunk left, after the
/// slot `deleted` (the earlier ones went first); deletes it when none is left. Returns
/// whether it is kept.
fn shrink(
    conn: &Connection,
    border: Border,
    series: i64,
    lost: Totals,
    deleted: i64,
) -> Result<bool, StoreError> {
    let last_ms: i64 = conn
        .prepare_cached("SELECT last_ms FROM series WHERE id = ?1")?
        .query_row([series], |r| r.get(0))?;
    let mut slot = deleted + SLOT_MS;
    while slot <= slot_of(last_ms) {
        if let Some(data) = chunks::data(conn, border, series, slot)? {
            let first = chunks::first_time(&data).unwrap_or(slot);
            conn.prepare_cached(
                "UPDATE series SET first_ms = ?2,
                 chunks = chunks - ?3, samples = samples - ?4, bytes = bytes - ?5
                 WHERE id = ?1",
            )?
            .execute([series, first, lost.chunks, lost.samples, lost.bytes])?;
            return Ok(true);
        }
        slot += SLOT_MS;
    }
    conn.prepare_cached("DELETE FROM series WHERE id = ?1")?
        .execute([series])?;
    Ok(false)
}

/// Gives up to [`GIVE_BACK_PAGES`] free pages back to the file system (the file is
/// made with `auto_vacuum = INCREMENTAL`: pages from its end move into the free ones and
/// it is cut). Returns whether free pages are left.
pub(super) fn give_back(conn: &Connection) -> Result<bool, StoreError> {
    let free = || -> Result<i64, StoreError> {
        Ok(conn.query_row("PRAGMA freelist_count", [], |r| r.get(0))?)
    };
    let before = free()?;
    if before == 0 {
        return Ok(false);
    }
    // One row per page freed: stepped to the end, or it stops after the first.
    let mut stmt = conn.prepare(&format!("PRAGMA incremental_vacuum({GIVE_BACK_PAGES})"))?;
    let mut rows = stmt.query([])?;
    while rows.next()?.is_some() {}
    drop(rows);
    let after = free()?;
    // Without auto-vacuum nothing moves: stop there.
    Ok(after > 0 && after < before)
}
