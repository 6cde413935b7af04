//! The agent's one interface to the hub: the two feeds, the heartbeat, event batches
//! and the usage it collects (remote write).
//! A remote agent talks to it over HTTPS ([`super::http_hub::HttpHub`]); the in-process
//! agent of `mode = "all-in-one"` gets the same calls served by the hub's own operations
//! (`server::in_process`), with the same types, validation and idempotency.
//!
//! Recommendation items are read one by one: an item that does not parse is a
//! [`FeedItem::Bad`] (the agent reports that workload `failed` and goes on); a feed that
//! does not parse as a whole is an error ([`HubError::Unreachable`]).

use std::future::Future;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use crate::wire::cluster_policies::{ClusterPolicies, ClusterPolicyVerdicts};
use crate::wire::{AgentEvent, ConfigFeed, Heartbeat, Readiness, RecommendationItem};

/// Why the hub did not do what was asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HubError {
    /// Not reached, timed out, a 5xx, or an answer that does not parse: try again later.
    #[error("the hub cannot be reached: {0}")]
    Unreachable(String),
    /// 400 `invalid_item`: the items at these indexes were refused (nothing was stored).
    #[error("the hub refused {} event(s) of the batch as invalid", .0.len())]
    InvalidItems(Vec<usize>),
    /// 413: the batch is too large.
    #[error("the hub refused the batch as too large")]
    TooLarge,
    /// Any other refusal (a wrong token, an unknown cluster, ...).
    #[error("the hub refused ({status}, {code}): {message}")]
    Refused {
        status: u16,
        code: String,
        message: String,
    },
}

/// One item of the recommendation feed.
#[derive(Debug, Clone, PartialEq)]
pub enum FeedItem {
    Ok(Box<RecommendationItem>),
    /// An item that does not parse; `workload` is what could be read of its name, and
    /// `workload_id` of its id.
    Bad {
        workload: Option<crate::workload::WorkloadKey>,
        workload_id: Option<String>,
        error: String,
    },
}

impl FeedItem {
    /// The workload id the item is for, when it could be read.
    pub fn workload_id(&self) -> Option<&str> {
        match self {
            FeedItem::Ok(i) => Some(&i.workload_id),
            FeedItem::Bad { workload_id, .. } => workload_id.as_deref(),
        }
    }

    /// Reads one item, keeping what names its workload when the rest does not parse.
    pub fn read(raw: &RawValue) -> FeedItem {
        match serde_json::from_str::<RecommendationItem>(raw.get()) {
            Ok(item) => FeedItem::Ok(Box::new(item)),
            Err(e) => {
                #[derive(Deserialize)]
                #[serde(rename_all = "camelCase")]
                struct Named {
                    #[serde(default)]
                    workload: crate::wire::NamedWorkload,
                    #[serde(default)]
                    workload_id: Option<String>,
                }
                let named = serde_json::from_str::<Named>(raw.get()).ok();
                let (workload, workload_id) = match named {
                    Some(n) => (n.workload.name(), n.workload_id),
                    None => (None, None),
                };
                FeedItem::Bad {
                    workload,
                    workload_id,
                    error: e.to_string(),
                }
            }
        }
    }
}

/// One page of the recommendation feed, or what changed since a version.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FeedPage {
    pub items: Vec<FeedItem>,
    /// The cursor of the next page, if any.
    pub next: Option<String>,
    /// The feed's version (`None` from a hub before feeds by change).
    pub version: Option<String>,
    /// The version asked for, when this is only what changed since it.
    pub since: Option<String>,
    /// Workload ids whose item left the feed since `since`.
    pub deleted: Vec<String>,
}

impl FeedPage {
    /// Reads a page straight from the hub's answer, item by item (no intermediate JSON
    /// tree: at thousands of workloads, building one costs more than the decisions).
    pub fn read(text: &str) -> Result<FeedPage, serde_json::Error> {
        #[derive(Deserialize)]
        struct Page<'a> {
            #[serde(borrow)]
            items: Vec<&'a RawValue>,
            #[serde(default)]
            next: Option<String>,
            #[serde(default)]
            version: Option<String>,
            #[serde(default)]
            since: Option<String>,
            #[serde(default)]
            deleted: Vec<String>,
        }
        let page: Page = serde_json::from_str(text)?;
        Ok(FeedPage {
            items: page.items.into_iter().map(FeedItem::read).collect(),
            next: page.next,
            version: page.version,
            since: page.since,
            deleted: page.deleted,
        })
    }
}

