use std::time::Duration;

use crate::store::{Store, StoreError, StoreOptions};

fn store(dir: &std::path::Path) -> Store {
    let opts = StoreOptions {
        readers: 1,
        busy_timeout_ms: 1000,
    };
    Store::open_and_migrate(&dir.join("kerf.db"), &opts, 0).expect("store")
}

fn put(
    key: &'static str,
    fail: bool,
) -> impl FnOnce(&super::Tx<'_>) -> Result<&'static str, StoreError> {
    move |tx| {
        tx.tx.execute(
            "INSERT INTO settings (key, value, updated_at) VALUES (?1, '1', 0)",
            [key],
        )?;
        if fail {
            return Err(StoreError::Refused(format!("{key} refused")));
        }
        Ok(key)
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn units_queued_together_commit_together_and_a_failed_one_undoes_only_itself() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = store(dir.path());
    // Hold the writer until three grouped units wait for it, so they form one group.
    let (held, release) = (std::sync::mpsc::channel(), std::sync::mpsc::channel::<()>());
    let holder = {
        let (s, held_tx, release_rx) = (s.clone(), held.0, release.1);
        tokio::spawn(async move {
            s.write(move |_| {
                held_tx.send(()).expect("signal");
                release_rx.recv().expect("release");
                Ok(())
            })
            .await
        })
    };
    held.1.recv().expect("the writer is held");
    let units: Vec<_> = [("a", false), ("b", true), ("c", false)]
        .into_iter()
        .map(|(key, fail)| {
            let s = s.clone();
            tokio::spawn(async move { s.writing_grouped(put(key, fail)).await })
        })
        .collect();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while s.grouped.len() < 3 {
        assert!(std::time::Instant::now() < deadline, "units never queued");
        tokio::task::yield_now().await;
    }
    release.0.send(()).expect("release");
    holder.await.expect("join").expect("held write");
    let mut outcomes = Vec::new();
    for unit in units {
        outcomes.push(unit.await.expect("join"));
    }
    assert_eq!(s.grouped.len(), 0);
    assert!(matches!(outcomes[0], Ok("a")));
    assert!(matches!(&outcomes[1], Err(StoreError::Refused(m)) if m == "b refused"));
    assert!(matches!(outcomes[2], Ok("c")));
    let stored: Vec<String> = s
        .reading(|r| {
            let mut stmt =
                r.0.prepare("SELECT key FROM settings WHERE key IN ('a', 'b', 'c') ORDER BY key")?;
            let keys = stmt.query_map([], |row| row.get(0))?;
            Ok(keys.collect::<Result<_, _>>()?)
        })
        .await
        .expect("read");
    assert_eq!(stored, vec!["a".to_string(), "c".to_string()]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_unit_alone_is_committed_before_it_returns() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = store(dir.path());
    assert_eq!(
        s.writing_grouped(put("solo", false)).await.expect("write"),
        "solo"
    );
    // A fresh connection sees it: it was committed, not left in an open transaction.
    let other = store(dir.path());
    let n: i64 = other
        .reading(|r| {
            Ok(r.0.query_row(
                "SELECT COUNT(*) FROM settings WHERE key = 'solo'",
                [],
                |row| row.get(0),
            )?)
        })
        .await
        .expect("read");
    assert_eq!(n, 1);
}
