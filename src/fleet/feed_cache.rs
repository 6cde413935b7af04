//! The agents' feeds by change. The hub keeps each cluster's two feeds as it last built
//! them, every entry marked with the version it last changed at, and a tombstone for
//! each workload that left. An agent that has version N gets only the entries changed
//! after N and the ids deleted since: "nothing changed" is the feed's head alone, a few
//! hundred bytes, whatever the size of the fleet.
//!
//! A built feed is current while the store's feed revision (the newest `feed_changes`
//! row, which a trigger adds on every write to a table the feeds are built from) is the
//! one it was built at, and the clock has not reached the next moment the feeds change
//! by time alone (a pause that resumes, a freeze that ends, an override that expires).
//! When only the revision moved and its rows name the workloads touched, only their
//! entries are rebuilt; otherwise the feeds are built whole. Either way each entry is
//! compared with the last, so only what differs gets a new version. As a safety net
//! they are built whole at least every [`MAX_AGE_MS`].
//!
//! Versions are `<epoch>.<n>`: the epoch is this hub process's, so a version from
//! another process (a restart, another replica), one older than the oldest tombstone
//! kept, or one never handed out gets the whole feed: a full resync, nothing missed.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::runs::Runs;
use crate::store::{FeedChanges, Store, StoreError};
use crate::wire::{
    AgentSettings, ConfigFeed, RecommendationFeed, RecommendationItem, WorkloadConfig,
};

/// A built feed is rebuilt at least this often, whatever the revision says (ms).
pub const MAX_AGE_MS: i64 = 10 * 60 * 1000;
/// Tombstones of workloads that left are kept this long (ms); an agent that last read
/// before the oldest one kept gets a full resync.
pub const TOMBSTONE_MS: i64 = 24 * 3600 * 1000;

/// A cluster whose feeds nobody asked for this long (its agent gone, the cluster
/// retired) has them dropped from the cache; its next reader gets them built whole.
pub const EVICT_AFTER_MS: i64 = 6 * MAX_AGE_MS;

/// Every cluster's feeds as last built. Cheap to share (`Arc`), one per hub process.
pub struct FeedCache {
    epoch: String,
    clusters: std::sync::Mutex<Clusters>,
}

/// The cache's clusters: each one's feeds and when they were last asked for, and the
/// last version handed out for each cluster whose feeds were dropped (their next build
/// starts above it, so no version is ever handed out twice).
#[derive(Default)]
struct Clusters {
    slots: HashMap<String, (Slot, i64)>,
    dropped: HashMap<String, u64>,
}

type Slot = Arc<tokio::sync::Mutex<Option<Built>>>;

impl Default for FeedCache {
    fn default() -> Self {
        FeedCache {
            epoch: uuid::Uuid::new_v4().simple().to_string()[..12].to_string(),
            clusters: Default::default(),
        }
    }
}

/// One entry and the version it last changed at.
#[derive(Debug)]
struct Entry<T> {
    changed: u64,
    value: T,
}

/// A cluster's two feeds as last built.
#[derive(Debug)]
pub struct Built {
    revision: i64,
    built_at: i64,
    /// The next moment the feeds change by the clock alone.
    expires: Option<i64>,
    version: u64,
    /// Below this version a delta cannot be told (tombstones dropped): full resync.
    floor: u64,
    /// The config feed without its workloads (and without `serverTime`).
    config_head: ConfigFeed,
    config: BTreeMap<String, Entry<WorkloadConfig>>,
    /// The recommendation feed without its items.
    rec_head: RecommendationFeed,
    recs: BTreeMap<String, Entry<RecommendationItem>>,
    /// Workload id → (version, time) it left the config feed / the recommendation feed.
    config_gone: BTreeMap<String, (u64, i64)>,
    recs_gone: BTreeMap<String, (u64, i64)>,
}

/// What an agent asked for: everything, or what changed since a version it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Since {
    Everything,
    /// A version this hub handed out and can still answer from.
    Version(u64),
}

impl FeedCache {
    /// The version token of `n`.
    pub fn token(&self, n: u64) -> String {
        format!("{}.{n}", self.epoch)
    }

