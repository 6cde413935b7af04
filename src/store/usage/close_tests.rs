//! Open and closed chunks: a chunk moves to the closed table once the clock passes its
//! slot's end plus the grace, reads and the append rules see both tables as one, late
//! samples and backfills of a closed slot, and prune giving pages back.

use super::chunks::{self, CLOSE_GRACE_MS};
use super::fixture::*;
use super::*;
use crate::xor;

const A: [(&str, &str); 1] = [("pod", "a")];

#[tokio::test]
async fn a_chunk_closes_once_the_clock_passes_its_slots_end_plus_the_grace_and_reads_see_both() {
    let (_dir, store) = open(&UsageOptions::default());
    let samples = every_30s(T0, 243);
    let append = |part: &[(i64, f64)], now: i64| {
        let (store, part) = (store.clone(), part.to_vec());
        async move {
            let out = store.append("c1", vec![series("m", &A, &part)], now).await;
            assert_eq!(out.expect("append").accepted, part.len() as u64);
        }
    };
    append(&samples[..241], T0 + SLOT_MS).await;
    let open_both = shape(&chunk_rows(&store).await);
    assert_eq!(
        open_both.iter().map(|c| c.1).collect::<Vec<_>>(),
        [false, false]
    );
    append(&samples[241..242], T0 + SLOT_MS + CLOSE_GRACE_MS - 1).await;
    assert!(shape(&chunk_rows(&store).await).iter().all(|c| !c.1));
    append(&samples[242..], T0 + SLOT_MS + CLOSE_GRACE_MS).await;
    let rows = chunk_rows(&store).await;
    let slots: Vec<(i64, bool)> = shape(&rows).iter().map(|c| (c.0, c.1)).collect();
    assert_eq!(slots, [(T0, true), (T0 + SLOT_MS, false)]);
    assert_eq!(rows[0].3, xor::encode(&samples[..240]).expect("encodes"));
    let got = read_all(&store, "c1", "m").await;
    assert_eq!(bits(&got[0].samples), bits(&to_samples(&samples)));
    let q = SeriesQuery::new("c1", ["m"]).between(T0 + SLOT_MS - 30_000, T0 + SLOT_MS);
    let edge = store.reading(move |r| r.select(&q)).await.expect("select");
    let times: Vec<i64> = edge[0].samples.iter().map(|s| s.timestamp).collect();
    assert_eq!(
        times,
        [T0 + SLOT_MS - 30_000, T0 + SLOT_MS],
        "across the border"
    );
}

fn to_samples(samples: &[(i64, f64)]) -> Vec<crate::analysis::Sample> {
    samples
        .iter()
        .map(|&(timestamp, value)| crate::analysis::Sample { timestamp, value })
        .collect()
}

#[tokio::test]
async fn a_closed_chunk_answers_retries_conflicts_and_late_samples_after_a_restart_too() {
    let (dir, store) = open(&UsageOptions::default());
    let now = T0 + SLOT_MS + CLOSE_GRACE_MS;
    let stored = every_30s(T0, 3);
    let batch = vec![series("m", &A, &stored)];
    store
        .append("c1", batch.clone(), now)
        .await
        .expect("append");
    assert!(chunk_rows(&store).await[0].2, "closed at once");
    let retry = store.append("c1", batch, now).await.expect("retry");
    assert_eq!((retry.accepted, retry.duplicates), (0, 3));
    let clash = [(T0 + 30_000, 9.0), (T0 + 45_000, 1.0)];
    let out = store
        .append("c1", vec![series("m", &A, &clash)], now)
        .await
        .expect("append");
    let want = [(Refusal::Conflict, 1), (Refusal::OutOfOrder, 1)];
    assert_eq!(out.refused, want.into_iter().collect());
    drop(store);
    let late = every_30s(T0, 5);
    for at in 3..5 {
        let store = reopen(&dir, &UsageOptions::default());
        let part = vec![series("m", &A, &late[at..at + 1])];
        let out = store.append("c1", part, now).await.expect("late");
        assert_eq!(out.accepted, 1, "after the last sample: accepted");
    }
    let store = reopen(&dir, &UsageOptions::default());
    let rows = chunk_rows(&store).await;
    assert_eq!(rows.len(), 1);
    assert!(rows[0].2, "written in place");
    assert_eq!(rows[0].3, xor::encode(&late).expect("encodes"));
    let got = read_all(&store, "c1", "m").await;
    assert_eq!(bits(&got[0].samples), bits(&to_samples(&late)));
}

