//! The hub as the in-process agent of `mode = "all-in-one"` (and `kerf demo`) reaches
//! it: the agent's [`Hub`] interface served by the same functions the HTTP routes call
//! after parsing (feeds, heartbeat, event validation, exactly-once storage, the
//! `kerf_actions_total` count; the collected usage's remote writes into the usage
//! store), with the same types, without the network hop. The
//! agent is the cluster's own, so no token is checked. It sits with the server, which
//! starts that agent, so `api` never imports `agent`.

use bytes::Bytes;
use serde_json::json;

use crate::agent::hub::refusal;
use crate::agent::{FeedItem, FeedPage, Hub, HubError};
use crate::api::error::ApiError;
use crate::api::{agent, feed, query, AppState};
use crate::wire::cluster_policies::{ClusterPolicies, ClusterPolicyVerdicts};
use crate::wire::{AgentEvent, ConfigFeed, Heartbeat, Readiness};

/// Items per feed page, as the HTTP route's default.
const PAGE: usize = 500;

/// The hub of cluster `cluster`, in process.
pub struct InProcessHub {
    state: AppState,
    cluster: String,
}

impl InProcessHub {
    pub fn new(state: AppState, cluster: &str) -> InProcessHub {
        InProcessHub {
            state,
            cluster: cluster.into(),
        }
    }
}

/// The refusal the HTTP API would have answered.
fn refused(e: ApiError) -> HubError {
    let body = json!({ "error": { "code": e.code, "message": e.message, "details": e.details } });
    refusal(e.status.as_u16(), &body)
}

impl Hub for InProcessHub {
    async fn config(&self, since: Option<String>) -> Result<ConfigFeed, HubError> {
        feed::config_feed(&self.state, &self.cluster, since.as_deref())
            .await
            .map_err(refused)
    }

    async fn recommendations(
        &self,
        since: Option<String>,
        next: Option<String>,
    ) -> Result<FeedPage, HubError> {
        let after = match next {
            Some(n) => query::decode_cursor("next", &n)
                .map_err(refused)?
                .as_str()
                .unwrap_or_default()
                .to_string(),
            None => String::new(),
        };
        let feed = feed::page(&self.state, &self.cluster, since.as_deref(), after, PAGE)
            .await
            .map_err(refused)?;
        Ok(FeedPage {
            items: feed
                .items
                .into_iter()
                .map(|i| FeedItem::Ok(Box::new(i)))
                .collect(),
            next: feed.next,
            version: feed.version,
            since: feed.since,
            deleted: feed.deleted,
        })
    }

    async fn feeds_after(
        &self,
        since: &str,
        wait: std::time::Duration,
    ) -> Result<Option<String>, HubError> {
        let feed = feed::config_feed_after(&self.state, &self.cluster, since, wait)
            .await
            .map_err(refused)?;
        Ok(feed.version)
    }

    async fn heartbeat(&self, heartbeat: &Heartbeat) -> Result<Readiness, HubError> {
        agent::store_heartbeat(&self.state, &self.cluster, heartbeat.clone())
            .await
            .map_err(refused)
    }

    async fn send_events(&self, batch: &[AgentEvent]) -> Result<(), HubError> {
        let body = serde_json::to_vec(batch)
            .map_err(|e| HubError::Unreachable(format!("the batch does not serialize: {e}")))?;
        agent::store_events(&self.state, &self.cluster, &body)
            .await
            .map_err(refused)?;
        Ok(())
    }

    async fn write(&self, body: Bytes) -> Result<(), HubError> {
        store_usage(&self.state, &self.cluster, body).await
    }

    async fn report_policies(
        &self,
        report: &ClusterPolicies,
    ) -> Result<ClusterPolicyVerdicts, HubError> {
        crate::api::cluster_policies::store_report(&self.state, &self.cluster, report.clone())
            .await
            .map_err(refused)
    }
}

/// Where the in-process agent's remote writes go: the hub's usage store, as
/// `POST /v1/clusters/{cluster}/write` stores them, answered as that route answers.
async fn store_usage(state: &AppState, cluster: &str, body: Bytes) -> Result<(), HubError> {
    crate::api::usage_write::store_write(state, cluster, &body)
        .await
        .map_err(refused)
}