    /// Reads an agent's `since` against `built`: a version of another epoch, from before
    /// the oldest tombstone or never handed out is [`Since::Everything`].
    pub fn since(&self, token: Option<&str>, built: &Built) -> Since {
        let Some((epoch, n)) = token.and_then(|t| t.rsplit_once('.')) else {
            return Since::Everything;
        };
        match n.parse::<u64>() {
            Ok(n) if epoch == self.epoch && n >= built.floor && n <= built.version => {
                Since::Version(n)
            }
            _ => Since::Everything,
        }
    }

    /// How an answer to `since` from `built` goes: what it holds, its version, and the
    /// `since` it echoes (none on a whole feed).
    fn answering(
        &self,
        since: Option<&str>,
        built: &Built,
    ) -> (Since, Option<String>, Option<String>) {
        let from = self.since(since, built);
        let echo = since.filter(|_| from != Since::Everything);
        (
            from,
            Some(self.token(built.version)),
            echo.map(str::to_string),
        )
    }

    /// `cluster`'s config feed at `now`: whole, or what changed after version `since`.
    pub async fn config(
        &self,
        store: &Store,
        runs: &Runs,
        now: i64,
        cluster: &str,
        agent: AgentSettings,
        since: Option<&str>,
    ) -> Result<ConfigFeed, StoreError> {
        self.with_current(store, runs, now, cluster, agent, |b| {
            let (from, version, echo) = self.answering(since, b);
            let mut feed = b.config(from);
            feed.server_time = crate::timestamp::format_ms(now);
            (feed.version, feed.since) = (version, echo);
            feed
        })
        .await
    }

    /// `cluster`'s recommendation feed at `now`: a page of up to `limit` items after
    /// workload id `after` (and the last id when more follow), or every item changed
    /// after version `since`.
    #[allow(clippy::too_many_arguments)]
    pub async fn recommendations(
        &self,
        store: &Store,
        runs: &Runs,
        now: i64,
        cluster: &str,
        agent: AgentSettings,
        since: Option<&str>,
        after: &str,
        limit: usize,
    ) -> Result<(RecommendationFeed, Option<String>), StoreError> {
        self.with_current(store, runs, now, cluster, agent, |b| {
            let (from, version, echo) = self.answering(since, b);
            let (mut feed, more) = b.recommendations(from, after, limit);
            (feed.version, feed.since) = (version, echo);
            (feed, more)
        })
        .await
    }

