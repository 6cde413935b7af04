//! Group commit: units of work that arrive while the writer is busy share its next
//! transaction. Each runs inside its own savepoint, so one that fails undoes only its own
//! changes, and all commit together: one WAL append and one commit for the group, where
//! one each per unit made every concurrent event batch rewrite the index pages the
//! others had just written. Nobody hears `Ok` before the commit that holds their change
//! succeeded, so an acknowledged write is as durable as with [`Store::writing`].

use std::sync::{Arc, Mutex};

use rusqlite::Connection;
use tokio::sync::oneshot;

use super::tx::Tx;
use super::{lock_writer, noted, Store, StoreError};

/// Hands a finished unit its outcome once the group's commit is known.
type Deliver = Box<dyn FnOnce(Result<(), &rusqlite::Error>) + Send>;

/// One queued unit of work: runs in the group's transaction and returns how to deliver
/// its value, or `None` when it failed (it has told its caller already).
type Job = Box<dyn FnOnce(&Tx<'_>) -> Option<Deliver> + Send>;

/// The units waiting for the writer.
#[derive(Default)]
pub(in crate::store) struct Pending(Mutex<Vec<Job>>);

impl Pending {
    fn push(&self, job: Job) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(job);
    }

    fn take(&self) -> Vec<Job> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }

    #[cfg(test)]
    pub(in crate::store) fn len(&self) -> usize {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}

impl Store {
    /// Like [`Store::writing`]: `f`'s changes land together or not at all, and `Ok`
    /// means committed. Units that wait for the writer at the same moment share one
    /// transaction (each in its own savepoint), so many small concurrent writes (agent
    /// event batches) commit at the cost of one.
    pub async fn writing_grouped<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Tx<'_>) -> Result<T, StoreError> + Send + 'static,
    {
        let (send, outcome) = oneshot::channel::<Result<T, StoreError>>();
        self.grouped.push(Box::new(move |tx| match f(tx) {
            Ok(value) => Some(Box::new(move |committed: Result<(), &rusqlite::Error>| {
                let _ = send.send(committed.map(|()| value).map_err(duplicate));
            })),
            Err(e) => {
                let _ = send.send(Err(e));
                None
            }
        }));
        let (writer, health, grouped) = (
            self.writer.clone(),
            self.health.clone(),
            Arc::clone(&self.grouped),
        );
        // Whoever gets the writer first runs every unit queued by then; a unit an
        // earlier leader already ran finds the queue empty here.
        let led = tokio::task::spawn_blocking(move || -> Result<(), StoreError> {
            let mut conn = lock_writer(&writer)?;
            let jobs = grouped.take();
            if jobs.is_empty() {
                return Ok(());
            }
            noted(&health, &mut conn, |c| run_group(c, jobs))
        })
        .await;
        match outcome.await {
            Ok(result) => result,
            // The group never reached its commit (the leader failed or panicked, and
            // the transaction rolled back): this unit's change is not stored.
            Err(_) => Err(match led {
                Ok(Err(e)) => duplicate_store(&e),
                Ok(Ok(())) => StoreError::Task("a grouped write was dropped".into()),
                Err(join) => StoreError::Task(join.to_string()),
            }),
        }
    }
}

/// Runs `jobs` in one transaction, each in a savepoint, then commits and delivers.
fn run_group(conn: &mut Connection, jobs: Vec<Job>) -> Result<(), StoreError> {
    let tx = conn.transaction()?;
    let mut delivers = Vec::with_capacity(jobs.len());
    for job in jobs {
        tx.execute_batch("SAVEPOINT grouped_unit")?;
        match job(&Tx::new(&tx)) {
            Some(deliver) => {
                tx.execute_batch("RELEASE grouped_unit")?;
                delivers.push(deliver);
            }
            None => tx.execute_batch("ROLLBACK TO grouped_unit; RELEASE grouped_unit")?,
        }
    }
    match tx.commit() {
        Ok(()) => {
            delivers.into_iter().for_each(|d| d(Ok(())));
            Ok(())
        }
        Err(e) => {
            delivers.into_iter().for_each(|d| d(Err(&e)));
            Err(e.into())
        }
    }
}

/// The commit's error for each unit of the group: SQLite's code is kept, so a full
/// disk reads as a full disk to every caller.
fn duplicate(e: &rusqlite::Error) -> StoreError {
    match e {
        rusqlite::Error::SqliteFailure(code, message) => {
            StoreError::Sqlite(rusqlite::Error::SqliteFailure(*code, message.clone()))
        }
        other => StoreError::Task(other.to_string()),
    }
}

fn duplicate_store(e: &StoreError) -> StoreError {
    match e {
        StoreError::Sqlite(s) => duplicate(s),
        other => StoreError::Task(other.to_string()),
    }
}

#[cfg(test)]
#[path = "group_commit_tests.rs"]
mod tests;
