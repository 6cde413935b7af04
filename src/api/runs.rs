//! Runs over HTTP: `GET /v1/runs` (filters, cursor pagination), `GET /v1/runs/{id}`
//! (with live progress while it runs) and `POST /v1/clusters/{cluster}/runs` (manual
//! trigger; 409 while the cluster has a run in progress).

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use utoipa::ToSchema;

use super::access::Access;
use super::error::ApiError;
use super::lists::Page;
use super::query::{encode_cursor, params, Query};
use super::state::AppState;

use crate::runs::{RunError, RunStatus, Trigger};
use crate::store::{RunFilter, RunRecord};
use crate::timestamp::format_ms;

/// Run states and triggers, as documented.
#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum StatusParam {
    Running,
    Succeeded,
    Partial,
    Failed,
}

#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum TriggerParam {
    Scheduled,
    Manual,
}

/// `GET /v1/runs`' query.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RunsQuery {
    cluster: Option<String>,
    status: Option<StatusParam>,
    trigger: Option<TriggerParam>,
    #[serde(deserialize_with = "params::limit")]
    limit: Option<usize>,
    #[serde(deserialize_with = "params::seq")]
    next: Option<i64>,
}

impl RunsQuery {
    fn filter(self) -> RunFilter {
        let status = self.status.map(|s| match s {
            StatusParam::Running => RunStatus::Running,
            StatusParam::Succeeded => RunStatus::Succeeded,
            StatusParam::Partial => RunStatus::Partial,
            StatusParam::Failed => RunStatus::Failed,
        });
        let trigger = self.trigger.map(|t| match t {
            TriggerParam::Scheduled => Trigger::Scheduled,
            TriggerParam::Manual => Trigger::Manual,
        });
        RunFilter {
            cluster: self.cluster,
            status,
            trigger,
            limit: self.limit.unwrap_or(50),
            before_seq: self.next,
        }
    }
}

#[utoipa::path(
    get,
    path = "/v1/runs",
    summary = "Recommendation runs, newest first.",
    params(
        ("cluster" = Option<String>, Query),
        ("status" = inline(Option<StatusParam>), Query),
        ("trigger" = inline(Option<TriggerParam>), Query),
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 500, description = "Default 50."),
        ("next" = Option<String>, Query),
    ),
    responses(
        (status = 200, description = "A page of runs.", body = Page<RunView>),
    )
)]
pub async fn list_runs(
    State(state): State<AppState>,
    access: Access,
    Query(q): Query<RunsQuery>,
) -> Result<Json<Page<RunView>>, ApiError> {
    let f = q.filter();
    let page = state.store.reading(move |r| r.list_runs(&f)).await?;
    let items = page
        .items
        .iter()
        .map(|r| run_json(&state, &access, r))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Json(Page {
        items,
        next: page.next.map(|seq| encode_cursor(&json!(seq))),
    }))
}

#[utoipa::path(
    get,
    path = "/v1/runs/{id}",
    summary = "One run, with live progress while it runs.",
    params(
        ("id" = String, Path),
    ),
    responses(
        (status = 200, description = "The run.", body = RunView),
    )
)]
pub async fn get_run(
    State(state): State<AppState>,
    access: Access,
    Path(id): Path<String>,
) -> Result<Json<RunView>, ApiError> {
    let wanted = id.clone();
    let run = state
        .store
        .reading(move |r| r.run(&wanted))
        .await?
        .ok_or_else(|| ApiError::not_found(format!("no run {id}")))?;
    Ok(Json(run_json(&state, &access, &run)?))
}

#[utoipa::path(
    post,
    path = "/v1/clusters/{cluster}/runs",
    summary = "Start a recommendation run of the cluster now.",
    description = "Answers at once with the running run; poll GET /v1/runs/{id}. 409 run_in_progress (details.runId) while the cluster has a run.",
    params(
        ("cluster" = String, Path),
    ),
    responses(
        (status = 202, description = "Started.", body = RunView),
        (status = 409, description = "An error.", body = super::error::ErrorBody),
    )
)]
pub async fn post_run(
    State(state): State<AppState>,
    access: Access,
    Path(cluster): Path<String>,
) -> Result<(StatusCode, Json<RunView>), ApiError> {
    match state.runs.start(&cluster, Trigger::Manual).await {
        Ok((run, _task)) => Ok((StatusCode::ACCEPTED, Json(run_json(&state, &access, &run)?))),
        Err(e) => Err(run_error(e)),
    }
}