    /// Waits up to `wait` (real time) while `cluster`'s feeds are still at version
    /// `since`, looking every quarter second: the long poll. Returns at once for a
    /// version that is not the current one.
    pub async fn wait_for_change(
        &self,
        store: &Store,
        now: &(dyn Fn() -> i64 + Sync),
        cluster: &str,
        since: Option<&str>,
        wait: std::time::Duration,
    ) -> Result<(), StoreError> {
        let Some(asked) = since.and_then(|t| t.strip_prefix(&format!("{}.", self.epoch))) else {
            return Ok(());
        };
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let at = self.unchanged_at(store, now(), cluster).await?;
            if at.map(|v| v.to_string()).as_deref() != Some(asked) {
                return Ok(());
            }
            let now = tokio::time::Instant::now();
            if now >= deadline {
                return Ok(());
            }
            tokio::time::sleep((deadline - now).min(std::time::Duration::from_millis(250))).await;
        }
    }

    /// `cluster`'s slot, asked for at `now`, and the version its feeds start above when
    /// they are built from nothing. Drops the feeds of clusters idle for
    /// [`EVICT_AFTER_MS`] that nobody is reading.
    fn slot(&self, cluster: &str, now: i64) -> (Slot, u64) {
        let mut clusters = self.clusters.lock().unwrap_or_else(|p| p.into_inner());
        let Clusters { slots, dropped } = &mut *clusters;
        slots.retain(|name, (slot, asked)| {
            if name == cluster || now - *asked < EVICT_AFTER_MS {
                return true;
            }
            // In use (a reader holds it): kept until the next sweep.
            let Ok(built) = slot.try_lock() else {
                return true;
            };
            if let Some(b) = built.as_ref() {
                dropped.insert(name.clone(), b.version);
            }
            false
        });
        let (slot, asked) = slots.entry(cluster.to_string()).or_default();
        *asked = now;
        (slot.clone(), dropped.get(cluster).copied().unwrap_or(0))
    }

    /// How many clusters' feeds the cache holds (for tests).
    pub fn held_clusters(&self) -> usize {
        let clusters = self.clusters.lock().unwrap_or_else(|p| p.into_inner());
        clusters.slots.len()
    }

    /// Runs `answer` on `cluster`'s feeds, current at `now` (built again first when the
    /// store or the clock moved on since they were built).
    async fn with_current<T>(
        &self,
        store: &Store,
        runs: &Runs,
        now: i64,
        cluster: &str,
        agent: AgentSettings,
        answer: impl FnOnce(&Built) -> T,
    ) -> Result<T, StoreError> {
        let (slot, above) = self.slot(cluster, now);
        let mut built = slot.lock().await;
        let revision = store.reading(|r| r.feed_revision()).await?;
        let mut whole = true;
        if let Some(b) = built.as_mut().filter(|b| b.config_head.agent == agent) {
            if b.current_at(revision, now) {
                whole = false;
            } else if b.current_at(b.revision, now) {
                // Only the store moved on: rebuild the entries of the workloads it names.
                let from = b.revision;
                let changes = store
                    .reading(move |r| r.feed_changes(from, revision, PARTIAL_LIMIT))
                    .await?;
                if let FeedChanges::Workloads(ids) = changes {
                    b.update(store, runs, now, cluster, ids, revision).await?;
                    whole = false;
                }
            }
        }
        if whole {
            let fresh = build(store, runs, now, cluster, agent, revision, above).await?;
            *built = Some(match built.take() {
                Some(old) => old.merge(fresh, now),
                None => fresh,
            });
        }
        Ok(answer(built.as_ref().expect("built above")))
    }

    /// The version `cluster`'s feeds are at now, without building them (the long poll
    /// asks it while it waits): `None` when they would have to be built again.
    async fn unchanged_at(
        &self,
        store: &Store,
        now: i64,
        cluster: &str,
    ) -> Result<Option<u64>, StoreError> {
        let (slot, _) = self.slot(cluster, now);
        let built = slot.lock().await;
        let revision = store.reading(|r| r.feed_revision()).await?;
        Ok(built
            .as_ref()
            .filter(|b| b.current_at(revision, now))
            .map(|b| b.version))
    }
}

/// Both feeds of `cluster` built whole at `now`, every entry at the first version above
/// `above` (the last one handed out for the cluster, 0 when none was).
async fn build(
    store: &Store,
    runs: &Runs,
    now: i64,
    cluster: &str,
    agent: AgentSettings,
    revision: i64,
    above: u64,
) -> Result<Built, StoreError> {
    let mut config = super::feed::config(store, runs, now, cluster, agent).await?;
    let (mut recs, _) =
        super::feed::recommendations(store, runs, now, cluster, String::new(), ALL).await?;
    let name = cluster.to_string();
    let expires = store.reading(move |r| r.feed_expiry(&name, now)).await?;
    // Most workloads share a handful of policies: each distinct one is kept once.
    let mut shared: HashMap<String, Arc<crate::policy::EffectivePolicy>> = HashMap::new();
    for w in &mut config.workloads {
        match shared.get(&w.policy_identity) {
            Some(p) if **p == *w.policy => w.policy = p.clone(),
            _ => {
                shared.insert(w.policy_identity.clone(), w.policy.clone());
            }
        }
    }
    let version = above + 1;
    let config_entries = entries(std::mem::take(&mut config.workloads), version, |w| {
        w.workload_id.clone()
    });
    let rec_entries = entries(std::mem::take(&mut recs.items), version, |i| {
        i.workload_id.clone()
    });
    config.server_time = String::new();
    Ok(Built {
        revision,
        built_at: now,
        expires,
        version,
        // Versions handed out before the feeds were dropped are not deltas of these.
        floor: if above == 0 { 0 } else { version },
        config_head: config,
        config: config_entries,
        rec_head: recs,
        recs: rec_entries,
        config_gone: BTreeMap::new(),
        recs_gone: BTreeMap::new(),
    })
}

