//! A run's task, watched: a run whose work panics (a bug) is recorded `failed` with the
//! panic's message and logged as an error, so it never stays `running` until the next
//! restart, and the cluster can run again at once (its slot is freed as the work unwinds).

use tokio::task::JoinHandle;

use super::{Phase, RunErrorEntry, RunErrors, RunStatus};
use crate::store::{RunRecord, Store};

/// Awaits `work` (the run started as `started`); its final record, or `started` marked
/// failed at `now_ms()` when the work panicked.
pub async fn watched(
    work: JoinHandle<RunRecord>,
    started: RunRecord,
    store: &Store,
    now_ms: impl Fn() -> i64,
) -> RunRecord {
    let e = match work.await {
        Ok(done) => return done,
        Err(e) => e,
    };
    let why = crate::jobs::panic_message(e);
    tracing::error!(run = %started.id, cluster = %started.cluster, panic = %why, "a run panicked; recorded as failed");
    let mut run = started;
    run.status = RunStatus::Failed;
    run.phase = Phase::Done;
    run.finished_at = Some(now_ms());
    run.errors = RunErrors::from(vec![RunErrorEntry::Run {
        message: format!("internal error: the run panicked ({why}); it was recorded as failed"),
    }]);
    let failed = run.clone();
    if let Err(e) = store.writing(move |tx| tx.update_run(&failed)).await {
        tracing::error!(run = %run.id, error = %e, "cannot record the failed run");
    }
    run
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::StoreOptions;

    #[tokio::test]
    async fn a_run_that_panics_is_recorded_failed_with_the_panics_message() {
        let dir = tempfile::tempdir().expect("tempdir");
        let opts = StoreOptions {
            readers: 1,
            busy_timeout_ms: 5000,
        };
        let store = Store::open_and_migrate(&dir.path().join("kerf.db"), &opts, 0).expect("store");
        let settings = crate::runs::recommender::RecommenderSettings::default();
        let mut started = crate::runs::engine::new_record(
            "run-1".into(),
            "prod",
            crate::runs::Trigger::Manual,
            1_000,
            &settings,
        );
        let first = started.clone();
        started.seq = store
            .writing(move |tx| tx.insert_run(&first))
            .await
            .expect("insert");
        let work: JoinHandle<RunRecord> =
            tokio::spawn(async { panic!("an index out of bounds in the analysis") });
        let done = watched(work, started.clone(), &store, || 2_000).await;
        assert_eq!(
            (done.status.as_str(), done.finished_at),
            ("failed", Some(2_000))
        );
        let stored = store
            .reading(|r| r.run("run-1"))
            .await
            .expect("read")
            .expect("run");
        assert_eq!(stored.status, RunStatus::Failed);
        assert!(
            stored.errors.to_string().contains("an index out of bounds"),
            "{}",
            stored.errors
        );

        // A run that ends normally is returned as it ended.
        let mut ended = started.clone();
        ended.status = RunStatus::Succeeded;
        let copy = ended.clone();
        let ok = watched(tokio::spawn(async move { copy }), started, &store, || 3_000).await;
        assert_eq!(ok, ended);
    }
}
