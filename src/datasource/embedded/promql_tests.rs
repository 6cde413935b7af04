//! The PromQL semantics on a real usage store: ranges open on the left, markers never
//! in a range, instant selectors stamped with the evaluation time, `last_over_time`
//! finding pods gone long before the end (slot by slot), `max by`'s groups and NaNs.

use super::fixture::*;
use super::promql::*;
use crate::analysis::Sample;
use crate::datasource::raw::RawSeries;
use crate::store::usage::{SeriesQuery, UsageStore, WriteSeries};

async fn stored(batch: Vec<WriteSeries>) -> (tempfile::TempDir, UsageStore) {
    let (dir, store) = open();
    let outcome = store
        .append("c1", batch, END + 60 * MIN)
        .await
        .expect("append");
    assert_eq!(outcome.refused_samples(), 0, "{outcome:?}");
    (dir, store)
}

fn q() -> SeriesQuery {
    SeriesQuery::new("c1", ["m"])
}

fn one(name: &str, samples: Vec<(i64, f64)>) -> WriteSeries {
    series("m", &[("pod", name)], samples)
}

fn pods(found: &[RawSeries]) -> Vec<(String, Vec<Sample>)> {
    found
        .iter()
        .map(|s| (s.label("pod").to_string(), s.samples.clone()))
        .collect()
}

fn s(timestamp: i64, value: f64) -> Sample {
    Sample { timestamp, value }
}

#[tokio::test]
async fn ranges_are_open_on_the_left_and_hold_no_marker_and_instants_take_the_lookback() {
    let t = T0 + 10 * MIN;
    let (_dir, store) = stored(vec![
        one(
            "a",
            vec![
                (t - 5 * MIN, 1.0),
                (t - 4 * MIN, 2.0),
                (t - MIN, marker()),
                (t, 3.0),
            ],
        ),
        one("b", vec![(t - 2 * MIN, 4.0), (t - MIN, marker())]),
        one("c", vec![(t - 5 * MIN, 5.0)]),
        one("d", vec![(t - 5 * MIN + 1, 6.0), (t + MIN, 7.0)]),
    ])
    .await;
    let (range, instant) = store
        .reading(move |r| Ok((range_at(r, &q(), t, 5 * MIN)?, instant_at(r, &q(), t)?)))
        .await
        .expect("read");
    assert_eq!(
        pods(&range),
        vec![
            ("a".into(), vec![s(t - 4 * MIN, 2.0), s(t, 3.0)]),
            ("b".into(), vec![s(t - 2 * MIN, 4.0)]),
            ("d".into(), vec![s(t - 5 * MIN + 1, 6.0)]),
        ],
        "(t − 5m, t], markers dropped, raw times"
    );
    assert_eq!(
        pods(&instant),
        vec![("a".into(), vec![s(t, 3.0)]), ("d".into(), vec![s(t, 6.0)])],
        "b ends with a marker, c is exactly one lookback old; stamped with t"
    );
}

#[tokio::test]
async fn last_over_time_finds_pods_gone_slots_before_the_end_and_skips_markers() {
    let (from, end) = (WINDOW.start_ms, WINDOW.end_ms);
    let t_of = |t: i64| (t - T0) as f64;
    let each = |a: i64, b: i64| -> Vec<(i64, f64)> {
        every_30s(a, b, 0.0)
            .into_iter()
            .map(|(t, _)| (t, t_of(t)))
            .collect()
    };
    let mut ended = each(from + 30 * MIN, from + 60 * MIN);
    ended.push((from + 60 * MIN + 1, marker()));
    let (_dir, store) = stored(vec![
        one("alive", each(from - 60 * MIN, end + 30 * MIN)),
        one("early", each(from + 2 * MIN, from + 10 * MIN)),
        one("ended", ended),
        one("before", each(from - 60 * MIN, from)),
    ])
    .await;
    let got = store
        .reading(move |r| last_over_time(r, &q(), end, end - from))
        .await
        .expect("read");
    let last = |a: i64, b: i64| t_of(each(a, b).last().expect("samples").0);
    let want = [
        ("alive", last(from - 60 * MIN, end + 1)),
        ("early", last(from + 2 * MIN, from + 10 * MIN)),
        ("ended", last(from + 30 * MIN, from + 60 * MIN)),
    ];
    let got: Vec<(String, f64)> = got
        .into_iter()
        .map(|(l, v)| (l["pod"].clone(), v))
        .collect();
    let want: Vec<(String, f64)> = want.iter().map(|(p, v)| (p.to_string(), *v)).collect();
    assert_eq!(got, want);
}

#[tokio::test]
async fn max_over_time_spans_every_slot_of_the_range() {
    let (from, end) = (WINDOW.start_ms, WINDOW.end_ms);
    let mut samples = every_30s(from, end, 1.0);
    samples[10].1 = 9.0; // in the first slot of the window
    samples[11].1 = marker();
    let (_dir, store) = stored(vec![one("a", samples)]).await;
    let got = store
        .reading(move |r| max_over_time(r, &q(), end, end - from))
        .await
        .expect("read");
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].1, 9.0);
}

#[test]
fn max_by_keeps_the_named_labels_groups_in_first_seen_order_and_nan_loses() {
    let l = |pod: &str, container: &str| {
        labels("m", &[("pod", pod), ("container", container), ("id", "x")])
    };
    let out = max_by(
        &["pod", "namespace"],
        vec![
            (l("b", "app"), f64::NAN),
            (l("a", "app"), 1.0),
            (l("b", "side"), 2.0),
            (l("a", "side"), 0.5),
        ],
        42,
    );
    let got: Vec<(String, usize, f64, i64)> = out
        .iter()
        .map(|s| {
            let x = s.samples[0];
            (
                s.label("pod").to_string(),
                s.labels.len(),
                x.value,
                x.timestamp,
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![("b".into(), 1, 2.0, 42), ("a".into(), 1, 1.0, 42)],
        "only `pod` (namespace is absent), b first, its NaN replaced"
    );
    assert_eq!(larger(1.0, f64::NAN), 1.0);
}