/// `items` by their workload id, each at `version`.
fn entries<T>(
    items: Vec<T>,
    version: u64,
    id: impl Fn(&T) -> String,
) -> BTreeMap<String, Entry<T>> {
    items
        .into_iter()
        .map(|value| {
            let key = id(&value);
            let entry = Entry {
                changed: version,
                value,
            };
            (key, entry)
        })
        .collect()
}

/// More workloads changed than this: the feeds are rebuilt whole (as cheap by then).
const PARTIAL_LIMIT: usize = 2000;

/// Every workload: the recommendation feed read in one page.
const ALL: usize = 1 << 40;

impl Built {
    /// True while these feeds are what building them at `now` would give: the store's
    /// feed revision is still `revision`, no expiry has passed, and they are not too old.
    fn current_at(&self, revision: i64, now: i64) -> bool {
        self.revision == revision
            && self.expires.is_none_or(|t| now < t)
            && now - self.built_at < MAX_AGE_MS
    }

    /// The feeds `fresh` as a successor of these: entries that differ (and a head that
    /// differs) get the next version, the others keep theirs; workloads that left get a
    /// tombstone, tombstones older than [`TOMBSTONE_MS`] go.
    fn merge(self, mut fresh: Built, now: i64) -> Built {
        let next = self.version + 1;
        let (mut config_gone, mut recs_gone) = (self.config_gone, self.recs_gone);
        let mut moved = self.config_head != fresh.config_head || self.rec_head != fresh.rec_head;
        moved |= carry(self.config, &mut fresh.config, &mut config_gone, next, now);
        moved |= carry(self.recs, &mut fresh.recs, &mut recs_gone, next, now);
        fresh.version = if moved { next } else { self.version };
        fresh.floor = self.floor;
        for gone in [&mut config_gone, &mut recs_gone] {
            gone.retain(|_, (v, at)| {
                let keep = now - *at < TOMBSTONE_MS;
                if !keep {
                    fresh.floor = fresh.floor.max(*v);
                }
                keep
            });
        }
        fresh.config_gone = config_gone;
        fresh.recs_gone = recs_gone;
        fresh
    }

    /// Rebuilds the entries of workloads `ids` (of any cluster: others are ignored) at
    /// `now`, as of store revision `revision`; the heads stay (what changes them changes
    /// every entry, and is rebuilt whole).
    async fn update(
        &mut self,
        store: &Store,
        runs: &Runs,
        now: i64,
        cluster: &str,
        ids: Vec<String>,
        revision: i64,
    ) -> Result<(), StoreError> {
        let settings = runs
            .recommender()
            .await
            .map_err(|e| StoreError::Task(e.to_string()))?;
        let policies = runs
            .policy_set(Some(cluster), &settings)
            .await
            .map_err(|e| StoreError::Task(e.to_string()))?;
        let name = cluster.to_string();
        let (rows, approvals, expires) = store
            .reading(move |r| {
                let mut rows = Vec::with_capacity(ids.len());
                for id in ids {
                    let w = r.workload(&id)?.filter(|w| w.seen.cluster == name);
                    let rec = match &w {
                        Some(_) => r.cluster_feed_entry(&name, &id)?,
                        None => None,
                    };
                    rows.push((id, w, rec));
                }
                Ok((
                    rows,
                    r.pending_approvals(&name)?,
                    r.feed_expiry(&name, now)?,
                ))
            })
            .await?;
        let next = self.version + 1;
        let mut moved = false;
        for (id, w, rec) in rows {
            let entry = w.map(|w| super::feed::workload_config(w, &policies, now));
            moved |= replace(
                &mut self.config,
                &mut self.config_gone,
                &id,
                entry,
                next,
                now,
            );
            let item = match rec {
                Some((w, r)) => Some(super::feed::item(&w, r, &policies, &approvals, now)?),
                None => None,
            };
            moved |= replace(&mut self.recs, &mut self.recs_gone, &id, item, next, now);
        }
        if moved {
            self.version = next;
        }
        self.revision = revision;
        self.expires = expires;
        Ok(())
    }