/// The hub as the agent uses it.
pub trait Hub: Send + Sync + 'static {
    /// `GET /v1/clusters/{cluster}/config[?since=]`: whole, or what changed since the
    /// version `since` (when the answer's `since` says so).
    fn config(
        &self,
        since: Option<String>,
    ) -> impl Future<Output = Result<ConfigFeed, HubError>> + Send;

    /// `GET /v1/clusters/{cluster}/recommendations[?since=|?next=]`: a page of the whole
    /// feed, or what changed since the version `since`.
    fn recommendations(
        &self,
        since: Option<String>,
        next: Option<String>,
    ) -> impl Future<Output = Result<FeedPage, HubError>> + Send;

    /// `GET /v1/clusters/{cluster}/config?since=&wait=`: the long poll. Holds the
    /// request up to `wait` while the feeds are still at version `since`; answers the
    /// version they are at when it returns (`None` from a hub that sends none).
    /// The default is a hub that cannot hold a request: it answers `None` at once.
    fn feeds_after(
        &self,
        since: &str,
        wait: std::time::Duration,
    ) -> impl Future<Output = Result<Option<String>, HubError>> + Send {
        let _ = (since, wait);
        async { Ok(None) }
    }

    /// `POST /v1/clusters/{cluster}/heartbeat`.
    fn heartbeat(
        &self,
        heartbeat: &Heartbeat,
    ) -> impl Future<Output = Result<Readiness, HubError>> + Send;

    /// `POST /v1/clusters/{cluster}/events`: stored exactly once per id.
    fn send_events(
        &self,
        batch: &[AgentEvent],
    ) -> impl Future<Output = Result<(), HubError>> + Send;

    /// `POST /v1/clusters/{cluster}/write`: one Prometheus remote-write 1.0 request,
    /// `body` the snappy block of its `WriteRequest` (`wire::remote_write::encode`).
    /// The hub takes an exact duplicate of what it stored as done, so a request is sent
    /// again after any doubt. A 400 is [`HubError::Refused`] with status 400 (never
    /// taken: drop it); 429, 5xx and no answer are [`HubError::Unreachable`] (later).
    fn write(&self, body: bytes::Bytes) -> impl Future<Output = Result<(), HubError>> + Send;

    /// `PUT /v1/clusters/{cluster}/policies`: every RightsizingPolicy object of the
    /// cluster (the whole set); answers the hub's verdict on each.
    fn report_policies(
        &self,
        report: &ClusterPolicies,
    ) -> impl Future<Output = Result<ClusterPolicyVerdicts, HubError>> + Send;
}

/// The refusal a hub answered with (its stable error body), as a [`HubError`].
pub fn refusal(status: u16, body: &Value) -> HubError {
    let error = &body["error"];
    let code = error["code"].as_str().unwrap_or_default().to_string();
    let message = error["message"].as_str().unwrap_or_default().to_string();
    match (status, code.as_str()) {
        (413, _) => HubError::TooLarge,
        (400, "invalid_item") => HubError::InvalidItems(
            error["details"]["items"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|i| i["index"].as_u64().map(|n| n as usize))
                .collect(),
        ),
        (500..=599, _) => HubError::Unreachable(format!("{status} {code}: {message}")),
        _ => HubError::Refused {
            status,
            code,
            message,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_item_that_does_not_parse_keeps_its_name_and_a_page_without_items_is_an_error() {
        let page = FeedPage::read(
            r#"{"items": [
                {"workload": {"namespace": "shop", "kind": "Deployment", "name": "web"}, "recommendationId": 7},
                {"workload": {"namespace": "shop", "name": "cart"}},
                42
            ], "next": "abc", "newerField": true}"#,
        )
        .expect("the page reads");
        assert_eq!(page.next.as_deref(), Some("abc"));
        let names: Vec<_> = page
            .items
            .iter()
            .map(|i| match i {
                FeedItem::Bad {
                    workload, error, ..
                } => {
                    assert!(!error.is_empty());
                    workload.clone()
                }
                FeedItem::Ok(i) => panic!("not an item: {i:?}"),
            })
            .collect();
        assert_eq!(
            names,
            [
                Some(crate::workload::WorkloadKey::new(
                    "shop",
                    "Deployment".into(),
                    "web"
                )),
                None,
                None
            ]
        );
        assert!(FeedPage::read(r#"{"next": null}"#).is_err());
        assert!(FeedPage::read("not json").is_err());
    }
}
