//! Pause and resume of automation, for one cluster or the whole fleet (`*`): the
//! audited changes, the auto-resume at `resumeAt` (actor `system`), and which pause, if
//! any, applies to a cluster. Pauses only stop the agent from changing workloads; runs
//! and recommendations continue.

use crate::events::config_change::{action, AuditContext, Change};
use crate::operation::OpError;
use crate::store::automation::{PauseRecord, FLEET_SCOPE};
use crate::store::{Read, Store, StoreError};
use crate::timestamp::format_ms;
use crate::wire::{Actor, Pause, PauseScope};

/// `cluster` or `fleet`.
pub fn scope_kind(scope: &str) -> PauseScope {
    if scope == FLEET_SCOPE {
        PauseScope::Fleet
    } else {
        PauseScope::Cluster
    }
}

/// A pause as the API shows it (also `before`/`after` of the audit rows).
pub fn view(p: &PauseRecord) -> Pause {
    Pause {
        id: p.scope.clone(),
        scope: scope_kind(&p.scope),
        paused: true,
        reason: Some(p.reason.clone()),
        paused_at: Some(format_ms(p.paused_at)),
        paused_by: serde_json::from_str::<Actor>(&p.paused_by).ok(),
        resume_at: Some(p.resume_at.map(format_ms)),
    }
}

/// The state of a scope that is not paused.
pub fn unpaused(scope: &str) -> Pause {
    Pause {
        id: scope.to_string(),
        scope: scope_kind(scope),
        paused: false,
        reason: None,
        paused_at: None,
        paused_by: None,
        resume_at: None,
    }
}

fn change(act: &'static str, scope: &str) -> Change {
    Change::new(act, "automation", scope, Some(scope))
}

/// Pauses `scope` (an active cluster's name or `*`) until resumed or `resume_at`, which
/// must lie ahead: `AutomationPaused`. A pause needs the reason in `ctx`. Pausing a
/// paused scope replaces its reason and `resumeAt`.
pub async fn pause(
    store: &Store,
    now: i64,
    ctx: AuditContext,
    scope: String,
    resume_at: Option<i64>,
) -> Result<Pause, OpError> {
    if resume_at.is_some_and(|t| t <= now) {
        return Err(OpError::invalid("resumeAt", "must be in the future"));
    }
    let Some(reason) = ctx.reason.clone() else {
        return Err(OpError::invalid("reason", "a pause needs a reason"));
    };
    let record = PauseRecord {
        scope: scope.clone(),
        reason,
        paused_at: now,
        paused_by: serde_json::to_string(&ctx.actor).map_err(OpError::internal)?,
        resume_at,
    };
    Ok(store
        .write_audited(ctx, now, move |tx| {
            if scope != FLEET_SCOPE {
                tx.active_cluster(&scope)?;
            }
            let before = tx.put_pause(&record)?;
            let after = view(&record);
            let c = change(action::AUTOMATION_PAUSED, &scope)
                .before(before.as_ref().map_or_else(|| unpaused(&scope), view))
                .after(&after);
            Ok((after, c))
        })
        .await?)
}

/// Resumes `scope`: `AutomationResumed`; `Refused` when it is not paused.
pub async fn resume(
    store: &Store,
    now: i64,
    ctx: AuditContext,
    scope: String,
) -> Result<Pause, OpError> {
    Ok(store
        .write_audited(ctx, now, move |tx| {
            if scope != FLEET_SCOPE {
                tx.active_cluster(&scope)?;
            }
            let before = tx.delete_pause(&scope)?.ok_or_else(|| {
                StoreError::Refused(format!("automation of {scope:?} is not paused"))
            })?;
            let after = unpaused(&scope);
            let c = change(action::AUTOMATION_RESUMED, &scope)
                .before(view(&before))
                .after(&after);
            Ok((after, c))
        })
        .await?)
}

/// Every pause in force.
pub async fn list(store: &Store) -> Result<Vec<Pause>, OpError> {
    Ok(store
        .reading(|r| Ok(r.pauses()?.iter().map(view).collect()))
        .await?)
}

/// Ends every pause whose `resumeAt` has come, each with one `AutomationResumed` by the
/// `system` actor in its own transaction. A pause replaced meanwhile is left alone.
/// Returns the scopes resumed.
pub async fn auto_resume(store: &Store, now: i64) -> Result<Vec<String>, StoreError> {
    let mut resumed = Vec::new();
    for due in store.reading(move |r| r.due_pauses(now)).await? {
        let scope = due.scope.clone();
        let ended = store
            .writing(move |tx| {
                if !tx.delete_due_pause(&due, now)? {
                    return Ok(false);
                }
                let ctx = AuditContext {
                    actor: Actor::system("scheduler"),
                    reason: Some("resumeAt reached".into()),
                };
                let c = change(action::AUTOMATION_RESUMED, &due.scope)
                    .before(view(&due))
                    .after(unpaused(&due.scope));
                tx.record_change(&ctx, now, &c)?;
                Ok(true)
            })
            .await?;
        if ended {
            resumed.push(scope);
        }
    }
    Ok(resumed)
}

/// The pause that applies to `cluster` at `now`: the fleet's first, else the cluster's.
/// A pause whose `resumeAt` has passed no longer applies, even before the ticker ends it.
pub fn applying(r: &Read<'_>, cluster: &str, now: i64) -> Result<Option<PauseRecord>, StoreError> {
    for scope in [FLEET_SCOPE, cluster] {
        if let Some(p) = r.pause(scope)? {
            if p.resume_at.is_none_or(|t| t > now) {
                return Ok(Some(p));
            }
        }
    }
    Ok(None)
}