    /// The config feed: whole, or only what changed after `since`.
    pub fn config(&self, since: Since) -> ConfigFeed {
        let mut feed = self.config_head.clone();
        feed.workloads = changed(&self.config, since).cloned().collect();
        feed.deleted = deleted(&self.config_gone, since);
        feed
    }

    /// The recommendation feed: up to `limit` items after workload id `after` (and the
    /// last id when more follow), or, since a version, every item changed after it.
    pub fn recommendations(
        &self,
        since: Since,
        after: &str,
        limit: usize,
    ) -> (RecommendationFeed, Option<String>) {
        let mut feed = self.rec_head.clone();
        feed.deleted = deleted(&self.recs_gone, since);
        if let Since::Version(_) = since {
            feed.items = changed(&self.recs, since).cloned().collect();
            return (feed, None);
        }
        let mut page = self
            .recs
            .range::<str, _>((std::ops::Bound::Excluded(after), std::ops::Bound::Unbounded))
            .map(|(_, e)| &e.value);
        feed.items = page.by_ref().take(limit).cloned().collect();
        let more = page.next().is_some();
        let last = feed.items.last().map(|i| i.workload_id.clone());
        (feed, last.filter(|_| more))
    }
}

/// Carries versions from `old` to the entries of `new` that did not change; the others,
/// and tombstones for the ids `old` had and `new` lacks, get version `next`. True when
/// anything changed.
fn carry<T: PartialEq>(
    mut old: BTreeMap<String, Entry<T>>,
    new: &mut BTreeMap<String, Entry<T>>,
    gone: &mut BTreeMap<String, (u64, i64)>,
    next: u64,
    now: i64,
) -> bool {
    let mut moved = false;
    for (id, entry) in new.iter_mut() {
        match old.remove(id) {
            Some(before) if before.value == entry.value => entry.changed = before.changed,
            _ => {
                entry.changed = next;
                gone.remove(id);
                moved = true;
            }
        }
    }
    for id in old.into_keys() {
        gone.insert(id, (next, now));
        moved = true;
    }
    moved
}

/// Sets `id`'s entry to `new` (none: it left, with a tombstone), at version `next` when
/// it differs from what is there. True when it did.
fn replace<T: PartialEq>(
    entries: &mut BTreeMap<String, Entry<T>>,
    gone: &mut BTreeMap<String, (u64, i64)>,
    id: &str,
    new: Option<T>,
    next: u64,
    now: i64,
) -> bool {
    match (entries.get(id), new) {
        (Some(e), Some(value)) if e.value == value => false,
        (_, Some(value)) => {
            gone.remove(id);
            entries.insert(
                id.to_string(),
                Entry {
                    changed: next,
                    value,
                },
            );
            true
        }
        (Some(_), None) => {
            entries.remove(id);
            gone.insert(id.to_string(), (next, now));
            true
        }
        (None, None) => false,
    }
}

/// The entries changed after `since` (all of them for [`Since::Everything`]).
fn changed<T>(entries: &BTreeMap<String, Entry<T>>, since: Since) -> impl Iterator<Item = &T> {
    let after = match since {
        Since::Everything => 0,
        Since::Version(n) => n,
    };
    entries
        .values()
        .filter(move |e| e.changed > after)
        .map(|e| &e.value)
}

/// The ids that left after `since` (none for a whole feed).
fn deleted(gone: &BTreeMap<String, (u64, i64)>, since: Since) -> Vec<String> {
    match since {
        Since::Everything => Vec::new(),
        Since::Version(n) => gone
            .iter()
            .filter(|(_, (v, _))| *v > n)
            .map(|(id, _)| id.clone())
            .collect(),
    }
}
