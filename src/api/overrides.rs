//! `PUT` and `DELETE /v1/workloads/{id}/override`: an operator's per-workload override
//! (mode per resource, excluded containers, optional expiry, reason), which beats every
//! policy for the fields it sets until it expires. Audited as `OverrideSet` /
//! `OverrideCleared`, naming the team whose role allowed it.

use axum::body::Body;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::Json;
use serde_json::{json, Value};

use super::access::Access;
use super::body::{parse_json, read_limited, MAX_JSON_BYTES};
use super::config_audit::reason_query;
use super::effective::{scoped_workload, workload_context, Scope};
use super::error::ApiError;
use super::query::time_or_null;
use super::AppState;
use crate::events::config_change::{action, target, Change};
use crate::policy::validate::rfc3339_ms;
use crate::policy::{validate_override, OverrideSpec};
use crate::store::overrides::{clear_override, set_override, OverrideRecord};
use crate::store::{StoreError, WorkloadRow};

/// The API representation of an override; `active` is false once it expired.
pub fn override_json(o: &OverrideRecord, now: i64) -> Value {
    json!({
        "workloadId": o.workload_id,
        "spec": o.spec,
        "expiresAt": time_or_null(o.expires_at),
        "active": o.expires_at.is_none_or(|e| e > now),
        "setAt": time_or_null(Some(o.created_at)),
        "setBy": serde_json::from_str::<Value>(&o.actor).unwrap_or(Value::Null),
    })
}

fn change(action: &'static str, w: &WorkloadRow) -> Change {
    let name = format!(
        "{}/{}/{}/{}",
        w.seen.cluster, w.seen.namespace, w.seen.kind, w.seen.name
    );
    Change::new(action, target::WORKLOAD_OVERRIDE, &w.seen.id, Some(&name))
}

/// `PUT /v1/workloads/{id}/override`: the whole override; its `reason` is the audit's.
pub async fn put_override(
    State(state): State<AppState>,
    access: Access,
    Path(id): Path<String>,
    body: Body,
) -> Result<Json<Value>, ApiError> {
    let w = scoped_workload(&state, &access, &id, Scope::Write).await?;
    let bytes = read_limited(body, MAX_JSON_BYTES).await?;
    let spec: OverrideSpec = parse_json(&bytes)?;
    let errors = validate_override(&spec);
    if !errors.is_empty() {
        return Err(ApiError::bad_request(
            "invalid_override",
            format!("the override has {} invalid field(s)", errors.len()),
        )
        .with_details(json!({ "errors": errors })));
    }
    let reason = (!spec.reason.is_empty()).then(|| spec.reason.clone());
    let ctx = workload_context(&access, &w, reason)?;
    let now = state.now();
    let rec = OverrideRecord {
        workload_id: w.seen.id.clone(),
        expires_at: spec.expires_at.as_deref().and_then(rfc3339_ms),
        spec,
        created_at: now,
        actor: serde_json::to_string(&ctx.actor).map_err(ApiError::internal)?,
    };
    let stored = rec.clone();
    state
        .store
        .write_audited(ctx, now, move |tx| {
            let before = set_override(tx, &stored)?;
            let c = change(action::OVERRIDE_SET, &w)
                .before(before.map(|b| override_json(&b, now)))
                .after(override_json(&stored, now));
            Ok(((), c))
        })
        .await?;
    Ok(Json(override_json(&rec, now)))
}

/// `DELETE /v1/workloads/{id}/override[?reason=…]`.
pub async fn delete_override(
    State(state): State<AppState>,
    access: Access,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<StatusCode, ApiError> {
    let w = scoped_workload(&state, &access, &id, Scope::Write).await?;
    let ctx = workload_context(&access, &w, reason_query(query.as_deref())?)?;
    let now = state.now();
    state
        .store
        .write_audited(ctx, now, move |tx| {
            let before = clear_override(tx, &w.seen.id)?.ok_or_else(|| {
                StoreError::NotFound(format!("an override of workload {}", w.seen.id))
            })?;
            let c = change(action::OVERRIDE_CLEARED, &w).before(override_json(&before, now));
            Ok(((), c))
        })
        .await?;
    Ok(StatusCode::NO_CONTENT)
}
