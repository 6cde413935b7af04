//! `POST /v1/workloads/{id}/approve` with `{recommendationId, reason}`: an operator
//! approves one recommendation once, for a workload whose effective mode is `audit` (for
//! at least one resource). Only the workload's latest recommendation made under its
//! current effective policy can be approved; one approval per recommendation, ever. The
//! agent sees it in its recommendation feed and applies it as `ApprovedOnce`, which
//! consumes it. Audited as `WorkloadApproved`.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use super::access::Access;
use super::body::read_json;
use super::effective::{resolve_workload, scoped_workload, workload_context, Scope};
use super::error::ApiError;
use super::query::time_or_null;
use super::AppState;
use crate::events::config_change::{action, target, Change};
use crate::policy::Mode;
use crate::store::approvals::{insert_approval, ApprovalRecord};
use crate::store::StoreError;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApproveBody {
    recommendation_id: String,
    #[serde(default)]
    reason: Option<String>,
}

/// The API representation of an approval.
pub fn approval_json(a: &ApprovalRecord) -> Value {
    let actor = serde_json::from_str::<Value>(&a.actor).unwrap_or(Value::Null);
    json!({
        "id": a.id,
        "workloadId": a.workload_id,
        "recommendationId": a.recommendation_id,
        "approvedBy": actor["name"],
        "approvedAt": time_or_null(Some(a.created_at)),
        "consumedAt": time_or_null(a.consumed_at),
        "consumedByEvent": a.consumed_by_event,
    })
}

fn conflict(code: &'static str, message: String) -> ApiError {
    ApiError::new(StatusCode::CONFLICT, code, message)
}

pub async fn approve(
    State(state): State<AppState>,
    access: Access,
    Path(id): Path<String>,
    body: axum::body::Body,
) -> Result<Response, ApiError> {
    let now = state.now();
    let body: ApproveBody = read_json(body).await?;
    let w = scoped_workload(&state, &access, &id, Scope::Write).await?;
    let r = resolve_workload(&state, &w).await?;
    let mode = &r.effective.mode;
    if mode.cpu != Mode::Audit && mode.memory != Mode::Audit {
        return Err(conflict(
            "not_audit_mode",
            format!("workload {id} is not in audit mode for any resource; nothing to approve"),
        ));
    }
    let rec_id = body.recommendation_id;
    let rec = state
        .store
        .recommendation(rec_id.clone())
        .await?
        .filter(|rec| rec.workload_id == w.seen.id)
        .ok_or_else(|| {
            ApiError::not_found(format!("workload {id} has no recommendation {rec_id}"))
        })?;
    if w.latest_rec_id.as_deref() != Some(rec.id.as_str()) {
        return Err(conflict(
            "recommendation_superseded",
            format!("recommendation {rec_id} is superseded by a newer one; approve the latest"),
        )
        .with_details(json!({ "latestRecommendationId": w.latest_rec_id })));
    }
    if rec.settings_identity != r.identity || w.stale {
        return Err(conflict(
            "recommendation_stale",
            format!(
                "recommendation {rec_id} was made under another policy (or the workload is stale); \
                 wait for the next run"
            ),
        )
        .with_details(json!({
            "recommendationIdentity": rec.settings_identity,
            "currentIdentity": r.identity,
        })));
    }
    let ctx = workload_context(&access, &w, body.reason)?;
    let a = ApprovalRecord {
        id: uuid::Uuid::new_v4().to_string(),
        workload_id: w.seen.id.clone(),
        recommendation_id: rec.id.clone(),
        actor: serde_json::to_string(&ctx.actor).map_err(ApiError::internal)?,
        created_at: now,
        consumed_at: None,
        consumed_by_event: None,
    };
    let stored = a.clone();
    let name = format!(
        "{}/{}/{}/{}",
        w.seen.cluster, w.seen.namespace, w.seen.kind, w.seen.name
    );
    state
        .store
        .write_audited(ctx, now, move |tx| {
            insert_approval(tx, &stored)?;
            let c = Change::new(
                action::WORKLOAD_APPROVED,
                target::APPROVAL,
                &stored.id,
                Some(&name),
            )
            .after(approval_json(&stored));
            Ok(((), c))
        })
        .await
        .map_err(|e| match e {
            StoreError::Conflict(_) => conflict(
                "already_approved",
                format!("recommendation {rec_id} was already approved; an approval is usable once"),
            ),
            e => e.into(),
        })?;
    Ok((StatusCode::CREATED, Json(approval_json(&a))).into_response())
}
