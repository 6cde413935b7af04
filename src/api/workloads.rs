//! Workloads over HTTP: the filtered, sorted, cursor-paginated list, one workload with
//! its settings in force and latest recommendation (evidence included), and its
//! recommendation history.

use axum::extract::{Path, State};
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use utoipa::ToSchema;

use super::access::Access;
use super::applied::{applied_view, AppliedView};
use super::effective::{scoped_workload, Scope};
use super::error::ApiError;
use super::export::{apply_view, ApplyView};
use super::lists::Page;
use super::query::{encode_cursor, params, stored_json, Query};
use super::state::AppState;
use super::workload_query::{
    cursor_after, filter, OrderParam, SortParam, WorkloadOrder, WorkloadPaging, WorkloadQuery,
};
use crate::export::plan::{plan, pod_requests, ContainerPlan, PodRequests};
use crate::fleet::workloads::{approval_json, ApprovalView};
use crate::store::live_changes::LiveChange;
use crate::store::{RecommendationRow, WorkloadRow};
use crate::timestamp::format_ms;
use crate::wire::RecommendationSummary;

#[utoipa::path(
    get,
    path = "/v1/workloads",
    summary = "Workloads, filtered, sorted, cursor-paginated.",
    params(
        WorkloadQuery,
        ("sort" = inline(Option<SortParam>), Query, description = "name, savings (the signed monthly saving, extra spend last), impact (the size of the cost change either way), risk (what the change protects against, then the biggest extra spend) or confidence. Default name."),
        ("order" = inline(Option<OrderParam>), Query, description = "Default: asc for name, desc otherwise."),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 500, description = "Default 100."),
        ("next" = Option<String>, Query),
    ),
    responses(
        (status = 200, description = "A page of workloads.", body = Page<WorkloadItem>),
    )
)]
pub async fn list_workloads(
    State(state): State<AppState>,
    access: Access,
    Query((q, order, paging)): Query<(WorkloadQuery, WorkloadOrder, WorkloadPaging)>,
) -> Result<Json<Page<WorkloadItem>>, ApiError> {
    let f = filter(q, order, paging, &access)?;
    let sort = f.sort;
    let page = state
        .store
        .reading(move |r| r.list_workload_page(&f))
        .await?;
    let next = page.next.map(|after| cursor_after(sort, &after));
    let ids: Vec<String> = page.items.iter().map(|i| i.row.seen.id.clone()).collect();
    let live = state
        .store
        .reading(move |r| r.live_changes_of(&ids))
        .await?;
    let items = page
        .items
        .iter()
        .map(|i| {
            let applied = live.iter().find(|c| c.workload_id == i.row.seen.id);
            workload_json(&i.row, i.summary.as_deref(), applied)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Json(Page { items, next }))
}

/// The list's word for what a recommendation protects against.
fn risk_name(risk: i64) -> Option<&'static str> {
    use crate::runs::summary::{RISK_LEAK, RISK_OOM, RISK_UNDER_PROVISIONED};
    match risk {
        RISK_OOM => Some("oom-kill"),
        RISK_LEAK => Some("memory-leak"),
        RISK_UNDER_PROVISIONED => Some("under-provisioned"),
        _ => None,
    }
}

/// A workload as lists show it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadItem {
    pub id: String,
    pub cluster: String,
    pub namespace: String,
    pub kind: String,
    pub name: String,
    pub uid: String,
    pub replicas: Option<i64>,
    pub labels: Value,
    pub first_seen_at: String,
    pub last_seen_at: String,
    /// Not seen by the latest runs (or gone from the cluster).
    pub stale: bool,
    pub stale_reason: Option<String>,
    pub stale_since: Option<String>,
    pub latest_recommendation_id: Option<String>,
    /// The latest recommendation changes something.
    pub has_recommendation: bool,
    /// `available`, `partial` or `unavailable`.
    pub data_quality: Option<String>,
    pub notices: Vec<String>,
    /// 0–100; `null` without a recommendation.
    pub confidence: Option<i64>,
    pub estimated_monthly_cost_delta: Option<f64>,
    /// What applying the recommendation protects against: `oom-kill`, `memory-leak`,
    /// `under-provisioned`; `null` for none.
    pub risk: Option<&'static str>,
    /// Per container, each request and limit in force and recommended (CPU millicores,
    /// memory bytes; `recommended` is `null` when it does not change).
    pub resources: Vec<ContainerPlan>,
    /// kerf's change that is live on it, as soon as the agent reports it; `null` when
    /// none (never changed, or rolled back).
    pub applied: Option<AppliedView>,
}

/// One workload: its list form, its settings in force and its latest recommendation.
#[derive(Debug, Serialize, ToSchema)]
pub struct WorkloadDetail {
    #[serde(flatten)]
    pub workload: WorkloadItem,
    /// Its containers' requests and limits as the cluster runs them.
    pub current: Value,
    /// Each pod's effective requests, now and as recommended: app containers and
    /// sidecars summed, or a larger init container's (what the scheduler reserves).
    #[serde(rename = "podRequests")]
    pub pod_requests: PodRequests,
    pub recommendation: Option<RecommendationView>,
    /// The latest recommendation as a server-side apply configuration and the `kubectl`
    /// command that applies it; `null` when nothing changes.
    pub apply: Option<ApplyView>,
    /// Its most recent approval: pending (the agent applies it at its next pass),
    /// applied, or lapsed with the reason; `null` when never approved.
    pub approval: Option<ApprovalView>,
}

