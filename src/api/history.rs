//! `GET /v1/workloads/{id}/history`: one timeline, newest first, of the workload's audit
//! events, its recommendations (summaries with ids) and `configChanges` (its override,
//! its approvals, and the policies that apply to it now), cursor-paginated.

use axum::extract::{Path, State};
use axum::Json;
use serde::de::{Deserializer, Error as _};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use utoipa::ToSchema;

use super::access::Access;
use super::effective::{scoped_workload, Scope};
use super::error::ApiError;
use super::query::{encode_cursor, params, stored_json, Query};
use super::state::AppState;
use crate::store::{HistoryCursor, HistoryItem, HistoryQuery};
use crate::timestamp::format_ms;

/// `GET /v1/workloads/{id}/history`: one page of the timeline.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadHistory {
    pub workload_id: String,
    pub items: Vec<HistoryEntry>,
    /// The configuration changes of this page (also in `items`), for quick reading.
    pub config_changes: Vec<Value>,
    /// Pass back as `next` for older entries; `null` on the last page.
    pub next: Option<String>,
}

/// One timeline entry, by `type`.
#[derive(Debug, Serialize, ToSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum HistoryEntry {
    /// An audit event of the workload, as its agent sent it.
    Event { time: String, event: Value },
    /// A recommendation made for the workload.
    Recommendation {
        time: String,
        recommendation: HistoryRecommendation,
    },
    /// A change of its override, approvals or the policies applying to it.
    ConfigChange {
        time: String,
        #[serde(rename = "configChange")]
        config_change: Value,
    },
}

/// A recommendation in the timeline.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct HistoryRecommendation {
    pub id: String,
    pub run_id: String,
    pub policy_version: String,
    pub settings_identity: String,
    pub estimated_monthly_cost_delta: Option<f64>,
    /// The recommendation summary (docs/contracts/recommendations.md).
    pub summary: Value,
}

fn cursor_of(c: HistoryCursor) -> String {
    encode_cursor(&json!([c.time_ms, c.source, c.seq]))
}

/// A timeline position made by [`cursor_of`].
fn position<'de, D: Deserializer<'de>>(d: D) -> Result<Option<HistoryCursor>, D::Error> {
    let v = params::cursor(d)?;
    let a = v
        .as_ref()
        .and_then(Value::as_array)
        .filter(|a| a.len() == 3);
    let parsed = a.and_then(|a| {
        Some(HistoryCursor {
            time_ms: a[0].as_i64()?,
            source: u8::try_from(a[1].as_u64()?).ok()?,
            seq: a[2].as_i64()?,
        })
    });
    parsed
        .map(Some)
        .ok_or_else(|| D::Error::custom(params::NOT_A_CURSOR))
}

/// The timeline's paging.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HistoryPaging {
    #[serde(deserialize_with = "params::limit")]
    limit: Option<usize>,
    #[serde(deserialize_with = "position")]
    next: Option<HistoryCursor>,
}

#[utoipa::path(
    get,
    path = "/v1/workloads/{id}/history",
    summary = "WorkloadHistory: the workload's audit events, recommendations and configChanges (its override, approvals, and the policies applying to it now), newest first.",
    params(
        ("id" = String, Path),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 500, description = "Default 50."),
        ("next" = Option<String>, Query),
    ),
    responses(
        (status = 200, description = "A page of the timeline.", body = WorkloadHistory),
    )
)]
pub async fn get_history(
    State(state): State<AppState>,
    access: Access,
    Path(id): Path<String>,
    Query(q): Query<HistoryPaging>,
) -> Result<Json<WorkloadHistory>, ApiError> {
    let (limit, before) = (q.limit.unwrap_or(50), q.next);
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
        cluster_policy_ids: r.matched_cluster.clone(),
        before,
        limit,
    };
    let page = state.store.reading(move |r| r.workload_history(&q)).await?;
    let mut items = Vec::with_capacity(page.items.len());
    let mut changes = Vec::new();
    for e in &page.items {
        let time = format_ms(e.time_ms);
        items.push(match &e.item {
            HistoryItem::Event(payload) => HistoryEntry::Event {
                time,
                event: stored_json(payload)?,
            },
            HistoryItem::Recommendation(rec) => HistoryEntry::Recommendation {
                time,
                recommendation: HistoryRecommendation {
                    id: rec.id.clone(),
                    run_id: rec.run_id.clone(),
                    policy_version: rec.policy_version.clone(),
                    settings_identity: rec.settings_identity.clone(),
                    estimated_monthly_cost_delta: rec.cost_delta,
                    summary: stored_json(&rec.summary)?,
                },
            },
            HistoryItem::ConfigChange(payload) => {
                let change = stored_json(payload)?;
                changes.push(change.clone());
                HistoryEntry::ConfigChange {
                    time,
                    config_change: change,
                }
            }
        });
    }
    Ok(Json(WorkloadHistory {
        workload_id: s.id.clone(),
        items,
        config_changes: changes,
        next: page.next.map(cursor_of),
    }))
}
