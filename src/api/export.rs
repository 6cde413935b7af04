//! Taking recommendations out of kerf: `GET /v1/recommendations?format=csv|json|yaml`
//! (the fleet's current recommendations, filtered like the workload list and held to
//! the caller's team scope), and the per-workload apply configuration and `kubectl`
//! command the workload page copies.

use axum::extract::State;
use axum::http::header::{CACHE_CONTROL, CONTENT_DISPOSITION, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use serde::de::{Deserializer, Error as _};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::access::Access;
use super::error::ApiError;
use super::query::{stored_json, Query};
use super::state::AppState;
use super::workload_query::{
    filter, OrderParam, SortParam, WorkloadOrder, WorkloadPaging, WorkloadQuery,
};
use crate::export::{plan, render};
use crate::store::{RecommendationRow, WorkloadRow};
use crate::wire::RecommendationSummary;
use render::Exported;

/// The most workloads one export holds.
pub const MAX_EXPORT: usize = 100_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema)]
#[schema(as = FormatParam)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Csv,
    Json,
    Yaml,
}

/// The export's own parameters; `limit` and `next` are named only to refuse them.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ExportQuery {
    format: Option<Format>,
    #[serde(rename = "limit", deserialize_with = "whole")]
    _limit: Option<()>,
    #[serde(rename = "next", deserialize_with = "whole")]
    _next: Option<()>,
}

/// An export is never paged.
fn whole<'de, D: Deserializer<'de>>(_: D) -> Result<Option<()>, D::Error> {
    Err(D::Error::custom("an export holds every matching workload"))
}

fn summary_of(text: Option<&str>) -> Result<Option<RecommendationSummary>, ApiError> {
    text.map(|t| serde_json::from_str(t).map_err(ApiError::internal))
        .transpose()
}

fn exported<'a>(
    w: &'a WorkloadRow,
    rec_id: Option<&'a str>,
    created_at: Option<i64>,
    summary: Option<&str>,
) -> Result<Exported<'a>, ApiError> {
    let current = stored_json(&w.seen.current)?;
    let summary = summary_of(summary)?;
    Ok(Exported {
        w,
        recommendation_id: rec_id,
        created_at: created_at.map(crate::timestamp::format_ms),
        containers: plan::plan(&current, summary.as_ref()),
    })
}

/// The JSON export.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExportView {
    /// RFC 3339.
    pub generated_at: String,
    pub count: usize,
    pub items: Vec<render::ExportedWorkload>,
}

/// The workload page's `apply`: the server-side apply configuration of the latest
/// recommendation and the `kubectl` command that applies it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApplyView {
    pub yaml: String,
    pub command: String,
    pub field_manager: &'static str,
}

/// The workload page's `apply` (`None` when nothing changes).
pub fn apply_view(w: &WorkloadRow, rec: &RecommendationRow) -> Result<Option<ApplyView>, ApiError> {
    let e = exported(w, Some(&rec.id), Some(rec.created_at), Some(&rec.summary))?;
    Ok(render::apply_yaml(&e).map(|yaml| ApplyView {
        command: render::apply_command(&yaml),
        yaml,
        field_manager: render::FIELD_MANAGER,
    }))
}

#[utoipa::path(
    get,
    path = "/v1/recommendations",
    summary = "The current recommendations of every workload the filter matches, to take out of kerf.",
    description = "CSV: one row per container, CPU in millicores and MiB of memory, recommended values as the agent would apply them; workload_monthly_cost_delta is the workload's, on its first row only, so the column sums to the net. JSON: each workload with its settings as Kubernetes quantities. YAML: one server-side apply configuration per workload that changes (for kubectl apply --server-side). Callers with only team roles export their teams' namespaces. At most 100,000 workloads per export.",
    params(
        ("format" = inline(Option<Format>), Query, description = "Default json."),
        WorkloadQuery,
        ("sort" = inline(Option<SortParam>), Query, description = "As the workload list. Default name."),
        ("order" = inline(Option<OrderParam>), Query),
    ),
    responses(
        (status = 200, description = "The export, as an attachment (kerf-recommendations-DATE.csv|json|yaml).", content(
            (ExportView = "application/json"),
            (String = "text/csv"),
            (String = "application/yaml"),
        )),
    )
)]
pub async fn get_recommendations(
    State(state): State<AppState>,
    access: Access,
    Query((export, q, order)): Query<(ExportQuery, WorkloadQuery, WorkloadOrder)>,
) -> Result<Response, ApiError> {
    let format = export.format.unwrap_or(Format::Json);
    let mut f = filter(q, order, WorkloadPaging::default(), &access)?;
    f.limit = MAX_EXPORT;
    let page = state
        .store
        .reading(move |r| r.list_workload_page(&f))
        .await?;
    if page.next.is_some() {
        return Err(ApiError::bad_request(
            "export_too_large",
            format!("more than {MAX_EXPORT} workloads match: narrow the filter"),
        ));
    }
    let items = page
        .items
        .iter()
        .map(|l| {
            exported(
                &l.row,
                l.row.latest_rec_id.as_deref(),
                l.made_at,
                l.summary.as_deref(),
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    let stamp = crate::timestamp::format_ms(state.now());
    let (body, content_type, ext) = match format {
        Format::Csv => (render::csv(&items), "text/csv; charset=utf-8", "csv"),
        Format::Yaml => (render::yaml(&items), "application/yaml", "yaml"),
        Format::Json => {
            let v = ExportView {
                generated_at: stamp.clone(),
                count: items.len(),
                items: render::json_items(&items),
            };
            let text = serde_json::to_string(&v).map_err(ApiError::internal)?;
            (text, "application/json", "json")
        }
    };
    let file = format!("kerf-recommendations-{}.{ext}", &stamp[..10]);
    Ok((
        [
            (CONTENT_TYPE, content_type.to_string()),
            (
                CONTENT_DISPOSITION,
                format!("attachment; filename=\"{file}\""),
            ),
            (CACHE_CONTROL, "no-store".to_string()),
        ],
        body,
    )
        .into_response())
}
