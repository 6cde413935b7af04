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

/// Every chunk row: (id, min_ms, max_ms, samples, data).
pub(super) async fn chunk_rows(store: &UsageStore) -> Vec<(i64, i64, i64, i64, Vec<u8>)> {
    store
        .reading(|r| {
            let mut stmt = r
                .conn
                .prepare("SELECT id, min_ms, max_ms, samples, data FROM chunks ORDER BY id")?;
            let rows = stmt.query_map([], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
        .await
        .expect("chunks")
}

/// `n` samples every 30 s from `start`, values a noisy counter.
pub(super) fn every_30s(start: i64, n: usize) -> Vec<(i64, f64)> {
    (0..n)
        .map(|i| (start + i as i64 * 30_000, (i * i) as f64 * 0.25 + 1.0))
        .collect()
}