/// Maps a refusal to start a run onto the API's errors.
pub fn run_error(e: RunError) -> ApiError {
    match e {
        RunError::AlreadyRunning { ref run_id, .. } => {
            let details = json!({ "runId": run_id });
            ApiError::new(StatusCode::CONFLICT, "run_in_progress", e.to_string())
                .with_details(details)
        }
        RunError::UnknownCluster(_) => ApiError::not_found(e.to_string()),
        RunError::Busy(busy) => {
            use crate::runs::backtest_queue::{
                BACKTEST_RETRY_AFTER, MAX_BACKTEST_WAIT, MAX_WAITING_BACKTESTS,
            };
            let retry = BACKTEST_RETRY_AFTER.as_secs();
            let details = json!({
                "reason": busy.reason(),
                "maxWaiting": MAX_WAITING_BACKTESTS,
                "maxWaitSeconds": MAX_BACKTEST_WAIT.as_secs(),
                "retryAfterSeconds": retry,
            });
            ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "backtests_busy",
                busy.to_string(),
            )
            .with_details(details)
            .with_header(axum::http::header::RETRY_AFTER, retry.to_string())
        }
        other => ApiError::internal(other),
    }
}

/// A run as the API shows it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct RunView {
    pub id: String,
    pub cluster: String,
    /// `scheduled` or `manual`.
    pub trigger: String,
    /// `running`, `succeeded`, `partial` or `failed`.
    pub status: String,
    /// Live while the run runs.
    pub phase: String,
    pub started_at: String,
    pub finished_at: Option<String>,
    /// The usage window the run analysed.
    pub window: RunWindow,
    pub settings_identity: String,
    pub workloads: RunWorkloads,
    /// Recommendations made.
    pub recommendations: i64,
    /// Milliseconds spent per phase.
    pub phase_ms: Value,
    /// What collection read (series, samples, queries, …).
    pub collect: Value,
    /// Per-workload or per-phase errors.
    pub errors: Value,
}

/// The usage window of a run.
#[derive(Debug, Serialize, ToSchema)]
pub struct RunWindow {
    pub start: String,
    pub end: String,
}

/// Workload counts of a run (total and done are live while it runs).
#[derive(Debug, Serialize, ToSchema)]
pub struct RunWorkloads {
    pub total: i64,
    pub done: i64,
    pub failed: i64,
    pub stale: i64,
}

/// The API form of a run, as `access` may read it (a datasource's words only for
/// editors); a running run carries its live progress.
pub fn run_json(state: &AppState, access: &Access, r: &RunRecord) -> Result<RunView, ApiError> {
    let mut v = RunView {
        id: r.id.clone(),
        cluster: r.cluster.clone(),
        trigger: r.trigger.to_string(),
        status: r.status.to_string(),
        phase: r.phase.to_string(),
        started_at: format_ms(r.started_at),
        finished_at: r.finished_at.map(format_ms),
        window: RunWindow {
            start: format_ms(r.window_start),
            end: format_ms(r.window_end),
        },
        settings_identity: r.settings_identity.clone(),
        workloads: RunWorkloads {
            total: r.workloads_total,
            done: r.workloads_done,
            failed: r.workloads_failed,
            stale: r.workloads_stale,
        },
        recommendations: r.recommendations,
        phase_ms: tree(&r.phase_ms)?,
        // `{}` until the plan is in.
        collect: match &r.collect_stats {
            Some(c) => tree(c)?,
            None => json!({}),
        },
        errors: tree(
            &r.errors
                .shown_as(|m| access.datasource_text(m).into_owned()),
        )?,
    };
    if r.status == RunStatus::Running {
        if let Some(p) = state.runs.active().of_run(&r.id) {
            v.phase = p.phase.to_string();
            v.workloads.total = p.workloads_total;
            v.workloads.done = p.workloads_done;
        }
    }
    Ok(v)
}

/// A typed column of the record as the JSON the API has always served for it.
fn tree<T: Serialize>(value: &T) -> Result<Value, ApiError> {
    serde_json::to_value(value).map_err(ApiError::internal)
}
