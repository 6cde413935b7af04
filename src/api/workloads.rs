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
use super::AppState;
use crate::store::{RecommendationRow, SortValue, WorkloadFilter, WorkloadRow, WorkloadSort};

#[utoipa::path(
    get,
    path = "/v1/workloads"
)]
pub async fn list_workloads(
    State(state): State<AppState>,
    access: Access,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>, ApiError> {
    let mut f = WorkloadFilter {
        scopes: access.namespace_scope(),
        ..Default::default()
    };
    let mut order: Option<bool> = None;
    let mut cursor: Option<Value> = None;
    for (key, value) in query::pairs(raw.as_deref())? {
        match key.as_str() {
            "cluster" => f.cluster = Some(value),
            "namespace" => f.namespace = Some(value),
            "kind" => f.kind = Some(value),
            "q" => f.search = Some(value),
            "notice" => f.notice = Some(value),
            "dataQuality" => {
                if !["available", "partial", "unavailable"].contains(&value.as_str()) {
                    return Err(bad(&key, "must be available, partial or unavailable"));
                }
                f.data_quality = Some(value)
            }
            "hasRecommendation" => f.has_recommendation = Some(query::boolean(&key, &value)?),
            "stale" => f.stale = Some(query::boolean(&key, &value)?),
            "sort" => {
                f.sort = match value.as_str() {
                    "name" => WorkloadSort::Name,
                    "savings" => WorkloadSort::Savings,
                    "confidence" => WorkloadSort::Confidence,
                    _ => return Err(bad(&key, "must be name, savings or confidence")),
                }
            }
            "order" => {
                order = Some(match value.as_str() {
                    "asc" => false,
                    "desc" => true,
                    _ => return Err(bad(&key, "must be asc or desc")),
                })
            }
            "limit" => f.limit = query::limit(&key, &value)?,
            "next" => cursor = Some(decode_cursor(&key, &value)?),
            _ => return Err(bad(&key, "unknown parameter")),
        }
    }
    // Biggest savings first; names A→Z; confidence high→low, unless `order` says so.
    f.descending = order.unwrap_or(f.sort != WorkloadSort::Name);
    if let Some(c) = cursor {
        f.after = Some(
            cursor_position(f.sort, &c)
                .ok_or_else(|| bad("next", "is not a cursor of this sort order"))?,
        );
    }
    let sort = f.sort;
    let (items, more) = state.store.list_workloads(f).await?;
    let next = match (more, items.last()) {
        (true, Some(last)) => Some(encode_cursor(&cursor_of(sort, last))),
        _ => None,
    };
    let items = items
        .iter()
        .map(workload_json)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Json(json!({ "items": items, "next": next })))
}

fn cursor_of(sort: WorkloadSort, w: &WorkloadRow) -> Value {
    match sort {
        WorkloadSort::Name => json!(["n", w.seen.name, w.seen.id]),
        WorkloadSort::Savings => json!(["s", w.monthly_savings, w.seen.id]),
        WorkloadSort::Confidence => json!(["c", w.confidence, w.seen.id]),
    }
}

fn cursor_position(sort: WorkloadSort, c: &Value) -> Option<(SortValue, String)> {
    let a = c.as_array().filter(|a| a.len() == 3)?;
    let id = a[2].as_str()?.to_string();
    let value = match (sort, a[0].as_str()?) {
        (WorkloadSort::Name, "n") => SortValue::Text(a[1].as_str()?.to_string()),
        (WorkloadSort::Savings, "s") => SortValue::Real(a[1].as_f64()?),
        (WorkloadSort::Confidence, "c") => SortValue::Integer(a[1].as_i64()?),
        _ => return None,
    };
    Some((value, id))
}

/// The list form of a workload.
pub fn workload_json(w: &WorkloadRow) -> Result<Value, ApiError> {
    let notices: Vec<&str> = w.notices.split(',').filter(|s| !s.is_empty()).collect();
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
    }))
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

#[utoipa::path(
    get,
    path = "/v1/workloads/{id}",
    params(("id" = String, Path))
)]
pub async fn get_workload(
    State(state): State<AppState>,
    access: Access,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let w = scoped_workload(&state, &access, &id, Scope::Read).await?;
    let mut v = workload_json(&w)?;
    v["current"] = stored_json(&w.seen.current)?;
    v["recommendation"] = match &w.latest_rec_id {
        Some(rec) => match state.store.recommendation(rec.clone()).await? {
            Some(r) => recommendation_json(&r)?,
            None => Value::Null,
        },
        None => Value::Null,
    };
    Ok(Json(v))
}

#[utoipa::path(
    get,
    path = "/v1/workloads/{id}/recommendations",
    params(("id" = String, Path))
)]
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
