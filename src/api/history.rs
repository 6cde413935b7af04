//! `GET /v1/workloads/{id}/history`: one timeline, newest first, of the workload's audit
//! events, its recommendations (summaries with ids) and `configChanges` (its override,
//! its approvals, and the policies that apply to it now), cursor-paginated.

use axum::extract::{Path, RawQuery, State};
use axum::Json;
use serde_json::{json, Value};

use super::access::Access;
use super::effective::{scoped_workload, Scope};
use super::error::ApiError;
use super::query::{self, bad, decode_cursor, encode_cursor, stored_json, time_or_null};
use super::AppState;
use crate::store::{HistoryCursor, HistoryItem, HistoryQuery};

fn cursor_of(c: HistoryCursor) -> String {
    encode_cursor(&json!([c.time_ms, c.source, c.seq]))
}

fn parse_cursor(key: &str, raw: &str) -> Result<HistoryCursor, ApiError> {
    let v = decode_cursor(key, raw)?;
    let a = v.as_array().filter(|a| a.len() == 3);
    let parsed = a.and_then(|a| {
        Some(HistoryCursor {
            time_ms: a[0].as_i64()?,
            source: u8::try_from(a[1].as_u64()?).ok()?,
            seq: a[2].as_i64()?,
        })
    });
    parsed.ok_or_else(|| bad(key, "is not a cursor returned by this API"))
}

#[utoipa::path(
    get,
    path = "/v1/workloads/{id}/history",
    params(("id" = String, Path))
)]
pub async fn get_history(
    State(state): State<AppState>,
    access: Access,
    Path(id): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>, ApiError> {
    let (mut limit, mut before) = (50, None);
    for (key, value) in query::pairs(raw.as_deref())? {
        match key.as_str() {
            "limit" => limit = query::limit(&key, &value)?,
            "next" => before = Some(parse_cursor(&key, &value)?),
            _ => return Err(bad(&key, "unknown parameter")),
        }
    }
    let w = scoped_workload(&state, &access, &id, Scope::Read).await?;
    let (r, _) = crate::fleet::workloads::resolve(&state.runs, state.now(), &w).await?;
    let s = &w.seen;
    let q = HistoryQuery {
        workload_id: s.id.clone(),
        cluster: s.cluster.clone(),
        namespace: s.namespace.clone(),
        kind: s.kind.clone(),
        name: s.name.clone(),
        policy_ids: r.matched.clone(),
        before,
        limit,
    };
    let page = state.store.workload_history(q).await?;
    let mut items = Vec::with_capacity(page.items.len());
    let mut changes = Vec::new();
    for e in &page.items {
        let time = time_or_null(Some(e.time_ms));
        items.push(match &e.item {
            HistoryItem::Event(payload) => {
                json!({ "type": "event", "time": time, "event": stored_json(payload)? })
            }
            HistoryItem::Recommendation(rec) => json!({
                "type": "recommendation",
                "time": time,
                "recommendation": {
                    "id": rec.id,
                    "runId": rec.run_id,
                    "policyVersion": rec.policy_version,
                    "settingsIdentity": rec.settings_identity,
                    "estimatedMonthlyCostDelta": rec.cost_delta,
                    "summary": stored_json(&rec.summary)?,
                },
            }),
            HistoryItem::ConfigChange(payload) => {
                let change = stored_json(payload)?;
                changes.push(change.clone());
                json!({ "type": "configChange", "time": time, "configChange": change })
            }
        });
    }
    Ok(Json(json!({
        "workloadId": s.id,
        "items": items,
        "configChanges": changes,
        "next": page.next.map(cursor_of),
    })))
}
