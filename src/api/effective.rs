//! The effective policy of a workload over HTTP (`GET /v1/workloads/{id}/policy`) and
//! what the other workload-scoped handlers (override, approve, history) share: finding
//! the workload inside the caller's scope and the audit actor naming only the teams
//! whose role covers the workload.

use axum::extract::{Path, State};
use axum::Json;
use std::collections::BTreeMap;

use serde::Serialize;
use utoipa::ToSchema;

use super::access::{Access, Via};
use super::error::ApiError;
use super::state::AppState;
use crate::events::config_change::{ActorTeam, AuditContext};
use crate::fleet::workloads::{self, MatchedPolicy};
use crate::policy::{EffectivePolicy, Origin, OverrideSpec};
use crate::store::WorkloadRow;

/// Whether the caller reads or changes the workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Read,
    Write,
}

/// The workload `id` when the caller's role covers its namespace. A workload the caller
/// cannot read answers exactly as a missing one (404, same body): ids are stable
/// hashes, so anything else would let a team probe other teams' workloads. One the
/// caller reads but may not change is 403.
pub async fn scoped_workload(
    state: &AppState,
    access: &Access,
    id: &str,
    scope: Scope,
) -> Result<WorkloadRow, ApiError> {
    let missing = || ApiError::not_found(format!("no workload {id}"));
    let wanted = id.to_string();
    let w = state
        .store
        .reading(move |r| r.workload(&wanted))
        .await?
        .ok_or_else(missing)?;
    let (cluster, ns) = (&w.seen.cluster, &w.seen.namespace);
    // Fleet roles read everything; team roles their namespaces.
    let readable = !matches!(access.via, Via::Teams(_)) || access.may_read(cluster, ns);
    if !readable {
        return Err(missing());
    }
    if scope == Scope::Write && !access.may_write(cluster, ns) {
        return Err(ApiError::forbidden(format!(
            "you may read but not change the workloads of namespace {ns} of cluster {cluster}"
        )));
    }
    Ok(w)
}

/// The audit context of a change to workload `w`: `actor.teams` lists only the teams
/// whose role covers the workload's namespace (the scope that allowed the change).
pub fn workload_context(
    access: &Access,
    w: &WorkloadRow,
    reason: Option<String>,
) -> Result<AuditContext, ApiError> {
    let mut ctx = super::config_audit::context(access, reason)?;
    if let Via::Teams(grants) = &access.via {
        ctx.actor.teams = grants
            .iter()
            .filter(|g| g.covers(&w.seen.cluster, &w.seen.namespace))
            .map(|g| ActorTeam {
                id: g.team_id.to_string(),
                name: g.team_name.clone(),
            })
            .collect();
    }
    Ok(ctx)
}

/// `GET /v1/workloads/{id}/policy`: the policy in force and where each field came from.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadPolicy {
    pub workload_id: String,
    /// `v1:` + SHA-256 of the effective policy.
    pub identity: String,
    /// The latest recommendation was made under another effective policy: the agent
    /// skips it as RecommendationStale and it cannot be approved.
    pub recommendation_stale: bool,
    pub effective: EffectivePolicy,
    /// Field path → where its value came from.
    pub origins: BTreeMap<String, Origin>,
    /// The matching policies in precedence order.
    pub policies: Vec<MatchedPolicy>,
    /// The workload's override, `null` without one.
    pub r#override: Option<OverrideNow>,
}

/// A workload's override as its effective policy shows it.
#[derive(Debug, Serialize, ToSchema)]
pub struct OverrideNow {
    pub spec: OverrideSpec,
    /// False once it expired.
    pub active: bool,
}

/// `GET /v1/workloads/{id}/policy`.
#[utoipa::path(
    get,
    path = "/v1/workloads/{id}/policy",
    summary = "The workload's effective policy, its identity (v1:sha256), the matching policies in precedence order, the override and, per field path, its origin (default, policy id/name/version, or override). docs/contracts/policy.md.",
    params(
        ("id" = String, Path),
    ),
    responses(
        (status = 200, description = "The effective policy, its origins, the matching policies and the override.", body = WorkloadPolicy),
    )
)]
pub async fn get_policy(
    State(state): State<AppState>,
    access: Access,
    Path(id): Path<String>,
) -> Result<Json<WorkloadPolicy>, ApiError> {
    let w = scoped_workload(&state, &access, &id, Scope::Read).await?;
    let now = state.now();
    let (r, set) = workloads::resolve(&state.runs, now, &w).await?;
    let policies = MatchedPolicy::all_of(&r, &set);
    let (workload_id, latest_id) = (w.seen.id.clone(), w.latest_rec_id.clone());
    let (ov, latest) = state
        .store
        .reading(move |db| {
            let latest = match &latest_id {
                Some(id) => db.recommendation(id)?,
                None => None,
            };
            Ok((db.workload_override(&workload_id)?, latest))
        })
        .await?;
    let override_now = ov.map(|o| OverrideNow {
        active: o.expires_at.is_none_or(|e| e > now),
        spec: o.spec,
    });
    // The agent feed's rule, served so no client recomputes it: the latest
    // recommendation was made under another effective policy than the one in force.
    let stale = latest.is_some_and(|rec| rec.settings_identity != r.identity);
    Ok(Json(WorkloadPolicy {
        workload_id: w.seen.id,
        identity: r.identity,
        recommendation_stale: stale,
        effective: r.effective,
        origins: r.origins,
        policies,
        r#override: override_now,
    }))
}
