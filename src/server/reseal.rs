//! At start, secrets sealed before they were bound to their record are sealed again,
//! bound (`datasource::secret`): from then on no unbound blob is accepted, so a blob
//! moved between records, or a record edited outside kerf, never opens.

use std::path::Path;

use crate::datasource::secret::{datasource_binding, SecretError};
use crate::datasource::{SecretKey, Secrets};
use crate::notify::channel::ChannelSecrets;
use crate::notify::ops::record_binding;
use crate::store::{SealedIn, Store, StoreError};

/// Why re-sealing stopped.
#[derive(Debug, thiserror::Error)]
pub enum ResealError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Secret(#[from] SecretError),
}

/// One blob to re-seal: where it lives, the blob, and its binding.
struct Unbound {
    table: SealedIn,
    id: i64,
    sealed: Vec<u8>,
    binding: String,
}

/// Re-seals every unbound blob; returns how many. A blob this key cannot open is
/// left as it is and logged (its record reports the error when used).
pub async fn reseal_unbound(store: &Store, data_dir: &Path) -> Result<usize, ResealError> {
    let mut todo: Vec<Unbound> = store
        .reading(|r| r.datasources())
        .await?
        .into_iter()
        .filter(|d| !SecretKey::is_bound(&d.secrets_sealed))
        .map(|d| Unbound {
            table: SealedIn::Datasources,
            id: d.id,
            binding: datasource_binding(&d.settings_json),
            sealed: d.secrets_sealed,
        })
        .collect();
    todo.extend(
        store
            .channels(None)
            .await?
            .into_iter()
            .filter(|c| !SecretKey::is_bound(&c.secrets_sealed))
            .map(|c| Unbound {
                table: SealedIn::NotificationChannels,
                id: c.id,
                binding: record_binding(&c),
                sealed: c.secrets_sealed,
            }),
    );
    if todo.is_empty() {
        return Ok(0);
    }
    let key = SecretKey::load_or_create(data_dir)?;
    let mut done = 0;
    for u in todo {
        let new = match u.table {
            SealedIn::Datasources => key
                .open_unbound::<Secrets>(&u.sealed)
                .and_then(|s| key.seal_for(&s, &u.binding)),
            SealedIn::NotificationChannels => key
                .open_unbound::<ChannelSecrets>(&u.sealed)
                .and_then(|s| key.seal_for(&s, &u.binding)),
        };
        match new {
            Ok(new) => done += usize::from(store.reseal(u.table, u.id, u.sealed, new).await?),
            Err(e) => {
                tracing::error!(table = ?u.table, id = u.id, error = %e, "cannot re-seal a stored secret")
            }
        }
    }
    Ok(done)
}
