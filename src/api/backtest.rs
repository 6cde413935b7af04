//! `GET /v1/policies/presets` (named starting points for a policy's `analysis`, and
//! which one a new hub uses) and `POST /v1/policies/backtest` (the recorded usage of
//! the selected workloads replayed against what a policy or preset would recommend,
//! in and out of sample). docs/contracts/policy.md, "Presets" and "Backtest".

use axum::body::Body;
use axum::extract::State;
use axum::Json;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::access::Access;
use super::body::{read_json, typed_at};
use super::error::ApiError;
use super::lists::Items;
use super::runs::run_error;
use super::state::AppState;
use crate::analysis::{self, Policy};
use crate::policy::presets::{self, Preset};
use crate::policy::{PolicySpec, Selector};
use crate::runs::backtest::{BacktestRequest, Report, DEFAULT_LIMIT, MAX_LIMIT};

/// `GET /v1/policies/presets`.
#[utoipa::path(
    get,
    path = "/v1/policies/presets",
    summary = "The analysis presets (cost-saving, balanced, conservative, engine-default), each with who it is for and the engine policy it stands for; `fleetDefault` marks the one a new hub analyzes with.",
    responses(
        (status = 200, description = "The presets.", body = Items<Preset>),
    )
)]
pub async fn list_presets() -> Json<Items<Preset>> {
    Json(Items::new(presets::all()))
}

/// What `POST /v1/policies/backtest` reads, under the body rules of every route
/// (`api::body`). At most one of `preset`, `analysis` and `policy.analysis`; none
/// backtests the hub's default analysis.
#[derive(Debug, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BacktestBody {
    /// A preset name (`GET /v1/policies/presets`).
    #[serde(default)]
    pub preset: Option<String>,
    /// An engine analysis policy (docs/contracts/analysis.md).
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub analysis: Option<Policy>,
    /// A policy document (the one being edited): its `selector` and `analysis` are
    /// used; the rest does not change recommendations.
    #[serde(default)]
    #[schema(value_type = Option<Object>)]
    pub policy: Option<PolicySpec>,
    /// Which workloads (default: the policy's selector, else every workload).
    #[serde(default)]
    pub selector: Option<Selector>,
    /// Fraction of the window the out-of-sample recommendation is made on, 0.1–0.9
    /// (default 0.5).
    #[serde(default)]
    pub split: Option<f64>,
    /// At most this many workloads, 1–5000 (default 500).
    #[serde(default)]
    pub limit: Option<usize>,
}

fn normalized(path: &str, p: &Policy) -> Result<Policy, ApiError> {
    analysis::normalize_policy(p).map_err(|e| ApiError::invalid_field(path, e))
}

/// The backtest `body` asks for; `default` is the hub's default analysis.
pub fn request_of(body: BacktestBody, default: &Policy) -> Result<BacktestRequest, ApiError> {
    let policy = body.policy;
    let from_policy = policy.as_ref().and_then(|p| p.analysis.clone());
    let given = [
        body.preset.is_some(),
        body.analysis.is_some(),
        from_policy.is_some(),
    ];
    if given.iter().filter(|g| **g).count() > 1 {
        return Err(ApiError::invalid_field(
            "preset",
            "give one of preset, analysis and policy.analysis",
        ));
    }
    let analysis = match (body.preset, body.analysis, from_policy) {
        (Some(name), _, _) => {
            presets::get(&name)
                .ok_or_else(|| {
                    ApiError::invalid_field(
                        "preset",
                        format!(
                            "unknown preset {name:?}; one of {}",
                            presets::NAMES.join(", ")
                        ),
                    )
                })?
                .analysis
        }
        (_, Some(p), _) => normalized("analysis", &p)?,
        (_, _, Some(v)) => normalized("policy.analysis", &typed_at(v, "policy.analysis")?)?,
        _ => default.clone(),
    };
    let selector = body
        .selector
        .or_else(|| policy.map(|p| p.selector))
        .unwrap_or_default();
    let split = body.split.unwrap_or(0.5);
    if !(0.1..=0.9).contains(&split) {
        return Err(ApiError::invalid_field("split", "must be from 0.1 to 0.9"));
    }
    let limit = body.limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(ApiError::invalid_field(
            "limit",
            format!("must be from 1 to {MAX_LIMIT}"),
        ));
    }
    Ok(BacktestRequest {
        analysis,
        selector,
        split,
        limit,
    })
}

