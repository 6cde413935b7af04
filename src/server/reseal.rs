//! Sealing stored secrets again: at start, blobs sealed before secrets were bound to
//! their record are sealed again, bound (`crate::secret`), so from then on no
//! unbound blob is accepted; and `kerf secrets rotate-key` seals every blob under a
//! new key in one transaction. `kerf restore` uses the same list of blobs to check
//! that a backup's key opens every one of them.

use std::path::Path;

use crate::datasource::{datasource_binding, Secrets};
use crate::notify::channel::ChannelSecrets;
use crate::notify::ops::record_binding;
use crate::secret::{SecretError, SecretKey};
use crate::store::{SealedIn, Store, StoreError};

/// Why re-sealing stopped.
#[derive(Debug, thiserror::Error)]
pub enum ResealError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("{table:?} {id}: {source}")]
    Secret {
        table: SealedIn,
        id: i64,
        source: SecretError,
    },
}

/// One stored blob: where it lives, its record's name, the blob, and its binding.
struct Stored {
    table: SealedIn,
    id: i64,
    name: String,
    sealed: Vec<u8>,
    binding: String,
}

impl Stored {
    /// The record, as an operator knows it: `datasource "prom"`.
    fn record(&self) -> String {
        let what = match self.table {
            SealedIn::Datasources => "datasource",
            SealedIn::NotificationChannels => "notification channel",
        };
        format!("{what} {:?}", self.name)
    }
}

/// Every non-empty sealed blob of the database.
async fn stored(store: &Store) -> Result<Vec<Stored>, StoreError> {
    let mut out: Vec<Stored> = store
        .reading(|r| r.datasources())
        .await?
        .into_iter()
        .map(|d| Stored {
            table: SealedIn::Datasources,
            id: d.id,
            name: d.name,
            binding: datasource_binding(&d.settings_json),
            sealed: d.secrets_sealed,
        })
        .collect();
    let channels = store.reading(|r| r.channels(&None)).await?;
    out.extend(channels.into_iter().map(|c| Stored {
        table: SealedIn::NotificationChannels,
        id: c.id,
        binding: record_binding(&c),
        name: c.name,
        sealed: c.secrets_sealed,
    }));
    out.retain(|s| !s.sealed.is_empty());
    Ok(out)
}

/// `s` opened with `old` (bound or not) and sealed, bound, with `new`.
fn reseal_one(s: &Stored, old: &SecretKey, new: &SecretKey) -> Result<Vec<u8>, ResealError> {
    fn again<T>(s: &Stored, old: &SecretKey, new: &SecretKey) -> Result<Vec<u8>, SecretError>
    where
        T: serde::Serialize + serde::de::DeserializeOwned + Default,
    {
        let value: T = if SecretKey::is_bound(&s.sealed) {
            old.open_for(&s.sealed, &s.binding)?
        } else {
            old.open_unbound(&s.sealed)?
        };
        new.seal_for(&value, &s.binding)
    }
    let out = match s.table {
        SealedIn::Datasources => again::<Secrets>(s, old, new),
        SealedIn::NotificationChannels => again::<ChannelSecrets>(s, old, new),
    };
    out.map_err(|source| ResealError::Secret {
        table: s.table,
        id: s.id,
        source,
    })
}

/// Re-seals every unbound blob, bound, under the data dir's key; returns how many. A
/// blob the key cannot open is left as it is and logged (its record reports the error
/// when used).
pub async fn reseal_unbound(store: &Store, data_dir: &Path) -> Result<usize, ResealError> {
    let todo: Vec<Stored> = stored(store)
        .await?
        .into_iter()
        .filter(|s| !SecretKey::is_bound(&s.sealed))
        .collect();
    if todo.is_empty() {
        return Ok(0);
    }
    let key = SecretKey::load_or_create(data_dir).map_err(|source| ResealError::Secret {
        table: SealedIn::Datasources,
        id: 0,
        source,
    })?;
    let mut done = 0;
    for s in todo {
        match reseal_one(&s, &key, &key) {
            Ok(new) => {
                let replaced = store
                    .writing(move |tx| tx.reseal(s.table, s.id, &s.sealed, &new))
                    .await?;
                done += usize::from(replaced);
            }
            Err(e) => tracing::error!(error = %e, "cannot re-seal a stored secret"),
        }
    }
    Ok(done)
}

/// Seals every stored secret under `new` (opened with `old`), all in one transaction:
/// either every blob moves to the new key or none does. Returns how many.
pub async fn rekey(store: &Store, old: &SecretKey, new: &SecretKey) -> Result<usize, ResealError> {
    let blobs = stored(store).await?;
    let changes = blobs
        .iter()
        .map(|s| Ok((s.table, s.id, s.sealed.clone(), reseal_one(s, old, new)?)))
        .collect::<Result<Vec<_>, ResealError>>()?;
    Ok(store.writing(move |tx| tx.reseal_all(&changes)).await?)
}

/// The records whose stored secrets `key` does not open (bound, or unbound from before
/// binding: those are sealed again bound at the next start); every record with a
/// sealed secret when there is no key.
pub async fn unopened(store: &Store, key: Option<&SecretKey>) -> Result<Vec<String>, StoreError> {
    Ok(stored(store)
        .await?
        .iter()
        .filter(|s| key.is_none_or(|k| reseal_one(s, k, k).is_err()))
        .map(Stored::record)
        .collect())
}

/// True when every stored blob opens with `key` (bound).
pub async fn all_open_with(store: &Store, key: &SecretKey) -> Result<bool, StoreError> {
    Ok(stored(store)
        .await?
        .iter()
        .all(|s| reseal_one(s, key, key).is_ok() && SecretKey::is_bound(&s.sealed)))
}
