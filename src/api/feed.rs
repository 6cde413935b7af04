//! `GET /v1/clusters/{cluster}/recommendations`: the agent feed. The latest
//! recommendation of every workload of the cluster, with its id, values per container,
//! confidence, data coverage and the effective-policy identity it was made with
//! (`settingsIdentity`), beside the workload's current effective mode and identity
//! (`policyIdentity`; a mismatch is `RecommendationStale`) and its pending approval, if
//! any (the agent applies it as `ApprovedOnce` with `details.approvalId`).

use axum::extract::{Path, RawQuery, State};
use axum::Json;
use serde_json::{json, Value};

use super::effective::{policy_set, workload_ref};
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
    let policies = policy_set(&state, Some(&cluster)).await?;
    let approvals = state.store.pending_approvals(cluster.clone()).await?;
    let now = state.now();
    let mut items = Vec::with_capacity(rows.len());
    for (w, r) in rows {
        let summary = stored_json(&r.summary)?;
        let current = policies.resolve(&w.seen.id, &workload_ref(&w), now);
        let approval = approvals.get(&r.id).map(|a| {
            let actor = serde_json::from_str::<Value>(&a.actor).unwrap_or(Value::Null);
            json!({
                "id": a.id,
                "approvedBy": actor["name"],
                "approvedAt": time_or_null(Some(a.created_at)),
            })
        });
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
            "policyIdentity": current.identity,
            "recommendationStale": r.settings_identity != current.identity,
            "mode": current.effective.mode,
            "approval": approval,
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
