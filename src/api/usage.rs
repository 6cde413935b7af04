//! `GET /v1/workloads/{id}/usage?resource=cpu|memory&from&to[&container]`: chart series
//! read from the cluster's datasource, normalized by the engine's `normalize_samples`
//! (counter resets, rates in millicores) and then downsampled for display only: the
//! maximum of every series of a container per bucket, at most 500 points. The
//! recommendation itself never sees downsampled data.

use axum::extract::{Path, State};
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use super::error::ApiError;
use super::query::{bad, params, Query};
use super::state::AppState;

use crate::analysis::{normalize_samples, Sample, Series};
use crate::datasource::{Source, UsageResource, Window};
use crate::timestamp::format_ms;

/// The resources, as documented.
#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ResourceParam {
    Cpu,
    Memory,
}

/// The chart's query (`resource` is required; the handler says so).
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct UsageQuery {
    resource: Option<ResourceParam>,
    #[serde(deserialize_with = "params::time_ms")]
    from: Option<i64>,
    #[serde(deserialize_with = "params::time_ms")]
    to: Option<i64>,
    container: Option<String>,
}

/// `GET /v1/workloads/{id}/usage`: chart series per container.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub workload_id: String,
    /// `cpu` or `memory`.
    pub resource: &'static str,
    /// `millicores` or `bytes`.
    pub unit: &'static str,
    pub from: String,
    pub to: String,
    pub containers: Vec<ContainerUsage>,
}

/// One container's chart.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContainerUsage {
    pub name: String,
    /// Series read (pods over the window).
    pub series_count: usize,
    /// The maximum of every series per bucket, oldest first.
    pub points: Vec<UsagePoint>,
}

/// One bucket: its start and maximum.
#[derive(Debug, Serialize, ToSchema)]
pub struct UsagePoint {
    pub time: String,
    pub value: f64,
}

/// Most points a chart series carries.
pub const MAX_POINTS: usize = 500;
const MAX_SPAN_MS: i64 = 90 * 86_400_000;

#[utoipa::path(
    get,
    path = "/v1/workloads/{id}/usage",
    summary = "Usage chart series per container, normalized by the engine and downsampled (max per bucket, ≤ 500 points) for display only.",
    params(
        ("id" = String, Path),
        ("resource" = inline(ResourceParam), Query),
        ("from" = Option<String>, Query, format = DateTime, description = "Default: to − lookback"),
        ("to" = Option<String>, Query, format = DateTime, description = "Default: now"),
        ("container" = Option<String>, Query),
    ),
    responses(
        (status = 200, description = "The chart series.", body = Usage),
        (status = 409, description = "An error.", body = super::error::ErrorBody),
        (status = 502, description = "An error.", body = super::error::ErrorBody),
    )
)]
pub async fn get_usage(
    State(state): State<AppState>,
    access: super::access::Access,
    Path(id): Path<String>,
    Query(q): Query<UsageQuery>,
) -> Result<Json<Usage>, ApiError> {
    let resource = match q.resource {
        Some(ResourceParam::Cpu) => UsageResource::Cpu,
        Some(ResourceParam::Memory) => UsageResource::Memory,
        None => return Err(bad("resource", "is required (cpu or memory)")),
    };
    let (from, to, container) = (q.from, q.to, q.container);
    let w = super::effective::scoped_workload(&state, &access, &id, super::effective::Scope::Read)
        .await?;
    let settings = state.runs.recommender().await.map_err(ApiError::internal)?;
    let to = to.unwrap_or_else(|| state.now());
    let from = from.unwrap_or(to - settings.lookback_seconds * 1000);
    if from >= to || to - from > MAX_SPAN_MS {
        return Err(bad("from", "must be before `to`, at most 90 days earlier"));
    }
    let current: Value = serde_json::from_str(&w.seen.current).map_err(ApiError::internal)?;
    let mut names: Vec<String> = current
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|c| c["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    if let Some(c) = container {
        if !names.contains(&c) {
            return Err(bad("container", "is not a container of this workload"));
        }
        names = vec![c];
    }
    let (source, scope) = state.runs.source_for(&w.seen.cluster).await.map_err(|e| {
        ApiError::new(
            axum::http::StatusCode::CONFLICT,
            "no_datasource",
            e.to_string(),
        )
    })?;
    let window = Window {
        start_ms: from,
        end_ms: to,
        step_seconds: settings.step_seconds,
    };
    let s = &w.seen;
    let workload = crate::workload::WorkloadKey::new(&s.namespace, s.kind.clone(), &s.name);
    let mut containers = Vec::with_capacity(names.len());
    for name in names {
        let series = source
            .usage(&scope, &workload, &name, resource, window)
            .await
            .map_err(|e| upstream(&access, &e))?;
        let points = chart(&series, from, to).map_err(|e| upstream(&access, &e))?;
        containers.push(ContainerUsage {
            name,
            series_count: series.len(),
            points: points
                .iter()
                .map(|s| UsagePoint {
                    time: format_ms(s.timestamp),
                    value: s.value,
                })
                .collect(),
        });
    }
    let (resource, unit) = match resource {
        UsageResource::Cpu => ("cpu", "millicores"),
        UsageResource::Memory => ("memory", "bytes"),
    };
    Ok(Json(Usage {
        workload_id: w.seen.id,
        resource,
        unit,
        from: format_ms(from),
        to: format_ms(to),
        containers,
    }))
}

