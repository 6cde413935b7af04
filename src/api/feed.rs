//! `GET /v1/clusters/{cluster}/recommendations`: the agent's recommendation feed
//! (`wire::RecommendationFeed`, built by `fleet::feed`), cursor-paginated.

use axum::extract::{Path, State};
use axum::Json;
use serde::Deserialize;
use serde_json::json;

use super::error::ApiError;
use super::query::{encode_cursor, params, Query};
use super::state::AppState;
use crate::wire::RecommendationFeed;

/// The feed's paging.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FeedQuery {
    #[serde(deserialize_with = "params::limit")]
    limit: Option<usize>,
    /// The last workload id of the page before.
    #[serde(deserialize_with = "params::text_cursor")]
    next: Option<String>,
}

#[utoipa::path(
    get,
    path = "/v1/clusters/{cluster}/recommendations",
    summary = "The agent feed, the latest recommendation of every workload of the cluster.",
    description = "Each item has recommendationId, workloadId, workload, createdAt, runId, policyVersion, settingsIdentity, stale, hasChanges, confidence, coverage, dataQuality, notices, containers (values per container × resource) and estimatedMonthlyCostDelta. The top-level settingsIdentity is the identity in force now; an item with another one is stale for the agent (RecommendationStale).",
    params(
        ("cluster" = String, Path),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 500, description = "Default 500."),
        ("next" = Option<String>, Query),
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
    let (limit, after) = (q.limit.unwrap_or(500), q.next.unwrap_or_default());
    Ok(Json(page(&state, &cluster, after, limit).await?))
}

/// One page of the feed after workload id `after`, with the cursor of the next (the
/// in-process agent reads it through this too).
pub async fn page(
    state: &AppState,
    cluster: &str,
    after: String,
    limit: usize,
) -> Result<RecommendationFeed, ApiError> {
    let (mut feed, more_after) = crate::fleet::feed::recommendations(
        &state.store,
        &state.runs,
        state.now(),
        cluster,
        after,
        limit,
    )
    .await?;
    feed.next = more_after.map(|id| encode_cursor(&json!(id)));
    Ok(feed)
}
