//! Issue 18, item 12: the audit log does not grow without limit. Workload events and
//! configuration changes are pruned past their own retention, in small batches that
//! let other writes in between, `kerf_actions_total`'s stored counts survive pruning,
//! and `kerf audit export --until` writes what retention would prune.

use std::pin::pin;
use std::time::Duration;

use kerf::events::config_change::{action, Change};
use kerf::runs::retention::{prune_audit, AuditRetention, AUDIT_BATCH};
use kerf::store::{Store, StoreOptions};
use serde_json::{json, Value};

use crate::support::wait::eventually_every;
use crate::support::{event, stdout_line, uuid, DataDir};

const DAY: i64 = 86_400_000;
const T0: i64 = 1_800_000_000_000;

fn store(dir: &std::path::Path) -> Store {
    let opts = StoreOptions {
        readers: 2,
        busy_timeout_ms: 5000,
    };
    Store::open_and_migrate(&dir.join("kerf.db"), &opts, T0).expect("store")
}

/// Stores `n` valid events for `cluster` as received at `at`.
async fn events(s: &Store, cluster: &str, n: usize, at: i64) {
    for chunk in (0..n).collect::<Vec<_>>().chunks(1000) {
        let batch: Vec<Value> = chunk.iter().map(|_| event(&uuid())).collect();
        let body = serde_json::to_vec(&batch).expect("json");
        let valid = kerf::events::validate_batch(&body).expect("valid");
        let cluster = cluster.to_string();
        s.writing(move |tx| tx.insert_events(&cluster, &valid, at))
            .await
            .expect("insert");
    }
}

async fn config_change(s: &Store, at: i64) {
    let change = Change::new(action::CLUSTER_UPDATED, "cluster", "c1", Some("c1"));
    s.write_audited(kerf::commands::operator("test"), at, move |_tx| {
        Ok(((), change))
    })
    .await
    .expect("audited");
}

/// A count straight from the database file (a second, read-only connection).
async fn count(dir: &std::path::Path, sql: &'static str) -> i64 {
    let db = dir.join("kerf.db");
    tokio::task::spawn_blocking(move || {
        let c =
            rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
                .expect("open");
        c.query_row(sql, [], |r| r.get(0)).expect("count")
    })
    .await
    .expect("join")
}

fn never() -> impl std::future::Future<Output = ()> {
    std::future::pending()
}

#[tokio::test(flavor = "multi_thread")]
async fn events_and_config_changes_are_pruned_past_their_own_retention_and_still_counted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = store(dir.path());
    events(&s, "old", 1200, T0).await;
    events(&s, "new", 300, T0 + 300 * DAY).await;
    config_change(&s, T0).await;
    config_change(&s, T0 + 300 * DAY).await;
    let counts_before = s.reading(|r| r.event_counts()).await.expect("counts");
    let keep = AuditRetention::from_days(100, 400);
    let now = T0 + 301 * DAY;
    let (e, c) = prune_audit(&s, now, keep, pin!(never())).await;
    assert_eq!(
        (e, c),
        (1200, 0),
        "old events gone, config changes kept longer"
    );
    let left = count(
        dir.path(),
        "SELECT COUNT(*) FROM audit_events WHERE type != 'config_changed'",
    )
    .await;
    assert_eq!(left, 300);
    let mut counts_after = s.reading(|r| r.event_counts()).await.expect("counts");
    let mut counts_before = counts_before;
    counts_before.sort();
    counts_after.sort();
    assert_eq!(
        counts_after, counts_before,
        "kerf_actions_total's seed survives pruning"
    );
    let (_, c) = prune_audit(&s, T0 + 500 * DAY, keep, pin!(never())).await;
    assert_eq!(c, 1, "the old config change goes past its own retention");
    let none = AuditRetention::from_days(0, 0);
    assert_eq!(
        prune_audit(&s, T0 + 5000 * DAY, none, pin!(never())).await,
        (0, 0)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn pruning_a_large_backlog_lets_other_writes_in_between_its_batches() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = store(dir.path());
    let backlog = 60 * AUDIT_BATCH;
    events(&s, "old", backlog, T0).await;
    let keep = AuditRetention::from_days(1, 0);
    let pruner = {
        let s = s.clone();
        tokio::spawn(async move { prune_audit(&s, T0 + 10 * DAY, keep, pin!(never())).await })
    };
    let all = "SELECT COUNT(*) FROM audit_events";
    // No pause between looks: the write below must land while the prune is under way.
    let what = "pruning to start";
    eventually_every(what, Duration::from_secs(30), Duration::ZERO, async || {
        let n = count(dir.path(), all).await;
        if n != backlog as i64 {
            Ok(())
        } else {
            Err(n)
        }
    })
    .await;
    // A write issued while pruning is under way gets the writer before it is done.
    events(&s, "agent", 1, T0 + 10 * DAY).await;
    let left = count(
        dir.path(),
        "SELECT COUNT(*) FROM audit_events WHERE cluster = 'old'",
    )
    .await;
    assert!(left > 0, "the write waited for the whole prune");
    let (pruned, _) = pruner.await.expect("join");
    assert_eq!(pruned, backlog);
}

#[tokio::test(flavor = "multi_thread")]
async fn audit_export_writes_what_arrived_before_until_as_json_lines() {
    let data = DataDir::new();
    let agent = data.create_cluster("prod");
    let kerf = data.start();
    let batch: Vec<Value> = (0..2500).map(|_| event(&uuid())).collect();
    for chunk in batch.chunks(1000) {
        let (s, body) = kerf.api(&agent).post_events("prod", &json!(chunk)).await;
        assert_eq!(s, 200, "{body}");
    }
    assert_eq!(kerf.stop(), Some(0));
    let file = data.path().join("export.jsonl");
    let until = "2999-01-01T00:00:00Z";
    let out = data.run(&[
        "audit",
        "export",
        "--until",
        until,
        "--to",
        file.to_str().unwrap(),
    ]);
    stdout_line(&out);
    let text = std::fs::read_to_string(&file).expect("export");
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    let events: Vec<&Value> = lines.iter().filter(|l| l["record"] == "event").collect();
    assert_eq!(events.len(), 2500);
    assert!(events
        .iter()
        .all(|e| e["cluster"] == "prod" && e["event"]["id"].is_string()));
    let changes: Vec<&Value> = lines
        .iter()
        .filter(|l| l["record"] == "configChange")
        .collect();
    assert!(
        changes
            .iter()
            .any(|c| c["change"]["action"] == "ClusterCreated"),
        "{changes:?}"
    );
    let seqs: Vec<i64> = lines
        .iter()
        .map(|l| l["seq"].as_i64().expect("seq"))
        .collect();
    assert!(
        seqs.windows(2).all(|w| w[0] < w[1]),
        "oldest first, each once"
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&file).expect("meta").permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let before = data.run(&["audit", "export", "--until", "2000-01-01T00:00:00Z"]);
    assert!(before.status.success());
    assert!(before.stdout.is_empty(), "nothing arrived before 2000");
    let bad = data.run(&["audit", "export", "--until", "last tuesday"]);
    assert_eq!(bad.status.code(), Some(2));
    let again = data.run(&[
        "audit",
        "export",
        "--until",
        until,
        "--to",
        file.to_str().unwrap(),
    ]);
    assert_eq!(
        again.status.code(),
        Some(2),
        "an existing file is never overwritten"
    );
}
