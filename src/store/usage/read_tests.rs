//! Reads with matchers and windows, series lists, prune, stats, backup and the size of
//! the file.

use super::fixture::*;
use super::*;

/// The datasource's shapes: cAdvisor containers (app, the pause container "POD", the
/// pod-level cgroup without a container), requests by resource, termination reasons.
async fn fleet() -> (tempfile::TempDir, UsageStore) {
    let (dir, store) = open(&UsageOptions::default());
    let s = |metric: &str, pairs: &[(&str, &str)]| series(metric, pairs, &every_30s(T0, 4));
    let batch = vec![
        s(
            "mem",
            &[("namespace", "x"), ("pod", "p1"), ("container", "app")],
        ),
        s(
            "mem",
            &[("namespace", "x"), ("pod", "p1"), ("container", "POD")],
        ),
        s("mem", &[("namespace", "x"), ("pod", "p1")]),
        s(
            "mem",
            &[("namespace", "x"), ("pod", "p2"), ("container", "app")],
        ),
        s(
            "mem",
            &[("namespace", "x"), ("pod", "p3"), ("container", "app")],
        ),
        s(
            "mem",
            &[("namespace", "y"), ("pod", "p1"), ("container", "app")],
        ),
        s(
            "req",
            &[("namespace", "x"), ("pod", "p1"), ("resource", "cpu")],
        ),
        s(
            "req",
            &[("namespace", "x"), ("pod", "p1"), ("resource", "memory")],
        ),
        s(
            "req",
            &[("namespace", "x"), ("pod", "p1"), ("resource", "ephemeral")],
        ),
        s(
            "term",
            &[("namespace", "x"), ("pod", "p1"), ("reason", "OOMKilled")],
        ),
        s(
            "term",
            &[("namespace", "x"), ("pod", "p1"), ("reason", "Error")],
        ),
    ];
    store.append("c1", batch, T0).await.expect("append");
    (dir, store)
}

async fn pods_of(store: &UsageStore, q: SeriesQuery) -> Vec<String> {
    let found = store.reading(move |r| r.select(&q)).await.expect("select");
    found.iter().map(|s| labels::render(&s.labels)).collect()
}

#[tokio::test]
async fn select_applies_equal_not_equal_and_in_matchers_with_absent_labels_as_empty() {
    let (_dir, store) = fleet().await;
    let containers = SeriesQuery::new("c1", ["mem"])
        .matching(LabelMatcher::equal("namespace", "x"))
        .matching(LabelMatcher::one_of("pod", ["p1", "p2"]))
        .matching(LabelMatcher::not_equal("container", ""))
        .matching(LabelMatcher::not_equal("container", "POD"));
    assert_eq!(
        pods_of(&store, containers).await,
        [
            "mem{container=\"app\",namespace=\"x\",pod=\"p1\"}",
            "mem{container=\"app\",namespace=\"x\",pod=\"p2\"}",
        ]
    );
    let pod_level = SeriesQuery::new("c1", ["mem"])
        .matching(LabelMatcher::equal("namespace", "x"))
        .matching(LabelMatcher::equal("container", ""));
    assert_eq!(
        pods_of(&store, pod_level).await,
        ["mem{namespace=\"x\",pod=\"p1\"}"]
    );
    let resources = SeriesQuery::new("c1", ["req"])
        .matching(LabelMatcher::one_of("resource", ["cpu", "memory"]));
    assert_eq!(pods_of(&store, resources).await.len(), 2);
    let oom = SeriesQuery::new("c1", ["term"]).matching(LabelMatcher::equal("reason", "OOMKilled"));
    assert_eq!(
        pods_of(&store, oom).await,
        ["term{namespace=\"x\",pod=\"p1\",reason=\"OOMKilled\"}"]
    );
    let both = SeriesQuery::new("c1", ["req", "term"]);
    assert_eq!(pods_of(&store, both).await.len(), 5);
    let no_pod =
        SeriesQuery::new("c1", ["mem"]).matching(LabelMatcher::one_of("pod", Vec::<String>::new()));
    assert!(pods_of(&store, no_pod).await.is_empty());
    assert!(pods_of(&store, SeriesQuery::new("c2", ["mem"]))
        .await
        .is_empty());
    assert!(
        pods_of(&store, SeriesQuery::new("c1", Vec::<String>::new()))
            .await
            .is_empty()
    );
}

#[tokio::test]
async fn a_window_is_inclusive_at_both_ends_and_spans_chunks_in_time_order() {
    let (_dir, store) = open(&UsageOptions::default());
    let samples = every_30s(T0 - 90_000, 10);
    store
        .append("c1", vec![series("m", &[], &samples)], T0)
        .await
        .expect("append");
    let window = |from: i64, to: i64| {
        let store = store.clone();
        async move {
            let q = SeriesQuery::new("c1", ["m"]).between(from, to);
            let got = store.reading(move |r| r.select(&q)).await.expect("select");
            got.iter()
                .flat_map(|s| s.samples.iter().map(|x| x.timestamp))
                .collect::<Vec<i64>>()
        }
    };
    assert_eq!(
        window(T0 - 60_000, T0 + 30_000).await,
        [T0 - 60_000, T0 - 30_000, T0, T0 + 30_000]
    );
    assert_eq!(window(T0, T0).await, [T0]);
    assert_eq!(
        window(T0 + 1, T0 + 29_999).await,
        Vec::<i64>::new(),
        "a gap: no series"
    );
    assert_eq!(
        window(T0 + 30_000, T0).await,
        Vec::<i64>::new(),
        "from after to"
    );
    assert_eq!(window(i64::MIN, i64::MAX).await.len(), 10);
}

