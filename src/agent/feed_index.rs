//! Where each workload's entries sit in the feeds the agent holds, by workload name: a
//! pass looks every workload of the cluster up by name, while the feeds are held by
//! workload id (the hub's changes and deletions name ids). The index is built when what
//! is held changes, not on every pass: at 20,000 workloads building it took 42–50 ms
//! of a steady pass (`cargo bench --bench agent_loop`), for feeds that had not moved.

use std::collections::{BTreeMap, HashMap};

use super::hub::FeedItem;
use crate::cluster::WorkloadKey;
use crate::wire::config_feed::UnreadableWorkload;
use crate::wire::{RecommendationItem, WorkloadConfig};
use crate::workload::WorkloadKind;

/// An entry that could not be read: which feed, and its key in that feed's map.
#[derive(Debug, Clone)]
enum Bad {
    Config(String),
    Item(String),
}

/// The keys of each workload's entries in the held maps, by the workload's key as the
/// cluster names it: an entry of a kind the agent does not change names no live
/// workload, so it is not indexed.
#[derive(Debug, Default)]
pub struct FeedIndex {
    config: HashMap<WorkloadKey, String>,
    items: HashMap<WorkloadKey, String>,
    bad: HashMap<WorkloadKey, Bad>,
}

/// The held maps an index points into.
pub struct Held<'a> {
    pub workloads: &'a BTreeMap<String, WorkloadConfig>,
    pub unreadable: &'a BTreeMap<String, UnreadableWorkload>,
    pub items: &'a BTreeMap<String, FeedItem>,
}

impl FeedIndex {
    /// Indexes `held`. A name met twice keeps its entry with the later key; an item that
    /// cannot be read hides the config of its workload's name (the workload waits for a
    /// readable one), as does a config entry that cannot be read.
    pub fn build(held: &Held<'_>) -> FeedIndex {
        let mut index = FeedIndex::default();
        for (id, w) in held.workloads {
            if let Some(name) = key_of(&w.namespace, &w.kind, &w.name) {
                index.config.insert(name, id.clone());
            }
        }
        for (key, u) in held.unreadable {
            if let Some(name) = key_of(&u.namespace, &u.kind, &u.name) {
                index.bad.insert(name, Bad::Config(key.clone()));
            }
        }
        for (key, item) in held.items {
            match item {
                FeedItem::Ok(i) => {
                    let w = &i.workload;
                    if let Some(name) = key_of(&w.namespace, &w.kind, &w.name) {
                        index.items.insert(name, key.clone());
                    }
                }
                FeedItem::Bad {
                    workload: Some(name),
                    ..
                } => {
                    if let Some(name) = name.typed() {
                        index.bad.insert(name, Bad::Item(key.clone()));
                    }
                }
                FeedItem::Bad { error, .. } => {
                    tracing::warn!(%error, "a recommendation feed item without a workload was ignored")
                }
            }
        }
        index
    }

    /// The config entry of `name`, as of when the index was built over `held`.
    pub fn config<'a>(&self, held: &Held<'a>, name: &WorkloadKey) -> Option<&'a WorkloadConfig> {
        held.workloads.get(self.config.get(name)?)
    }

    /// The recommendation item of `name`.
    pub fn item<'a>(&self, held: &Held<'a>, name: &WorkloadKey) -> Option<&'a RecommendationItem> {
        match held.items.get(self.items.get(name)?)? {
            FeedItem::Ok(i) => Some(i),
            FeedItem::Bad { .. } => None,
        }
    }

    /// What of `name` could not be read ("recommendation" or "config") and why.
    pub fn bad<'a>(&self, held: &Held<'a>, name: &WorkloadKey) -> Option<(&'static str, &'a str)> {
        match self.bad.get(name)? {
            Bad::Config(key) => held
                .unreadable
                .get(key)
                .map(|u| ("config", u.error.as_str())),
            Bad::Item(key) => match held.items.get(key)? {
                FeedItem::Bad { error, .. } => Some(("recommendation", error.as_str())),
                FeedItem::Ok(_) => None,
            },
        }
    }
}

/// The key of a workload the feeds name by its parts, when it is of a kind the agent
/// changes.
fn key_of(namespace: &str, kind: &str, name: &str) -> Option<WorkloadKey> {
    Some(WorkloadKey::new(
        namespace,
        WorkloadKind::parse(kind)?,
        name,
    ))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use crate::policy::{resolve, WorkloadRef};

    fn config(id: &str, kind: &str, name: &str) -> WorkloadConfig {
        let w = WorkloadRef {
            cluster: "prod".into(),
            workload: crate::workload::WorkloadKey::new("shop", kind.into(), name),
            ..Default::default()
        };
        let r = resolve::resolve(&w, &[], None, &json!({}), 0);
        WorkloadConfig {
            workload_id: id.into(),
            namespace: "shop".into(),
            kind: kind.into(),
            name: name.into(),
            mode: r.effective.mode.clone(),
            policy_identity: r.identity,
            policy: Arc::new(r.effective),
        }
    }

    fn key(name: &str) -> WorkloadKey {
        WorkloadKey::new("shop", WorkloadKind::Deployment, name)
    }

    #[test]
    fn each_workload_finds_its_own_entries_and_what_could_not_be_read_hides_the_rest() {
        let workloads: BTreeMap<String, WorkloadConfig> = [
            config("a", "Deployment", "web"),
            // The same name again under a later id (recreated): the later one counts.
            config("b", "Deployment", "web"),
            config("c", "Deployment", "cart"),
            // A kind the agent does not change names no live workload.
            config("d", "CronJob", "nightly"),
        ]
        .into_iter()
        .map(|c| (c.workload_id.clone(), c))
        .collect();
        let unreadable = BTreeMap::from([(
            "e".to_string(),
            UnreadableWorkload {
                workload_id: Some("e".into()),
                namespace: "shop".into(),
                kind: "Deployment".into(),
                name: "search".into(),
                error: "mode: unknown variant".into(),
            },
        )]);
        let items = BTreeMap::from([(
            "c".to_string(),
            FeedItem::Bad {
                workload: Some(crate::workload::WorkloadKey::new(
                    "shop",
                    "Deployment".into(),
                    "cart",
                )),
                workload_id: Some("c".into()),
                error: "containers: invalid type".into(),
            },
        )]);
        let held = Held {
            workloads: &workloads,
            unreadable: &unreadable,
            items: &items,
        };
        let index = FeedIndex::build(&held);
        let id = |name: &str| {
            index
                .config(&held, &key(name))
                .map(|c| c.workload_id.as_str())
        };
        assert_eq!(id("web"), Some("b"));
        assert_eq!(id("cart"), Some("c"));
        assert_eq!(id("search"), None);
        assert_eq!(id("nightly"), None);
        assert!(index.item(&held, &key("cart")).is_none());
        assert_eq!(
            index.bad(&held, &key("cart")),
            Some(("recommendation", "containers: invalid type"))
        );
        assert_eq!(
            index.bad(&held, &key("search")),
            Some(("config", "mode: unknown variant"))
        );
        assert_eq!(index.bad(&held, &key("web")), None);
    }
}
