//! The append rules: ordering, duplicates on retry, conflicts, bounds, labels, the series
//! limit, and one transaction per call.

use std::collections::BTreeMap;

use super::fixture::*;
use super::*;

const STALE_NAN: u64 = 0x7ff0_0000_0000_0002;

fn one(reason: Refusal, n: u64) -> BTreeMap<Refusal, u64> {
    BTreeMap::from([(reason, n)])
}

#[tokio::test]
async fn samples_read_back_bit_for_bit_with_the_staleness_marker_and_negative_zero() {
    let (_dir, store) = open(&UsageOptions::default());
    let samples = [
        (T0, 1.5),
        (T0 + 30_000, f64::from_bits(STALE_NAN)),
        (T0 + 60_000, -0.0),
        (T0 + 90_000, f64::INFINITY),
    ];
    let out = store
        .append("c1", vec![series("m", &[("pod", "a")], &samples)], T0)
        .await
        .expect("append");
    assert_eq!(
        out,
        AppendOutcome {
            accepted: 4,
            ..AppendOutcome::default()
        }
    );
    let got = read_all(&store, "c1", "m").await;
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].labels, labels("m", &[("pod", "a")]));
    let want: Vec<(i64, u64)> = samples.iter().map(|(t, v)| (*t, v.to_bits())).collect();
    assert_eq!(bits(&got[0].samples), want);
}

#[tokio::test]
async fn a_retried_batch_is_counted_as_duplicates_and_stored_once_even_after_a_restart() {
    let (dir, store) = open(&UsageOptions::default());
    let mut samples = every_30s(T0 - SLOT_MS, 200);
    samples[7].1 = f64::from_bits(STALE_NAN);
    let batch = vec![series("m", &[("pod", "a")], &samples)];
    store.append("c1", batch.clone(), T0).await.expect("first");
    let retry = store.append("c1", batch.clone(), T0).await.expect("retry");
    assert_eq!((retry.accepted, retry.duplicates), (0, 200));
    assert!(retry.refused.is_empty(), "{:?}", retry.refused_examples);
    drop(store);
    let store = reopen(&dir, &UsageOptions::default());
    let after_restart = store.append("c1", batch, T0).await.expect("retry");
    assert_eq!((after_restart.accepted, after_restart.duplicates), (0, 200));
    let mut overlapping = samples[150..].to_vec();
    overlapping.extend(every_30s(samples[199].0 + 30_000, 10));
    let overlap = store
        .append("c1", vec![series("m", &[("pod", "a")], &overlapping)], T0)
        .await
        .expect("overlap");
    assert_eq!((overlap.accepted, overlap.duplicates), (10, 50));
    let got = read_all(&store, "c1", "m").await;
    assert_eq!(got[0].samples.len(), 210);
}

#[tokio::test]
async fn a_series_sent_twice_in_one_call_continues_where_the_first_left_off() {
    let (_dir, store) = open(&UsageOptions::default());
    let samples = every_30s(T0 - 600_000, 20);
    let batch = vec![
        series("m", &[("pod", "a")], &samples[..12]),
        series("m", &[("pod", "a")], &samples[10..]),
    ];
    let out = store.append("c1", batch, T0).await.expect("append");
    assert_eq!((out.accepted, out.duplicates), (20, 2));
    let got = read_all(&store, "c1", "m").await;
    assert_eq!(bits(&got[0].samples), bits(&to_samples(&samples)));
}

fn to_samples(samples: &[(i64, f64)]) -> Vec<crate::analysis::Sample> {
    samples
        .iter()
        .map(|&(timestamp, value)| crate::analysis::Sample { timestamp, value })
        .collect()
}

#[tokio::test]
async fn a_different_value_at_a_stored_time_is_a_conflict_whether_last_or_earlier() {
    let (dir, store) = open(&UsageOptions::default());
    let earlier_slot = T0 - SLOT_MS + 60_000;
    let stored = [
        (earlier_slot, 1.0),
        (T0, f64::from_bits(STALE_NAN)),
        (T0 + 30_000, 2.0),
    ];
    let pod = [("pod", "a")];
    store
        .append("c1", vec![series("m", &pod, &stored)], T0)
        .await
        .expect("append");
    drop(store);
    let store = reopen(&dir, &UsageOptions::default());
    let other_nan = f64::from_bits(STALE_NAN + 1);
    let clash = [(earlier_slot, 9.0), (T0, other_nan), (T0 + 30_000, 3.0)];
    let out = store
        .append("c1", vec![series("m", &pod, &clash)], T0)
        .await
        .expect("append");
    assert_eq!(out.refused, one(Refusal::Conflict, 3));
    assert_eq!(out.accepted + out.duplicates, 0);
    assert_eq!(
        out.refused_examples.len(),
        1,
        "one example per series and reason"
    );
    let example = &out.refused_examples[0];
    assert!(
        example.starts_with("m{pod=\"a\"}: a different value at a time already stored ("),
        "{example}"
    );
    let got = read_all(&store, "c1", "m").await;
    assert_eq!(bits(&got[0].samples), bits(&to_samples(&stored)));
}