#[tokio::test]
async fn a_backfilled_slot_and_a_partial_close_keep_every_closed_id_below_every_open_one() {
    let (_dir, store) = open(&UsageOptions::default());
    let pods = ["a", "b", "c", "d", "e"];
    let batch = |start: i64, n: usize| -> Vec<WriteSeries> {
        pods.iter()
            .map(|p| series("m", &[("pod", p)], &every_30s(start, n)))
            .collect()
    };
    store.append("c1", batch(T0, 4), T0).await.expect("append");
    let later = T0 + SLOT_MS + CLOSE_GRACE_MS;
    let moved = store
        .write(move |w| chunks::close(&w.conn, later, 2))
        .await
        .expect("close");
    assert_eq!(moved, 2);
    let rows = chunk_rows(&store).await;
    let closed: Vec<i64> = rows.iter().filter(|r| r.2).map(|r| r.0).collect();
    assert_eq!(closed, [1, 2], "the lowest ids first");
    assert_border(&rows);
    assert_eq!(read_all(&store, "c1", "m").await.len(), 5);
    // A series seen for the first time, with samples of a slot that closed long ago.
    let old = vec![series(
        "m",
        &[("pod", "f")],
        &every_30s(T0 - 3 * SLOT_MS, 2),
    )];
    let out = store.append("c1", old, later).await.expect("backfill");
    assert_eq!(out.accepted, 2);
    let rows = chunk_rows(&store).await;
    assert!(rows.iter().all(|r| r.2), "the append closed the rest");
    assert_border(&rows);
    assert_eq!(rows.len(), 6);
    assert_eq!(read_all(&store, "c1", "m").await.len(), 6);
}

#[tokio::test]
async fn prune_cuts_inside_the_cut_slot_at_each_chunks_last_sample_and_gives_pages_back() {
    let (_dir, store) = open(&UsageOptions::default());
    let pods: Vec<String> = (0..20).map(|i| format!("p{i}")).collect();
    let span = every_30s(T0 - 4 * SLOT_MS, 5 * 240);
    let mut batch: Vec<WriteSeries> = pods
        .iter()
        .map(|p| series("m", &[("pod", p)], &span))
        .collect();
    batch.push(series("m", &[("pod", "short")], &every_30s(T0, 21)));
    let now = T0 + SLOT_MS;
    store.append("c1", batch, now).await.expect("append");
    let before = store.reading(|r| r.disk_usage()).await.expect("disk");
    let pruned = store.prune(T0 + 1_800_000, 7).await.expect("prune");
    assert_eq!((pruned.chunks, pruned.series), (20 * 4 + 1, 1));
    assert_eq!(pruned.samples, 20 * 4 * 240 + 21);
    let after = store.reading(|r| r.disk_usage()).await.expect("disk");
    assert_eq!((after.chunks, after.samples), (20, 20 * 240));
    assert_eq!(after.free_bytes, 0, "{after:?}");
    assert!(after.file_bytes < before.file_bytes, "{before:?} {after:?}");
    let q = SeriesQuery::new("c1", ["m"]);
    let left = store.reading(move |r| r.series(&q)).await.expect("series");
    assert_eq!(left.len(), 20);
    assert!(left.iter().all(|s| s.first_ms == T0));
    let stats = store.reading(|r| r.stats("c1")).await.expect("stats");
    assert_eq!((stats.chunks, stats.samples), (20, 20 * 240));
    assert_border(&chunk_rows(&store).await);
}
