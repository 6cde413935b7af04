//! Pause and resume of automation, for one cluster or the whole fleet (`*`): the
//! audited changes, the auto-resume at `resumeAt` (actor `system`), and which pause, if
//! any, applies to a cluster. Pauses only stop the agent from changing workloads; runs
//! and recommendations continue.

use crate::events::config_change::{action, AuditContext, Change};
use crate::store::automation::{
    delete_due_pause, delete_pause, due_pauses, get_pause, put_pause, PauseRecord, FLEET_SCOPE,
};
use crate::store::{active_cluster, config_audit, Store, StoreError};
use crate::timestamp::format_ms as rfc3339_ms;
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
        paused_at: Some(rfc3339_ms(p.paused_at)),
        paused_by: serde_json::from_str::<Actor>(&p.paused_by).ok(),
        resume_at: Some(p.resume_at.map(rfc3339_ms)),
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

/// Pauses `scope` (an active cluster's name or `*`) until resumed or `resume_at`.
/// Pausing a paused scope replaces its reason and `resumeAt`.
pub async fn pause(
    store: &Store,
    scope: String,
    resume_at: Option<i64>,
    ctx: AuditContext,
    now: i64,
) -> Result<Pause, StoreError> {
    let record = PauseRecord {
        scope: scope.clone(),
        reason: ctx.reason.clone().unwrap_or_default(),
        paused_at: now,
        paused_by: serde_json::to_string(&ctx.actor)
            .map_err(|e| StoreError::Task(e.to_string()))?,
        resume_at,
    };
    store
        .write_audited(ctx, now, move |tx| {
            if scope != FLEET_SCOPE {
                active_cluster(tx, &scope)?;
            }
            let before = put_pause(tx, &record)?;
            let after = view(&record);
            let c = change(action::AUTOMATION_PAUSED, &scope)
                .before(before.as_ref().map_or_else(|| unpaused(&scope), view))
                .after(&after);
            Ok((after, c))
        })
        .await
}

/// Resumes `scope`; `Refused` when it is not paused.
pub async fn resume(
    store: &Store,
    scope: String,
    ctx: AuditContext,
    now: i64,
) -> Result<Pause, StoreError> {
    store
        .write_audited(ctx, now, move |tx| {
            if scope != FLEET_SCOPE {
                active_cluster(tx, &scope)?;
            }
            let before = delete_pause(tx, &scope)?.ok_or_else(|| {
                StoreError::Refused(format!("automation of {scope:?} is not paused"))
            })?;
            let after = unpaused(&scope);
            let c = change(action::AUTOMATION_RESUMED, &scope)
                .before(view(&before))
                .after(&after);
            Ok((after, c))
        })
        .await
}

/// Ends every pause whose `resumeAt` has come, each with one `AutomationResumed` by the
/// `system` actor. A pause replaced meanwhile is left alone. Returns the scopes resumed.
pub async fn auto_resume(store: &Store, now: i64) -> Result<Vec<String>, StoreError> {
    store
        .write(move |conn| {
            let mut resumed = Vec::new();
            for due in due_pauses(conn, now)? {
                let tx = conn.transaction()?;
                if delete_due_pause(&tx, &due, now)? {
                    let ctx = AuditContext {
                        actor: Actor::system("scheduler"),
                        reason: Some("resumeAt reached".into()),
                    };
                    let c = change(action::AUTOMATION_RESUMED, &due.scope)
                        .before(view(&due))
                        .after(unpaused(&due.scope));
                    config_audit::record(&tx, &ctx, now, &c)?;
                    resumed.push(due.scope.clone());
                }
                tx.commit()?;
            }
            Ok(resumed)
        })
        .await
}

/// The pause that applies to `cluster` at `now`: the fleet's first, else the cluster's.
/// A pause whose `resumeAt` has passed no longer applies, even before the ticker ends it.
pub fn applying(
    conn: &rusqlite::Connection,
    cluster: &str,
    now: i64,
) -> Result<Option<PauseRecord>, StoreError> {
    for scope in [FLEET_SCOPE, cluster] {
        if let Some(p) = get_pause(conn, scope)? {
            if p.resume_at.is_none_or(|t| t > now) {
                return Ok(Some(p));
            }
        }
    }
    Ok(None)
}
