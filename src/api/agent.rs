//! What a cluster's agent talks to besides events and recommendations:
//! `GET /v1/clusters/{cluster}/config` (the config feed, `wire::ConfigFeed`) and
//! `POST /v1/clusters/{cluster}/heartbeat` (versions and capabilities; feeds readiness).

use axum::body::Body;
use axum::extract::{Path, State};
use axum::Json;
use serde_json::Value;

use super::body::read_json;
use super::error::ApiError;
use super::AppState;
use crate::fleet::{feed, readiness};
use crate::store::{self, readiness::HeartbeatRecord};
use crate::wire::{ConfigFeed, Heartbeat};

/// `GET /v1/clusters/{cluster}/config`.
pub async fn config(
    State(state): State<AppState>,
    Path(cluster): Path<String>,
) -> Result<Json<ConfigFeed>, ApiError> {
    let feed = feed::config(&state.store, &state.runs, state.now(), &cluster).await?;
    Ok(Json(feed))
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
) -> Result<Json<crate::wire::Readiness>, ApiError> {
    let b: Heartbeat = read_json(body).await?;
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
