//! `GET /v1/clusters/{cluster}/recommendations`: the agent's recommendation feed
//! (`wire::RecommendationFeed`, built by `fleet::feed`), cursor-paginated.

use axum::extract::{Path, RawQuery, State};
use axum::Json;
use serde_json::json;

use super::error::ApiError;
use super::query::{self, bad, decode_cursor, encode_cursor};
use super::AppState;
use crate::wire::RecommendationFeed;

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
    RawQuery(raw): RawQuery,
) -> Result<Json<RecommendationFeed>, ApiError> {
    let (mut limit, mut after) = (500, String::new());
    for (key, value) in query::pairs(raw.as_deref())? {
        match key.as_str() {
            "limit" => limit = query::limit(&key, &value)?,
            "next" => {
                after = decode_cursor(&key, &value)?
                    .as_str()
                    .map(str::to_string)
                    .ok_or_else(|| bad(&key, "is not a cursor returned by this API"))?
            }
            _ => return Err(bad(&key, "unknown parameter")),
        }
    }
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
