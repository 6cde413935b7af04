//! `GET /v1/clusters/{cluster}/recommendations`: the agent feed. The latest
//! recommendation of every workload of the cluster, with its id, values per container,
//! confidence, data coverage and the settings identity it was made with, beside the
//! identity of the settings in force now (a mismatch is `RecommendationStale`).

use axum::extract::{Path, RawQuery, State};
use axum::Json;
use serde_json::{json, Value};

use super::error::ApiError;
use super::query::{self, bad, decode_cursor, encode_cursor, stored_json, time_or_null};
use super::AppState;

pub async fn cluster_recommendations(
    State(state): State<AppState>,
    Path(cluster): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>, ApiError> {
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
    let settings = state.runs.recommender().await.map_err(ApiError::internal)?;
    let (rows, more) = state
        .store
        .cluster_feed(cluster.clone(), after, limit)
        .await?;
    let next = match (more, rows.last()) {
        (true, Some((w, _))) => Some(encode_cursor(&json!(w.seen.id))),
        _ => None,
    };
    let mut items = Vec::with_capacity(rows.len());
    for (w, r) in rows {
        let summary = stored_json(&r.summary)?;
        items.push(json!({
            "recommendationId": r.id,
            "workloadId": w.seen.id,
            "workload": {
                "namespace": w.seen.namespace,
                "kind": w.seen.kind,
                "name": w.seen.name,
                "uid": w.seen.uid,
            },
            "createdAt": time_or_null(Some(r.created_at)),
            "runId": r.run_id,
            "policyVersion": r.policy_version,
            "settingsIdentity": r.settings_identity,
            "stale": w.stale,
            "hasChanges": w.has_changes,
            "confidence": summary["confidence"],
            "coverage": summary["coverage"],
            "dataQuality": summary["dataQuality"],
            "notices": summary["notices"],
            "containers": summary["containers"],
            "estimatedMonthlyCostDelta": r.cost_delta,
        }));
    }
    Ok(Json(json!({
        "cluster": cluster,
        "settingsIdentity": settings.identity(),
        "policyVersion": settings.policy_version(),
        "items": items,
        "next": next,
    })))
}
