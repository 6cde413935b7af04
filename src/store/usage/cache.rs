//! The chunks being written, in memory: each series' latest chunk with its XOR appender,
//! kept between appends so an append does not read and decode its chunk again. It is an
//! optimisation only: a chunk missing from it is read back and resumed
//! (`xor::Appender::resume`), bit for bit what appending on would have made, from
//! whichever table holds it. It is bounded twice: the chunks of slots that ended more
//! than a slot ago are dropped as the clock passes, and past its capacity those of the
//! oldest slots go first.

use std::collections::HashMap;

use super::chunks::{slot_of, OpenChunk};
use super::SLOT_MS;

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
    fn chunks_of_slots_that_ended_more_than_a_slot_ago_are_dropped_as_the_clock_passes() {
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