/// A recommendation.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RecommendationView {
    pub id: String,
    pub workload_id: String,
    pub run_id: String,
    pub created_at: String,
    pub policy_version: String,
    pub settings_identity: String,
    pub estimated_monthly_cost_delta: Option<f64>,
    /// The recommendation summary (docs/contracts/recommendations.md).
    pub summary: Value,
    /// The engine's output (the evidence), when asked for and stored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub analysis: Option<Value>,
}

/// The list form of a workload, with current → recommended values per container when
/// its latest recommendation's `summary` is given, and its live change if it has one.
pub fn workload_json(
    w: &WorkloadRow,
    summary: Option<&str>,
    applied: Option<&LiveChange>,
) -> Result<WorkloadItem, ApiError> {
    let summary: Option<RecommendationSummary> = match summary {
        Some(text) => Some(serde_json::from_str(text).map_err(ApiError::internal)?),
        None => None,
    };
    let current = stored_json(&w.seen.current)?;
    Ok(WorkloadItem {
        id: w.seen.id.clone(),
        cluster: w.seen.cluster.clone(),
        namespace: w.seen.namespace.clone(),
        kind: w.seen.kind.clone(),
        name: w.seen.name.clone(),
        uid: w.seen.uid.clone(),
        replicas: w.seen.replicas,
        labels: stored_json(&w.seen.labels)?,
        first_seen_at: format_ms(w.first_seen_at),
        last_seen_at: format_ms(w.last_seen_at),
        stale: w.stale,
        stale_reason: w.stale_reason.clone(),
        stale_since: w.stale_since.map(format_ms),
        latest_recommendation_id: w.latest_rec_id.clone(),
        has_recommendation: w.has_changes,
        data_quality: w.data_quality.clone(),
        notices: w
            .notices
            .split(',')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect(),
        confidence: (w.confidence >= 0).then_some(w.confidence),
        estimated_monthly_cost_delta: w.cost_delta,
        risk: risk_name(w.risk),
        resources: plan(&current, summary.as_ref()),
        // The run that last saw the workload read the values in force then.
        applied: applied
            .map(|c| applied_view(c, Some(w.last_seen_at)))
            .transpose()?,
    })
}

/// The API form of a recommendation; the engine's output under `analysis` when stored
/// with it.
pub fn recommendation_json(r: &RecommendationRow) -> Result<RecommendationView, ApiError> {
    Ok(RecommendationView {
        id: r.id.clone(),
        workload_id: r.workload_id.clone(),
        run_id: r.run_id.clone(),
        created_at: format_ms(r.created_at),
        policy_version: r.policy_version.clone(),
        settings_identity: r.settings_identity.clone(),
        estimated_monthly_cost_delta: r.cost_delta,
        summary: stored_json(&r.summary)?,
        analysis: if r.analysis.is_empty() {
            None
        } else {
            Some(stored_json(&r.analysis)?)
        },
    })
}

#[utoipa::path(
    get,
    path = "/v1/workloads/{id}",
    summary = "One workload, its settings in force (current) and its latest recommendation with the engine's evidence (recommendation.analysis).",
    params(
        ("id" = String, Path),
    ),
    responses(
        (status = 200, description = "The workload.", body = WorkloadDetail),
    )
)]
pub async fn get_workload(
    State(state): State<AppState>,
    access: Access,
    Path(id): Path<String>,
) -> Result<Json<WorkloadDetail>, ApiError> {
    let w = scoped_workload(&state, &access, &id, Scope::Read).await?;
    let rec = match &w.latest_rec_id {
        Some(rec) => {
            let rec = rec.clone();
            state.store.reading(move |r| r.recommendation(&rec)).await?
        }
        None => None,
    };
    let wid = w.seen.id.clone();
    let (live, approval) = state
        .store
        .reading(move |r| Ok((r.live_change(&wid)?, r.latest_approval(&wid)?)))
        .await?;
    let workload = workload_json(&w, rec.as_ref().map(|r| r.summary.as_str()), live.as_ref())?;
    Ok(Json(WorkloadDetail {
        pod_requests: pod_requests(&workload.resources),
        workload,
        current: stored_json(&w.seen.current)?,
        recommendation: rec.as_ref().map(recommendation_json).transpose()?,
        apply: match &rec {
            Some(r) => apply_view(&w, r)?,
            None => None,
        },
        approval: approval.as_ref().map(approval_json),
    }))
}

/// The recommendation history's query.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RecommendationsQuery {
    analysis: Option<bool>,
    #[serde(deserialize_with = "params::limit")]
    limit: Option<usize>,
    #[serde(deserialize_with = "params::seq")]
    next: Option<i64>,
}

#[utoipa::path(
    get,
    path = "/v1/workloads/{id}/recommendations",
    summary = "The workload's recommendation history, newest first.",
    params(
        ("id" = String, Path),
        ("analysis" = Option<bool>, Query, description = "Include the engine output of each Default False."),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 500, description = "Default 20."),
        ("next" = Option<String>, Query),
    ),
    responses(
        (status = 200, description = "A page of recommendations.", body = Page<RecommendationView>),
    )
)]
pub async fn list_recommendations(
    State(state): State<AppState>,
    access: Access,
    Path(id): Path<String>,
    Query(q): Query<RecommendationsQuery>,
) -> Result<Json<Page<RecommendationView>>, ApiError> {
    let (limit, before, analysis) = (q.limit.unwrap_or(20), q.next, q.analysis.unwrap_or(false));
    scoped_workload(&state, &access, &id, Scope::Read).await?;
    let page = state
        .store
        .reading(move |r| r.list_recommendations(&id, before, limit, analysis))
        .await?;
    let next = page.next.map(|seq| encode_cursor(&json!(seq)));
    let items = page
        .items
        .iter()
        .map(recommendation_json)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Json(Page { items, next }))
}
