//! What the agent holds of the hub's two feeds between passes, kept current by change:
//! each pass asks for what changed since the versions it holds and applies that (entries
//! replaced, deleted ids removed). It reads a feed whole on start, when the hub answers
//! whole (a version it cannot answer from, or a hub before feeds by change), and every
//! [`RESYNC_MS`] as a safety net. A whole recommendation feed replaces what is held only
//! once every page has arrived, so a hub lost mid-read leaves the last feed intact.

use std::collections::BTreeMap;

use super::feed_index::{FeedIndex, Held};
use super::hub::{FeedItem, Hub, HubError};
use crate::cluster::WorkloadKey;
use crate::wire::config_feed::UnreadableWorkload;
use crate::wire::{ConfigFeed, RecommendationItem, WorkloadConfig};

/// A whole read of both feeds at least this often (ms), whatever the versions say.
pub const RESYNC_MS: i64 = 15 * 60 * 1000;

/// Both feeds as last read.
#[derive(Debug, Default)]
pub struct HeldFeeds {
    /// The config feed's head (its `workloads` empty: they are in `workloads`).
    head: Option<ConfigFeed>,
    /// Config entries by workload id.
    workloads: BTreeMap<String, WorkloadConfig>,
    /// Config entries that did not parse, by workload id (or name, without one).
    unreadable: BTreeMap<String, UnreadableWorkload>,
    /// Recommendation items by workload id (or a place of their own, without one).
    items: BTreeMap<String, FeedItem>,
    config_version: Option<String>,
    items_version: Option<String>,
    /// When the next whole read is due.
    resync_at: i64,
    /// The entries by workload name, built again whenever a read changed them.
    index: FeedIndex,
}

impl HeldFeeds {
    /// Brings both feeds up to date at `now`. On an error what is held stays as it was
    /// (the pass counts the hub as away).
    pub async fn refresh(&mut self, hub: &impl Hub, now: i64) -> Result<(), HubError> {
        if now >= self.resync_at {
            self.config_version = None;
            self.items_version = None;
        }
        // Both feeds at once: a steady pass waits for one round trip, not two.
        let (config, first) = tokio::join!(
            hub.config(self.config_version.clone()),
            hub.recommendations(self.items_version.clone(), None)
        );
        let (config, first) = (config?, first?);
        let whole_items = first.since.is_none() || first.since != self.items_version;
        let mut pages = vec![first];
        if whole_items {
            while let Some(next) = pages.last().and_then(|p| p.next.clone()) {
                pages.push(hub.recommendations(None, Some(next)).await?);
            }
        }
        if self.config_version.is_none() && self.items_version.is_none() {
            self.resync_at = now + RESYNC_MS;
        }
        let mut moved = whole_items || config_moves(&config, self.config_version.as_deref());
        self.take_config(config);
        let mut pages = pages.into_iter();
        let first = pages.next().expect("the first page");
        moved |= !first.deleted.is_empty() || !first.items.is_empty();
        if whole_items {
            self.items.clear();
        }
        for id in &first.deleted {
            self.items.remove(id);
        }
        self.items_version = first.version;
        for item in first.items.into_iter().chain(pages.flat_map(|p| p.items)) {
            let key = match item.workload_id() {
                Some(id) => id.to_string(),
                None => format!("\u{0}{}", self.items.len()),
            };
            self.items.insert(key, item);
        }
        if moved {
            self.index = FeedIndex::build(&self.held());
        }
        Ok(())
    }

    fn held(&self) -> Held<'_> {
        Held {
            workloads: &self.workloads,
            unreadable: &self.unreadable,
            items: &self.items,
        }
    }

    /// The config entry of the workload `key`.
    pub fn config_of(&self, key: &WorkloadKey) -> Option<&WorkloadConfig> {
        self.index.config(&self.held(), key)
    }

    /// The recommendation item of the workload `key`.
    pub fn item_of(&self, key: &WorkloadKey) -> Option<&RecommendationItem> {
        self.index.item(&self.held(), key)
    }

    /// What of the workload `key` could not be read ("recommendation" or "config") and
    /// why.
    pub fn unreadable_of(&self, key: &WorkloadKey) -> Option<(&'static str, &str)> {
        self.index.bad(&self.held(), key)
    }

    /// Takes a config feed just read: whole, or the changes since the version held.
    fn take_config(&mut self, mut feed: ConfigFeed) {
        if feed.since.is_none() || feed.since != self.config_version {
            self.workloads.clear();
            self.unreadable.clear();
        }
        for id in std::mem::take(&mut feed.deleted) {
            self.workloads.remove(&id);
            self.unreadable.remove(&id);
        }
        for w in std::mem::take(&mut feed.workloads) {
            self.unreadable.remove(&w.workload_id);
            self.workloads.insert(w.workload_id.clone(), w);
        }
        for u in std::mem::take(&mut feed.unreadable) {
            let key = u
                .workload_id
                .clone()
                .unwrap_or_else(|| format!("{}/{}/{}", u.namespace, u.kind, u.name));
            self.workloads.remove(&key);
            self.unreadable.insert(key, u);
        }
        self.config_version = feed.version.clone();
        self.head = Some(feed);
    }

    /// The version of the feeds held (`None` before the first read, or from a hub
    /// without versions).
    pub fn version(&self) -> Option<&str> {
        self.config_version.as_deref()
    }

    /// The config feed's head (flags, pause, freeze, settings), once one was read.
    pub fn head(&self) -> Option<&ConfigFeed> {
        self.head.as_ref()
    }
}

/// Whether taking `feed` changes the config entries held at `version`: a whole feed,
/// or changes since it.
fn config_moves(feed: &ConfigFeed, version: Option<&str>) -> bool {
    feed.since.is_none()
        || feed.since.as_deref() != version
        || !feed.deleted.is_empty()
        || !feed.workloads.is_empty()
        || !feed.unreadable.is_empty()
}
