//! "Last used" marks of API tokens and sessions, written off the request path: a
//! request never waits for the single database writer just to note that its credential
//! was used, so a busy writer (a long ingest batch, retention) cannot stall
//! authentication. At most one mark per credential is in flight, however many requests
//! use it at once; the credential's stored time decides when the next one is due.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use crate::store::Store;

/// What is being marked.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Mark {
    Token(i64),
    Session(String),
}

/// The marks in flight. Cheap to clone.
#[derive(Clone, Default)]
pub struct Touches(Arc<Mutex<HashSet<Mark>>>);

impl Touches {
    /// Notes at `now` that API token `id` was used.
    pub fn token(&self, store: &Store, id: i64, now: i64) {
        let store = store.clone();
        self.spawn(Mark::Token(id), async move {
            store.writing(move |tx| tx.touch_token(id, now)).await
        });
    }

    /// Notes at `now` activity on the session whose id hashes to `digest`.
    pub fn session(&self, store: &Store, digest: String, now: i64) {
        let (store, key) = (store.clone(), digest.clone());
        self.spawn(Mark::Session(key), async move {
            store
                .writing(move |tx| tx.touch_session(&digest, now))
                .await
        });
    }

    fn spawn<F>(&self, mark: Mark, write: F)
    where
        F: std::future::Future<Output = Result<(), crate::store::StoreError>> + Send + 'static,
    {
        if !self.lock().insert(mark.clone()) {
            return; // one already on its way
        }
        let marks = self.clone();
        tokio::spawn(async move {
            if let Err(e) = write.await {
                tracing::warn!(error = %e, "cannot record that a credential was used");
            }
            marks.lock().remove(&mark);
        });
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<Mark>> {
        // A set of keys cannot be left half-changed.
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}
