//! What a cluster's agent talks to besides events and recommendations:
//! `GET /v1/clusters/{cluster}/config` (everything it needs to decide: pause flags and
//! scope, the freeze, agent settings, server time, per-workload effective mode and
//! policy identity) and `POST /v1/clusters/{cluster}/heartbeat` (versions and
//! capabilities; feeds readiness).

use axum::body::Body;
use axum::extract::{Path, State};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Map, Value};

use super::body::read_json;
use super::clusters::freeze_view;
use super::error::ApiError;
use super::AppState;
use crate::fleet::{agent_settings::AgentSettings, effective, pause, readiness};
use crate::store::{self, readiness::HeartbeatRecord};
use crate::timestamp::format_ms as rfc3339_ms;

/// `GET /v1/clusters/{cluster}/config`.
pub async fn config(
    State(state): State<AppState>,
    Path(cluster): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let now = state.now();
    let name = cluster.clone();
    let (c, applying) = state
        .store
        .read(move |conn| {
            let c = store::active_cluster(conn, &name)?;
            let p = pause::applying(conn, &name, now)?;
            Ok((c, p))
        })
        .await?;
    let frozen = c
        .freeze
        .as_ref()
        .filter(|f| f.until.is_none_or(|u| u > now));
    let workloads = effective::effective_for_cluster(&state.store, &state.runs, &cluster).await?;
    let items: Vec<Value> = workloads
        .iter()
        .map(|w| {
            json!({
                "workloadId": w.workload.seen.id,
                "namespace": w.workload.seen.namespace,
                "kind": w.workload.seen.kind,
                "name": w.workload.seen.name,
                "mode": w.effective.mode,
                "policyIdentity": w.identity,
                "policy": w.effective,
            })
        })
        .collect();
    Ok(Json(json!({
        "cluster": cluster,
        "serverTime": rfc3339_ms(now),
        "flags": {
            "paused": applying.is_some(),
            "pauseScope": applying.as_ref().map(|p| pause::scope_kind(&p.scope)),
            "frozen": frozen.is_some(),
        },
        "pause": applying.as_ref().map(pause::view),
        "freeze": freeze_view(frozen),
        "agent": AgentSettings::default(),
        "workloads": items,
    })))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct HeartbeatBody {
    agent_version: String,
    kubernetes_version: String,
    #[serde(default)]
    capabilities: Map<String, Value>,
}

fn short_text(field: &str, v: &str) -> Result<(), ApiError> {
    if v.trim().is_empty() || v.len() > 100 {
        return Err(ApiError::invalid_field(
            field,
            "must be 1 to 100 characters",
        ));
    }
    Ok(())
}

/// `POST /v1/clusters/{cluster}/heartbeat`: stores the heartbeat, re-evaluates
/// readiness and answers with it.
pub async fn heartbeat(
    State(state): State<AppState>,
    Path(cluster): Path<String>,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let b: HeartbeatBody = read_json(body).await?;
    short_text("agentVersion", &b.agent_version)?;
    short_text("kubernetesVersion", &b.kubernetes_version)?;
    if b.capabilities.len() > 64 || Value::Object(b.capabilities.clone()).to_string().len() > 8192 {
        return Err(ApiError::invalid_field(
            "capabilities",
            "at most 64 entries and 8 KiB",
        ));
    }
    let now = state.now();
    let hb = HeartbeatRecord {
        received_at: now,
        agent_version: b.agent_version,
        kubernetes_version: b.kubernetes_version,
        capabilities: Value::Object(b.capabilities),
    };
    let name = cluster.clone();
    let first_check = state
        .store
        .write(move |c| {
            let cl = store::active_cluster(c, &name)?;
            store::readiness::put_heartbeat(c, cl.id, &hb)?;
            Ok(store::readiness::inputs(c, cl.id, &cl.name)?
                .datasource
                .is_none())
        })
        .await?;
    if first_check {
        // The ticker checks the datasource at once (kept off the request path).
        state.fleet.wake();
    }
    let (r, _) = readiness::evaluate(&state.store, now, &cluster).await?;
    Ok(Json(readiness::view(&cluster, &r)))
}
