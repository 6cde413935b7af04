//! What the usage store's tests share: a store in a temp dir, a slot-aligned clock and
//! series made from literals.

use super::*;
use crate::analysis::Sample;

/// A slot start in November 2023: the hub's clock in the tests.
pub(super) const T0: i64 = 1_699_999_200_000;

/// A store in a new temp dir (kept alive by the returned dir).
pub(super) fn open(opts: &UsageOptions) -> (tempfile::TempDir, UsageStore) {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = reopen(&dir, opts);
    (dir, store)
}

/// The store of `dir`, opened again (a restarted hub).
pub(super) fn reopen(dir: &tempfile::TempDir, opts: &UsageOptions) -> UsageStore {
    UsageStore::open_and_migrate(&dir.path().join(FILE_NAME), opts, T0).expect("usage store")
}

pub(super) fn labels(metric: &str, pairs: &[(&str, &str)]) -> Labels {
    let mut labels: Labels = pairs
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect();
    labels.insert(METRIC_NAME.to_string(), metric.to_string());
    labels
}

pub(super) fn series(metric: &str, pairs: &[(&str, &str)], samples: &[(i64, f64)]) -> WriteSeries {
    WriteSeries {
        labels: labels(metric, pairs),
        samples: samples.to_vec(),
    }
}

/// Every series of `metric` in `cluster`, all time.
pub(super) async fn read_all(store: &UsageStore, cluster: &str, metric: &str) -> Vec<StoredSeries> {
    let q = SeriesQuery::new(cluster, [metric]);
    store.reading(move |r| r.select(&q)).await.expect("select")
}

/// The samples as (time, value bits): NaNs compare.
pub(super) fn bits(samples: &[Sample]) -> Vec<(i64, u64)> {
    samples
        .iter()
        .map(|s| (s.timestamp, s.value.to_bits()))
        .collect()
}

/// Every chunk, closed ones first: (series id, slot, closed, data).
pub(super) async fn chunk_rows(store: &UsageStore) -> Vec<(i64, i64, bool, Vec<u8>)> {
    store
        .reading(|r| {
            let mut stmt = r.conn.prepare(
                "SELECT id, 1, data FROM chunks UNION ALL SELECT id, 0, data FROM open_chunks",
            )?;
            let rows = stmt.query_map([], |r| {
                let id: i64 = r.get(0)?;
                Ok((id & 0xffff_ffff, (id >> 32) * SLOT_MS, r.get(1)?, r.get(2)?))
            })?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
        .await
        .expect("chunks")
}

/// The chunks of `rows` as (slot, closed, sample times), by series then slot.
pub(super) fn shape(rows: &[(i64, i64, bool, Vec<u8>)]) -> Vec<(i64, bool, Vec<i64>)> {
    let mut rows: Vec<_> = rows.iter().collect();
    rows.sort_by_key(|r| (r.0, r.1));
    rows.iter()
        .map(|r| {
            let mut samples = Vec::new();
            crate::xor::decode(&r.3, i64::MIN, i64::MAX, &mut samples).expect("decodes");
            (r.1, r.2, samples.iter().map(|s| s.timestamp).collect())
        })
        .collect()
}

/// `n` samples every 30 s from `start`, values a noisy counter.
pub(super) fn every_30s(start: i64, n: usize) -> Vec<(i64, f64)> {
    (0..n)
        .map(|i| (start + i as i64 * 30_000, (i * i) as f64 * 0.25 + 1.0))
        .collect()
}

/// Fails unless every closed chunk's id is below every open one's (see `chunks`).
pub(super) fn assert_border(rows: &[(i64, i64, bool, Vec<u8>)]) {
    let id = |r: &(i64, i64, bool, Vec<u8>)| ((r.1 / SLOT_MS) << 32) | r.0;
    let closed = rows.iter().filter(|r| r.2).map(id).max();
    let open = rows.iter().filter(|r| !r.2).map(id).min();
    if let (Some(closed), Some(open)) = (closed, open) {
        assert!(
            closed < open,
            "closed id {closed} at or above open id {open}"
        );
    }
}
