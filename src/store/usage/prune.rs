//! Pruning: the chunks whose newest sample is older than a cut-off, a batch per
//! transaction, then the series they leave without chunks. Chunks are found through
//! the series (`first_ms` before the cut-off) and each series' rowid range, so a batch
//! reads only the chunks it deletes and the series table.

use std::collections::BTreeMap;

use rusqlite::{params, TransactionBehavior};

use super::chunks::{chunk_id, slot_of, Totals};
use super::{StoreError, Writer, SLOT_MS};

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

/// Deletes up to `batch` chunks whose newest sample is before `older_than`, in one
/// transaction, with the series they leave empty.
pub(super) fn prune_batch(
    w: &mut Writer,
    older_than: i64,
    batch: usize,
) -> Result<Pruned, StoreError> {
    let Writer { conn, open } = w;
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let last_slot = slot_of(older_than.clamp(0, (1 << 24) * SLOT_MS - 1)) / SLOT_MS;
    let victims: Vec<(i64, i64, i64)> = tx
        .prepare_cached(
            "SELECT c.id, c.samples, length(c.data) FROM series s
             JOIN chunks c ON c.id BETWEEN s.id * 16777216 AND s.id * 16777216 + ?2
             WHERE s.first_ms < ?1 AND c.max_ms < ?1
             LIMIT ?3",
        )?
        .query_map(params![older_than, last_slot, batch as i64], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })?
        .collect::<Result<_, _>>()?;
    let mut done = Pruned::default();
    let mut lost: BTreeMap<i64, Totals> = BTreeMap::new();
    for &(id, samples, bytes) in &victims {
        tx.prepare_cached("DELETE FROM chunks WHERE id = ?1")?
            .execute([id])?;
        let (series, slot) = (id >> 24, (id & 0xff_ffff) * SLOT_MS);
        // Before the commit: a cache entry forgotten in vain is only read back later.
        open.forget(series, slot);
        lost.entry(series).or_default().add(Totals {
            chunks: 1,
            samples,
            bytes,
        });
        done.chunks += 1;
        done.samples += samples as u64;
    }
    for (series, lost) in lost {
        let first: Option<i64> = tx
            .prepare_cached("SELECT MIN(min_ms) FROM chunks WHERE id BETWEEN ?1 AND ?2")?
            .query_row([chunk_id(series, 0), chunk_id(series + 1, 0) - 1], |r| {
                r.get(0)
            })?;
        match first {
            Some(first) => {
                tx.prepare_cached(
                    "UPDATE series SET first_ms = ?2,
                     chunks = chunks - ?3, samples = samples - ?4, bytes = bytes - ?5
                     WHERE id = ?1",
                )?
                .execute([
                    series,
                    first,
                    lost.chunks,
                    lost.samples,
                    lost.bytes,
                ])?;
            }
            None => {
                tx.prepare_cached("DELETE FROM series WHERE id = ?1")?
                    .execute([series])?;
                done.series += 1;
            }
        }
    }
    tx.commit()?;
    done.batches = u64::from(done.chunks > 0);
    Ok(done)
}
