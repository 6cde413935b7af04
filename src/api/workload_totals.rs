//! `GET /v1/workloads/summary`: what the workload list's filter matches, in totals
//! (counts, data quality, notices, savings, extra spend and net), for everything or
//! grouped by cluster, namespace, team or a label. The overview's counts are one call.

use axum::extract::{RawQuery, State};
use axum::Json;
use serde_json::{json, Map, Value};

use super::access::Access;
use super::error::ApiError;
use super::query::{self, bad};
use super::workload_query::{finish, take_filter, Paging};
use super::AppState;
use crate::runs::summary::HOURS_PER_MONTH;
use crate::store::{GroupBy, WorkloadFilter, WorkloadTotals, COUNTED_NOTICES};

fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

/// One group's totals as the API shows them.
pub fn totals_json(t: &WorkloadTotals) -> Value {
    let mut v = Map::new();
    for (name, value) in &t.key {
        v.insert(name.to_string(), json!(value));
    }
    let notices: Map<String, Value> = COUNTED_NOTICES
        .iter()
        .zip(t.notices)
        .map(|(n, c)| (n.to_string(), json!(c)))
        .collect();
    let body = json!({
        "workloads": t.workloads,
        "withChanges": t.with_changes,
        "dataQuality": {
            "available": t.available,
            "partial": t.partial,
            "unavailable": t.unavailable,
            "none": t.without_recommendation,
        },
        "stale": t.stale,
        "riskReductions": t.risky,
        "notices": notices,
        "monthlySavings": round2(t.savings),
        "monthlyExtraSpend": round2(t.extra_spend),
        "monthlyNet": round2(t.extra_spend - t.savings),
        "workloadsWithoutEstimate": t.without_estimate,
    });
    if let Value::Object(b) = body {
        v.extend(b);
    }
    Value::Object(v)
}

pub async fn get_summary(
    State(state): State<AppState>,
    access: Access,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>, ApiError> {
    let mut f = WorkloadFilter::default();
    let (mut by, mut label) = (String::from("none"), None::<String>);
    for (key, value) in query::pairs(raw.as_deref())? {
        match key.as_str() {
            "by" => by = value,
            "label" => label = Some(value),
            _ => {
                if !take_filter(&mut f, &key, value)? {
                    return Err(bad(&key, "unknown parameter"));
                }
            }
        }
    }
    finish(&mut f, Paging::default(), &access)?;
    let group = match (by.as_str(), label) {
        ("none", None) => GroupBy::Nothing,
        ("cluster", None) => GroupBy::Cluster,
        ("namespace", None) => GroupBy::Namespace,
        ("team", None) => GroupBy::Team(
            state
                .store
                .list_teams()
                .await?
                .into_iter()
                .map(|t| (t.name, t.namespaces))
                .collect(),
        ),
        ("label", Some(key)) if !key.is_empty() && key.len() <= 317 => GroupBy::Label(key),
        ("label", _) => return Err(bad("label", "names the label to group by (by=label)")),
        (_, Some(_)) => return Err(bad("label", "goes with by=label only")),
        _ => return Err(bad("by", "must be none, cluster, namespace, team or label")),
    };
    let pricing = state.runs.pricing().await.map_err(ApiError::internal)?;
    let total = state
        .store
        .workload_totals(f.clone(), GroupBy::Nothing)
        .await?;
    let groups = match group {
        GroupBy::Nothing => Vec::new(),
        g => state.store.workload_totals(f, g).await?,
    };
    let empty = WorkloadTotals::default();
    Ok(Json(json!({
        "by": by,
        "currency": pricing.currency,
        "basis": "requests",
        "hoursPerMonth": HOURS_PER_MONTH,
        "total": totals_json(total.first().unwrap_or(&empty)),
        "groups": groups.iter().map(totals_json).collect::<Vec<_>>(),
    })))
}