#[tokio::test]
async fn a_new_time_before_the_last_sample_is_out_of_order_in_the_store_and_in_a_batch() {
    let (dir, store) = open(&UsageOptions::default());
    let pod = [("pod", "a")];
    let stored = [(T0 - SLOT_MS, 1.0), (T0, 2.0), (T0 + 60_000, 3.0)];
    store
        .append("c1", vec![series("m", &pod, &stored)], T0)
        .await
        .expect("append");
    drop(store);
    let store = reopen(&dir, &UsageOptions::default());
    let late = [
        (T0 - SLOT_MS + 30_000, 1.0),
        (T0 + 30_000, 2.5),
        (T0 + 120_000, 4.0),
        (T0 + 90_000, 3.5),
    ];
    let out = store
        .append("c1", vec![series("m", &pod, &late)], T0)
        .await
        .expect("append");
    assert_eq!(out.accepted, 1);
    assert_eq!(out.refused, one(Refusal::OutOfOrder, 3));
    let example = &out.refused_examples[0];
    assert!(example.contains("out of order"), "{example}");
    let got = read_all(&store, "c1", "m").await;
    let times: Vec<i64> = got[0].samples.iter().map(|s| s.timestamp).collect();
    assert_eq!(times, [T0 - SLOT_MS, T0, T0 + 60_000, T0 + 120_000]);
}

#[tokio::test]
async fn samples_older_than_the_retention_or_over_ten_minutes_ahead_are_refused_at_the_edges() {
    let opts = UsageOptions {
        retention: std::time::Duration::from_secs(3600),
        ..UsageOptions::default()
    };
    let (_dir, store) = open(&opts);
    let now = T0 + 3 * 3_600_000;
    let oldest = now - 3_600_000;
    let newest = now + FUTURE_TOLERANCE_MS;
    let samples = [
        (oldest - 1, 1.0),
        (oldest, 2.0),
        (newest, 3.0),
        (newest + 1, 4.0),
    ];
    let out = store
        .append("c1", vec![series("m", &[], &samples)], now)
        .await
        .expect("append");
    assert_eq!(out.accepted, 2);
    let want = BTreeMap::from([(Refusal::TooOld, 1), (Refusal::TooNew, 1)]);
    assert_eq!(out.refused, want);
    assert_eq!(out.refused_examples.len(), 2);
    let got = read_all(&store, "c1", "m").await;
    let times: Vec<i64> = got[0].samples.iter().map(|s| s.timestamp).collect();
    assert_eq!(times, [oldest, newest]);
}

#[tokio::test]
async fn a_series_without_a_metric_name_or_with_a_bad_label_name_is_refused_whole_and_named() {
    let (_dir, store) = open(&UsageOptions::default());
    let nameless = WriteSeries {
        labels: labels("", &[("pod", "a")]),
        samples: every_30s(T0, 3),
    };
    let bad = series("m", &[("a-b", "x")], &every_30s(T0, 2));
    let good = series("m", &[("pod", "a")], &every_30s(T0, 1));
    let out = store
        .append("c1", vec![nameless, bad, good], T0)
        .await
        .expect("append");
    assert_eq!(out.accepted, 1);
    assert_eq!(out.refused, one(Refusal::BadLabels, 5));
    assert!(out.refused_examples[0].starts_with("{pod=\"a\"}: bad labels (no __name__"));
    assert!(
        out.refused_examples[1].contains("\"a-b\""),
        "{:?}",
        out.refused_examples
    );
    let stats = store.reading(|r| r.stats("c1")).await.expect("stats");
    assert_eq!(stats.series, 1);
    assert_eq!(stats.refused_by_reason, one(Refusal::BadLabels, 2));
    assert!(stats.refused.iter().any(|r| r.series == "m{a-b=\"x\"}"));
}

