//! The agent's two feeds, answered by change (`fleet::feed_cache`):
//! `GET /v1/clusters/{cluster}/config` and `GET /v1/clusters/{cluster}/recommendations`
//! (cursor-paginated when whole). With `since` (a version a feed handed out) each answers
//! only what changed after it, and with `wait` holds the request until something did.

use std::time::Duration;

use axum::extract::{Path, State};
use axum::Json;
use serde::Deserialize;
use serde_json::json;

use super::error::ApiError;
use super::query::{encode_cursor, params, Query};
use super::state::AppState;
use crate::wire::{ConfigFeed, RecommendationFeed};

/// What both feeds take: the version the agent holds and how long to wait for a change.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ConfigQuery {
    since: Option<String>,
    #[serde(deserialize_with = "params::wait_seconds")]
    wait: Option<u64>,
}

/// The recommendation feed's query: paging, or the version the agent holds.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FeedQuery {
    #[serde(deserialize_with = "params::limit")]
    limit: Option<usize>,
    /// The last workload id of the page before.
    #[serde(deserialize_with = "params::text_cursor")]
    next: Option<String>,
    since: Option<String>,
    #[serde(deserialize_with = "params::wait_seconds")]
    wait: Option<u64>,
}

const SINCE: &str = "A version a feed of this cluster answered with: the answer then holds only the entries changed after it (and the ids in deleted), with since set. A version the hub cannot answer from (another hub process, too old, unknown) gets the whole feed, without since.";
const WAIT: &str = "With since: hold the request up to this many seconds (0-20) while nothing changed after since (a long poll).";

/// `GET /v1/clusters/{cluster}/config`.
#[utoipa::path(
    get,
    path = "/v1/clusters/{cluster}/config",
    summary = "The agent's config feed (cluster token).",
    description = "{cluster, serverTime, flags {paused, pauseScope (cluster | fleet | null), frozen}, pause, freeze {enabled, reason, since, until}, agent {loopIntervalSeconds, heartbeatIntervalSeconds, changeToleranceDefault, eventBufferSize}, workloads [{workloadId, namespace, kind, name, mode {cpu, memory}, policyIdentity, policy}], version, since, deleted}. A pause or freeze whose resumeAt/until has passed no longer applies.",
    params(
        ("cluster" = String, Path),
        ("since" = Option<String>, Query, description = SINCE),
        ("wait" = Option<i64>, Query, minimum = 0, maximum = 20, description = WAIT),
    ),
    responses(
        (status = 200, description = "ClusterConfig", body = ConfigFeed),
    )
)]
pub async fn config(
    State(state): State<AppState>,
    Path(cluster): Path<String>,
    Query(q): Query<ConfigQuery>,
) -> Result<Json<ConfigFeed>, ApiError> {
    long_poll(&state, &cluster, q.since.as_deref(), q.wait).await?;
    Ok(Json(
        config_feed(&state, &cluster, q.since.as_deref()).await?,
    ))
}

/// The config feed once something changed after `since`, or `wait` passed: the long
/// poll as the in-process agent makes it.
pub async fn config_feed_after(
    state: &AppState,
    cluster: &str,
    since: &str,
    wait: Duration,
) -> Result<ConfigFeed, ApiError> {
    long_poll(state, cluster, Some(since), Some(wait.as_secs())).await?;
    config_feed(state, cluster, Some(since)).await
}

/// The config feed after parsing (the in-process agent reads it through this too).
pub async fn config_feed(
    state: &AppState,
    cluster: &str,
    since: Option<&str>,
) -> Result<ConfigFeed, ApiError> {
    let agent = super::agent::agent_settings(state);
    let (store, runs) = (&state.store, &state.runs);
    Ok(state
        .fleet
        .feeds
        .config(store, runs, state.now(), cluster, agent, since)
        .await?)
}

#[utoipa::path(
    get,
    path = "/v1/clusters/{cluster}/recommendations",
    summary = "The agent feed, the latest recommendation of every workload of the cluster.",
    description = "Each item has recommendationId, workloadId, workload, createdAt, runId, policyVersion, settingsIdentity, stale, hasChanges, confidence, coverage, dataQuality, notices, containers (values per container × resource) and estimatedMonthlyCostDelta. The top-level settingsIdentity is the identity in force now; an item with another one is stale for the agent (RecommendationStale). version, since and deleted as in the config feed; a change answer is never paged.",
    params(
        ("cluster" = String, Path),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 500, description = "Default 500."),
        ("next" = Option<String>, Query),
        ("since" = Option<String>, Query, description = SINCE),
        ("wait" = Option<i64>, Query, minimum = 0, maximum = 20, description = WAIT),
    ),
    responses(
        (status = 200, description = "A page of the feed.", body = RecommendationFeed),
    )
)]
pub async fn cluster_recommendations(
    State(state): State<AppState>,
    Path(cluster): Path<String>,
    Query(q): Query<FeedQuery>,
) -> Result<Json<RecommendationFeed>, ApiError> {
    long_poll(&state, &cluster, q.since.as_deref(), q.wait).await?;
    let (limit, after) = (q.limit.unwrap_or(500), q.next.unwrap_or_default());
    Ok(Json(
        page(&state, &cluster, q.since.as_deref(), after, limit).await?,
    ))
}

/// One page of the feed after workload id `after` with the cursor of the next, or what
/// changed after `since` (the in-process agent reads it through this too).
pub async fn page(
    state: &AppState,
    cluster: &str,
    since: Option<&str>,
    after: String,
    limit: usize,
) -> Result<RecommendationFeed, ApiError> {
    let agent = super::agent::agent_settings(state);
    let (mut feed, more_after) = state
        .fleet
        .feeds
        .recommendations(
            &state.store,
            &state.runs,
            state.now(),
            cluster,
            agent,
            since,
            &after,
            limit,
        )
        .await?;
    feed.next = more_after.map(|id| encode_cursor(&json!(id)));
    Ok(feed)
}

/// Holds the request while nothing changed after `since`, at most `wait` seconds.
async fn long_poll(
    state: &AppState,
    cluster: &str,
    since: Option<&str>,
    wait: Option<u64>,
) -> Result<(), ApiError> {
    let Some(seconds) = wait.filter(|s| *s > 0) else {
        return Ok(());
    };
    // The feeds are built (and the cluster checked) before waiting on them.
    config_feed(state, cluster, since).await?;
    let wait = Duration::from_secs(seconds);
    let now = || state.now();
    Ok(state
        .fleet
        .feeds
        .wait_for_change(&state.store, &now, cluster, since, wait)
        .await?)
}