#[tokio::test]
async fn series_are_listed_with_their_span_without_reading_samples() {
    let (_dir, store) = fleet().await;
    let q = SeriesQuery::new("c1", ["term"]);
    let listed = store.reading(move |r| r.series(&q)).await.expect("series");
    assert_eq!(listed.len(), 2);
    assert_eq!((listed[0].first_ms, listed[0].last_ms), (T0, T0 + 90_000));
    assert_eq!(
        listed[0].labels.get("reason").map(String::as_str),
        Some("Error")
    );
    let later = SeriesQuery::new("c1", ["term"]).between(T0 + 90_001, i64::MAX);
    let none = store
        .reading(move |r| r.series(&later))
        .await
        .expect("series");
    assert!(none.is_empty());
}

#[tokio::test]
async fn prune_deletes_old_chunks_in_batches_then_the_series_left_empty() {
    let (_dir, store) = open(&UsageOptions::default());
    let span = every_30s(T0 - 2 * SLOT_MS, 3 * 240);
    let mut batch: Vec<WriteSeries> = ["a", "b", "c"]
        .iter()
        .map(|p| series("m", &[("pod", p)], &span))
        .collect();
    batch.push(series(
        "m",
        &[("pod", "old")],
        &every_30s(T0 - 2 * SLOT_MS, 10),
    ));
    store
        .append("c1", batch, T0 + SLOT_MS)
        .await
        .expect("append");
    assert_eq!(chunk_rows(&store).await.len(), 10);
    let pruned = store.prune(T0, 2).await.expect("prune");
    let want = Pruned {
        chunks: 7,
        samples: 6 * 240 + 10,
        series: 1,
        refused_series: 0,
        batches: 4,
    };
    assert_eq!(pruned, want);
    let q = SeriesQuery::new("c1", ["m"]);
    let left = store.reading(move |r| r.series(&q)).await.expect("series");
    assert_eq!(left.len(), 3);
    assert!(left.iter().all(|s| s.first_ms == T0));
    let again = store
        .append(
            "c1",
            vec![series("m", &[("pod", "old")], &[(T0 + 1, 5.0)])],
            T0 + 1,
        )
        .await
        .expect("append");
    assert_eq!(again.accepted, 1, "a pruned series starts again");
    assert_eq!(store.prune(T0, 2).await.expect("prune"), Pruned::default());
}

#[tokio::test]
async fn stats_count_a_clusters_series_samples_bytes_and_span() {
    let (_dir, store) = fleet().await;
    let stats = store.reading(|r| r.stats("c1")).await.expect("stats");
    let chunk_bytes: usize = chunk_rows(&store).await.iter().map(|r| r.3.len()).sum();
    assert_eq!((stats.series, stats.chunks, stats.samples), (11, 11, 44));
    assert_eq!(stats.chunk_bytes, chunk_bytes as u64);
    assert_eq!(
        (stats.oldest_ms, stats.newest_ms),
        (Some(T0), Some(T0 + 90_000))
    );
    assert!(stats.refused.is_empty());
    let empty = store.reading(|r| r.stats("nowhere")).await.expect("stats");
    assert_eq!((empty.series, empty.samples, empty.oldest_ms), (0, 0, None));
    let disk = store.reading(|r| r.disk_usage()).await.expect("disk");
    assert_eq!((disk.series, disk.chunks, disk.samples), (11, 11, 44));
    assert_eq!(disk.chunk_bytes, chunk_bytes as u64);
    assert!(
        disk.file_bytes >= 4096 && disk.file_bytes % 4096 == 0,
        "{disk:?}"
    );
}

#[tokio::test]
async fn a_backup_opens_as_a_usage_store_holding_the_same_samples() {
    let (dir, store) = fleet().await;
    let to = dir.path().join("backups").join("usage-copy.db");
    store.backup_to(&to).await.expect("backup");
    let err = store.backup_to(&to).await.unwrap_err();
    assert!(err.to_string().contains("already exists"), "{err}");
    let copy = UsageStore::open_and_migrate(&to, &UsageOptions::default(), T0).expect("opens");
    for metric in ["mem", "req", "term"] {
        assert_eq!(
            read_all(&copy, "c1", metric).await,
            read_all(&store, "c1", metric).await
        );
    }
    store.checkpoint().expect("checkpoint");
}

#[tokio::test]
async fn a_clusters_totals_follow_appends_restarts_and_prunes() {
    let (dir, store) = open(&UsageOptions::default());
    let now = T0 + SLOT_MS;
    let span = every_30s(T0 - 2 * SLOT_MS, 3 * 240 + 7);
    let pods = ["a", "b", "c"];
    let batch = |part: &[(i64, f64)]| -> Vec<WriteSeries> {
        pods.iter()
            .map(|p| series("m", &[("pod", p)], part))
            .collect()
    };
    let sums = |store: UsageStore| async move {
        let (stats, disk) = store
            .reading(|r| Ok((r.stats("c1")?, r.disk_usage()?)))
            .await
            .expect("stats");
        assert_eq!(
            (stats.chunks, stats.samples, stats.chunk_bytes),
            (disk.chunks, disk.samples, disk.chunk_bytes),
            "the totals equal the chunks"
        );
        stats.samples
    };
    store
        .append("c1", batch(&span[..300]), now)
        .await
        .expect("append");
    assert_eq!(sums(store.clone()).await, 900);
    drop(store);
    let store = reopen(&dir, &UsageOptions::default());
    store
        .append("c1", batch(&span[250..]), now)
        .await
        .expect("append");
    assert_eq!(sums(store.clone()).await, 3 * 727);
    store.prune(T0, 1).await.expect("prune");
    assert_eq!(sums(store.clone()).await, 3 * 247);
}
