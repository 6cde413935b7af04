//! Workloads over HTTP: the filtered, sorted, cursor-paginated list, one workload with
//! its settings in force and latest recommendation (evidence included), and its
//! recommendation history.

use axum::extract::{Path, RawQuery, State};
use axum::Json;
use serde_json::{json, Value};

use super::access::Access;
use super::effective::{scoped_workload, Scope};
use super::error::ApiError;
use super::query::{self, bad, decode_cursor, encode_cursor, stored_json, time_or_null};
use super::workload_query::{cursor_after, finish, take_filter, take_paging, Paging};
use super::AppState;
use crate::store::{RecommendationRow, WorkloadFilter, WorkloadRow};
use crate::wire::RecommendationSummary;

pub async fn list_workloads(
    State(state): State<AppState>,
    access: Access,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>, ApiError> {
    let mut f = WorkloadFilter::default();
    let mut paging = Paging::default();
    for (key, value) in query::pairs(raw.as_deref())? {
        if !take_paging(&mut f, &mut paging, &key, &value)? && !take_filter(&mut f, &key, value)? {
            return Err(bad(&key, "unknown parameter"));
        }
    }
    finish(&mut f, paging, &access)?;
    let sort = f.sort;
    let (items, more) = state.store.list_workload_page(f).await?;
    let next = match (more, items.last()) {
        (true, Some(last)) => Some(cursor_after(sort, last)),
        _ => None,
    };
    let items = items
        .iter()
        .map(|i| workload_json(&i.row, i.summary.as_deref()))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Json(json!({ "items": items, "next": next })))
}

/// The list form of a workload, with current → recommended values per container when
/// its latest recommendation's `summary` is given.
pub fn workload_json(w: &WorkloadRow, summary: Option<&str>) -> Result<Value, ApiError> {
    let notices: Vec<&str> = w.notices.split(',').filter(|s| !s.is_empty()).collect();
    let summary: Option<RecommendationSummary> = match summary {
        Some(text) => Some(serde_json::from_str(text).map_err(ApiError::internal)?),
        None => None,
    };
    let current = stored_json(&w.seen.current)?;
    Ok(json!({
        "id": w.seen.id,
        "cluster": w.seen.cluster,
        "namespace": w.seen.namespace,
        "kind": w.seen.kind,
        "name": w.seen.name,
        "uid": w.seen.uid,
        "replicas": w.seen.replicas,
        "labels": stored_json(&w.seen.labels)?,
        "firstSeenAt": time_or_null(Some(w.first_seen_at)),
        "lastSeenAt": time_or_null(Some(w.last_seen_at)),
        "stale": w.stale,
        "staleReason": w.stale_reason,
        "staleSince": time_or_null(w.stale_since),
        "latestRecommendationId": w.latest_rec_id,
        "hasRecommendation": w.has_changes,
        "dataQuality": w.data_quality,
        "notices": notices,
        "confidence": if w.confidence < 0 { Value::Null } else { json!(w.confidence) },
        "estimatedMonthlyCostDelta": w.cost_delta,
        "risk": risk_name(w.risk),
        "resources": super::export::plan::plan(&current, summary.as_ref()),
    }))
}

/// The list's word for what a recommendation protects against.
fn risk_name(risk: i64) -> Value {
    use crate::runs::summary::{RISK_LEAK, RISK_OOM, RISK_UNDER_PROVISIONED};
    match risk {
        RISK_OOM => json!("oom-kill"),
        RISK_LEAK => json!("memory-leak"),
        RISK_UNDER_PROVISIONED => json!("under-provisioned"),
        _ => Value::Null,
    }
}

/// The API form of a recommendation; the engine's output under `analysis` when stored
/// with it.
pub fn recommendation_json(r: &RecommendationRow) -> Result<Value, ApiError> {
    let mut v = json!({
        "id": r.id,
        "workloadId": r.workload_id,
        "runId": r.run_id,
        "createdAt": time_or_null(Some(r.created_at)),
        "policyVersion": r.policy_version,
        "settingsIdentity": r.settings_identity,
        "estimatedMonthlyCostDelta": r.cost_delta,
        "summary": stored_json(&r.summary)?,
    });
    if !r.analysis.is_empty() {
        v["analysis"] = stored_json(&r.analysis)?;
    }
    Ok(v)
}

pub async fn get_workload(
    State(state): State<AppState>,
    access: Access,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let w = scoped_workload(&state, &access, &id, Scope::Read).await?;
    let rec = match &w.latest_rec_id {
        Some(rec) => state.store.recommendation(rec.clone()).await?,
        None => None,
    };
    let mut v = workload_json(&w, rec.as_ref().map(|r| r.summary.as_str()))?;
    v["current"] = stored_json(&w.seen.current)?;
    v["recommendation"] = match &rec {
        Some(r) => recommendation_json(r)?,
        None => Value::Null,
    };
    if let Some(r) = &rec {
        v["apply"] = json!(super::export::apply_view(&w, r)?);
    }
    Ok(Json(v))
}

pub async fn list_recommendations(
    State(state): State<AppState>,
    access: Access,
    Path(id): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>, ApiError> {
    let (mut limit, mut before, mut analysis) = (20, None, false);
    for (key, value) in query::pairs(raw.as_deref())? {
        match key.as_str() {
            "limit" => limit = query::limit(&key, &value)?,
            "analysis" => analysis = query::boolean(&key, &value)?,
            "next" => {
                let seq = decode_cursor(&key, &value)?.as_i64().filter(|n| *n > 0);
                before =
                    Some(seq.ok_or_else(|| bad(&key, "is not a cursor returned by this API"))?);
            }
            _ => return Err(bad(&key, "unknown parameter")),
        }
    }
    scoped_workload(&state, &access, &id, Scope::Read).await?;
    let (items, more) = state
        .store
        .list_recommendations(id, before, limit, analysis)
        .await?;
    let next = match (more, items.last()) {
        (true, Some(last)) => Some(encode_cursor(&json!(last.seq))),
        _ => None,
    };
    let items = items
        .iter()
        .map(recommendation_json)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Json(json!({ "items": items, "next": next })))
}