/// `POST /v1/policies/backtest`.
#[utoipa::path(
    post,
    path = "/v1/policies/backtest",
    summary = "Backtest a policy, preset or analysis on the recorded usage of the selected workloads: per workload and in total, the monthly cost change, the share of CPU samples above the recommended request, would-be OOM kills and the share throttled under the recommended CPU limit, in sample (recommended on the whole run window) and out of sample (recommended on the window up to `split`, scored after it). One backtest runs at a time; 4 may wait behind it, each for at most 60 s (429 `backtests_busy` past either). An empty body backtests the default analysis in force on every workload.",
    request_body = Option<BacktestBody>,
    responses(
        (status = 200, description = "The backtest.", body = Report),
        (status = 400, description = "An error.", body = super::error::ErrorBody),
        (status = 429, description = "Busy: a backtest runs and as many as may wait behind it do (`details.reason` `queue_full`), or none finished in time for this one (`waited_too_long`); try again after `Retry-After` seconds.", body = super::error::ErrorBody),
    )
)]
pub async fn post_backtest(
    State(state): State<AppState>,
    access: Access,
    body: Body,
) -> Result<Json<Report>, ApiError> {
    let body: BacktestBody = read_json(body).await?;
    let settings = state.runs.recommender().await.map_err(run_error)?;
    let req = request_of(body, &settings.policy)?;
    let mut report = state
        .runs
        .backtest(&req, state.now())
        .await
        .map_err(run_error)?;
    // A cluster's datasource failure: its words for editors, its category for viewers.
    for e in &mut report.errors {
        e.message = access.datasource_text(&e.message).into_owned();
    }
    Ok(Json(report))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::api::body::parse_json;
    use serde_json::Value;

    fn body(v: Value) -> BacktestBody {
        parse_json(v.to_string().as_bytes()).expect("body")
    }

    #[test]
    fn a_request_takes_one_analysis_the_policys_selector_and_bounded_options() {
        let default = analysis::default_policy();
        let r = request_of(body(serde_json::json!({})), &default).expect("empty");
        assert_eq!(
            (r.analysis, r.split, r.limit),
            (default.clone(), 0.5, DEFAULT_LIMIT)
        );
        let r = request_of(
            body(serde_json::json!({ "preset": "conservative" })),
            &default,
        )
        .expect("preset");
        assert_eq!(
            r.analysis,
            presets::get("conservative").expect("preset").analysis
        );
        let doc = serde_json::json!({ "policy": {
            "name": "draft", "selector": { "namespaces": ["shop"] },
            "analysis": { "cpu": { "headroomCoefficient": 1.1 } } } });
        let r = request_of(body(doc), &default).expect("policy");
        assert_eq!(r.selector.namespaces, ["shop"]);
        assert_eq!(r.analysis.cpu.headroom_coefficient, 1.1);
        let bad = [
            (serde_json::json!({ "preset": "nope" }), "preset"),
            (
                serde_json::json!({ "preset": "balanced", "analysis": {} }),
                "preset",
            ),
            (
                serde_json::json!({ "analysis": { "cpu": { "percentile": 150 } } }),
                "analysis",
            ),
            (
                serde_json::json!({ "policy": { "selector": { "nope": 1 } } }),
                "policy.selector",
            ),
            (serde_json::json!({ "split": 0.95 }), "split"),
            (serde_json::json!({ "limit": 0 }), "limit"),
            (serde_json::json!({ "selector": null }), "selector"),
            (serde_json::json!({ "analysis": [] }), "analysis"),
            (
                serde_json::json!({ "policy": { "analysis": [{}] } }),
                "policy.analysis",
            ),
        ];
        for (v, at) in bad {
            let e = parse_json::<BacktestBody>(v.to_string().as_bytes())
                .and_then(|b| request_of(b, &default))
                .expect_err("refused");
            let field = e.details["field"].as_str().unwrap_or_default().to_string();
            assert!(field.starts_with(at), "{v}: {field} ({})", e.message);
        }
    }
}