/// The 502 of a chart its datasource could not draw: the datasource's words for
/// editors, their category for everyone else.
fn upstream(access: &super::access::Access, e: &impl std::fmt::Display) -> ApiError {
    let text = e.to_string();
    let shown = access.datasource_text(&text).into_owned();
    ApiError::new(axum::http::StatusCode::BAD_GATEWAY, "datasource", shown)
}

/// Normalizes every series over [from, to] and keeps the maximum per bucket, at most
/// [`MAX_POINTS`] buckets, each stamped with its start.
pub fn chart(series: &[Series], from: i64, to: i64) -> Result<Vec<Sample>, crate::analysis::Error> {
    let width = ((to - from) / MAX_POINTS as i64).max(1) + 1;
    let mut buckets: Vec<Option<f64>> = vec![None; MAX_POINTS + 1];
    for s in series {
        for sample in normalize_samples(s, from, to)? {
            let i = ((sample.timestamp - from) / width) as usize;
            if let Some(slot) = buckets.get_mut(i) {
                *slot = Some(slot.map_or(sample.value, |v: f64| v.max(sample.value)));
            }
        }
    }
    Ok(buckets
        .into_iter()
        .enumerate()
        .filter_map(|(i, v)| {
            v.map(|value| Sample {
                timestamp: from + i as i64 * width,
                value,
            })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::SampleKind;
    use serde_json::json;

    fn series(id: &str, kind: SampleKind, samples: &[(i64, f64)]) -> Series {
        serde_json::from_value(json!({
            "id": id, "kind": match kind { SampleKind::Gauge => "gauge", SampleKind::CpuCounterSeconds => "cpu-counter-seconds" },
            "samples": samples.iter().map(|(t, v)| json!({"timestamp": t, "value": v})).collect::<Vec<_>>(),
        }))
        .unwrap()
    }

    #[test]
    fn a_week_at_one_minute_becomes_at_most_500_points_keeping_the_peak() {
        let from = 1_000_000;
        let samples: Vec<(i64, f64)> = (0..10_080)
            .map(|i| (from + i * 60_000, if i == 5_000 { 900.0 } else { 100.0 }))
            .collect();
        let to = from + 10_080 * 60_000;
        let pts = chart(&[series("a", SampleKind::Gauge, &samples)], from, to).unwrap();
        assert!(pts.len() <= MAX_POINTS && pts.len() > 400, "{}", pts.len());
        assert_eq!(pts.iter().map(|p| p.value).fold(0.0, f64::max), 900.0);
    }

    #[test]
    fn counters_are_rates_and_resets_do_not_go_negative() {
        let s = series(
            "c",
            SampleKind::CpuCounterSeconds,
            &[(60_000, 10.0), (120_000, 40.0), (180_000, 5.0)],
        );
        let pts = chart(&[s], 0, 200_000).unwrap();
        let values: Vec<f64> = pts.iter().map(|p| p.value).collect();
        assert_eq!(values, vec![500.0, 5000.0 / 60.0]);
    }
}