#[tokio::test]
async fn a_new_series_past_the_limit_is_refused_and_remembered_while_known_ones_go_on() {
    let opts = UsageOptions {
        max_series_per_cluster: 2,
        refused_series_kept: 2,
        ..UsageOptions::default()
    };
    let (dir, store) = open(&opts);
    let pods = |names: &[&str], t: i64| -> Vec<WriteSeries> {
        names
            .iter()
            .map(|p| series("m", &[("pod", p)], &[(t, 1.0)]))
            .collect()
    };
    let first = store
        .append("c1", pods(&["a", "b", "c"], T0), T0)
        .await
        .expect("append");
    assert_eq!(first.accepted, 2);
    assert_eq!(first.refused, one(Refusal::SeriesLimit, 1));
    assert_eq!(
        first.refused_examples,
        ["m{pod=\"c\"}: over the cluster's series limit (the cluster has 2 series, its limit)"]
    );
    let known = store
        .append(
            "c1",
            pods(&["a", "b", "c", "d", "e"], T0 + 30_000),
            T0 + 30_000,
        )
        .await
        .expect("append");
    assert_eq!(known.accepted, 2, "known series go on");
    assert_eq!(known.refused, one(Refusal::SeriesLimit, 3));
    let other = store
        .append("c2", pods(&["c"], T0), T0)
        .await
        .expect("append");
    assert_eq!(other.accepted, 1, "the limit is per cluster");
    let stats = store.reading(|r| r.stats("c1")).await.expect("stats");
    assert_eq!((stats.series, stats.series_limit), (2, 2));
    assert_eq!(stats.refused.len(), 2, "a bounded list");
    let c = stats
        .refused
        .iter()
        .find(|r| r.series == "m{pod=\"c\"}")
        .expect("c is remembered");
    assert_eq!((c.reason, c.samples), (Refusal::SeriesLimit, 2));
    assert_eq!((c.first_ms, c.last_ms), (T0, T0 + 30_000));
    drop(store);
    let raised = UsageOptions {
        max_series_per_cluster: 3,
        ..opts
    };
    let store = reopen(&dir, &raised);
    let later = T0 + 60_000;
    let accepted = store.append("c1", pods(&["c"], later), later).await;
    assert_eq!(accepted.expect("append").accepted, 1);
    let stats = store.reading(|r| r.stats("c1")).await.expect("stats");
    let names: Vec<&str> = stats.refused.iter().map(|r| r.series.as_str()).collect();
    assert_eq!(
        names,
        ["m{pod=\"d\"}"],
        "an accepted series leaves the list"
    );
    let pruned = store.prune(T0 + 30_001, 100).await.expect("prune");
    assert_eq!(pruned.refused_series, 1, "not refused since the cut-off");
}

#[tokio::test]
async fn an_append_that_fails_midway_leaves_nothing_of_itself() {
    let (_dir, store) = open(&UsageOptions::default());
    let a = [("pod", "a")];
    store
        .append("c1", vec![series("m", &a, &[(T0, 1.0)])], T0)
        .await
        .expect("append");
    // A real SQLite failure after two series were applied: the third one's insert aborts.
    store
        .write(|w| {
            w.conn.execute_batch(
                "CREATE TEMP TRIGGER boom BEFORE INSERT ON series WHEN NEW.metric = 'boom'
                 BEGIN SELECT RAISE(ABORT, 'boom'); END",
            )?;
            Ok(())
        })
        .await
        .expect("trigger");
    let batch = vec![
        series("m", &a, &[(T0 + 30_000, 2.0)]),
        series("m", &[("pod", "b")], &[(T0 + 30_000, 3.0)]),
    ];
    let mut failing = batch.clone();
    failing.push(series("boom", &[], &[(T0, 1.0)]));
    let err = store.append("c1", failing, T0).await.unwrap_err();
    assert!(err.to_string().contains("boom"), "{err}");
    let got = read_all(&store, "c1", "m").await;
    assert_eq!(got.len(), 1, "the new series is not kept");
    assert_eq!(bits(&got[0].samples), [(T0, 1.0f64.to_bits())]);
    store
        .write(|w| Ok(w.conn.execute_batch("DROP TRIGGER boom")?))
        .await
        .expect("drop trigger");
    let again = store.append("c1", batch, T0).await.expect("append");
    assert_eq!(
        (again.accepted, again.duplicates),
        (2, 0),
        "nothing was kept"
    );
    let got = read_all(&store, "c1", "m").await;
    assert_eq!(got.len(), 2);
    let want = [(T0, 1.0f64.to_bits()), (T0 + 30_000, 2.0f64.to_bits())];
    assert_eq!(bits(&got[0].samples), want);
}

#[tokio::test]
async fn a_slot_holding_65535_samples_refuses_more_until_the_next_slot() {
    let (_dir, store) = open(&UsageOptions::default());
    let mut samples: Vec<(i64, f64)> = (0..65_536).map(|i| (T0 + i * 100, 1.0)).collect();
    samples.push((T0 + SLOT_MS, 2.0));
    let now = T0 + SLOT_MS;
    let out = store
        .append("c1", vec![series("m", &[], &samples)], now)
        .await
        .expect("append");
    assert_eq!(out.accepted, 65_536);
    assert_eq!(out.refused, one(Refusal::ChunkFull, 1));
    assert_eq!(chunk_rows(&store).await.len(), 2);
}
