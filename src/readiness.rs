//! Cluster readiness: the pure rule ([`decide`]) and the evaluation that applies it
//! (after heartbeats, runs and datasource checks, and on the fleet ticker). The state
//! changes only through `Tx::evaluate_readiness` (in `store::readiness`), which records
//! exactly one `ReadinessChanged` (actor `system`) per change. docs/contracts/readiness.md
//! describes the rule for users. Uses `store`, `events`, `wire`; runs and the fleet
//! both call it, so it sits below them.

use serde_json::json;

use crate::events::config_change::{Actor, AuditContext};
use crate::store::readiness::{ReadinessDecision, ReadinessInputs, ReadinessRecord};
use crate::store::{Store, StoreError};
use crate::wire::{AgentSettings, Readiness};

pub const READY: &str = "ready";
pub const DEGRADED: &str = "degraded";
pub const NOT_READY: &str = "not-ready";

/// A heartbeat older than this many heartbeat intervals makes the cluster `not-ready`.
pub const HEARTBEAT_STALE_INTERVALS: u64 = 3;

/// Heartbeats older than this (ms) are stale.
pub fn heartbeat_stale_after_ms() -> i64 {
    let interval = AgentSettings::default().heartbeat_interval_seconds;
    (interval * HEARTBEAT_STALE_INTERVALS * 1000) as i64
}

/// The actor of readiness changes.
pub fn actor() -> AuditContext {
    AuditContext {
        actor: Actor::system("readiness"),
        reason: None,
    }
}

fn ms_text(ms: i64) -> String {
    crate::timestamp::format_ms(ms)
}

/// The readiness rule. `not-ready`: the agent is silent (no heartbeat, or none for
/// 3 loop intervals) or the datasource is unreachable / not configured. `degraded`: the
/// datasource lacks metrics kerf needs, or the last run failed or was partial.
/// Otherwise `ready`. A check without data yet (no run so far) does not count against.
pub fn decide(i: &ReadinessInputs, now: i64) -> ReadinessDecision {
    let mut not_ready = Vec::new();
    let mut degraded = Vec::new();
    let heartbeat = match &i.heartbeat {
        None => {
            not_ready.push("no agent heartbeat received yet".to_string());
            json!({ "status": "fail", "message": "no heartbeat received yet" })
        }
        Some(h) => {
            let age = now - h.received_at;
            let status = if age > heartbeat_stale_after_ms() {
                not_ready.push(format!(
                    "agent heartbeat is stale: last one {}s ago (limit {}s)",
                    age / 1000,
                    heartbeat_stale_after_ms() / 1000
                ));
                "fail"
            } else {
                "pass"
            };
            json!({
                "status": status,
                "lastHeartbeatAt": ms_text(h.received_at),
                "agentVersion": h.agent_version,
                "kubernetesVersion": h.kubernetes_version,
                "capabilities": h.capabilities,
            })
        }
    };
    let datasource = match &i.datasource {
        None => {
            not_ready.push("datasource not checked yet".to_string());
            json!({ "status": "pending", "message": "not checked yet" })
        }
        Some(d) => {
            let status = if !d.reachable {
                not_ready.push(format!("datasource unreachable: {}", d.message));
                "fail"
            } else if !d.missing_metrics.is_empty() {
                degraded.push(format!(
                    "datasource lacks metrics: {}",
                    d.missing_metrics.join(", ")
                ));
                "warn"
            } else {
                "pass"
            };
            json!({
                "status": status,
                "checkedAt": ms_text(d.checked_at),
                "reachable": d.reachable,
                "missingMetrics": d.missing_metrics,
                "message": d.message,
            })
        }
    };
    let last_run = match &i.last_run {
        None => json!({ "status": "pending", "message": "no run finished yet" }),
        Some(r) => {
            let status = if r.status == "succeeded" {
                "pass"
            } else {
                let why = r
                    .error
                    .clone()
                    .unwrap_or_else(|| "no error recorded".into());
                degraded.push(format!("last run {} {}: {why}", r.id, r.status));
                "fail"
            };
            json!({
                "status": status,
                "runId": r.id,
                "runStatus": r.status,
                "finishedAt": r.finished_at.map(ms_text),
                "error": r.error,
            })
        }
    };
    let (state, reasons) = if !not_ready.is_empty() {
        not_ready.extend(degraded);
        (NOT_READY, not_ready)
    } else if !degraded.is_empty() {
        (DEGRADED, degraded)
    } else {
        (READY, Vec::new())
    };
    ReadinessDecision {
        state,
        reasons,
        checks: json!({ "heartbeat": heartbeat, "datasource": datasource, "lastRun": last_run }),
    }
}

/// Re-evaluates `cluster` at `now`; returns its record and whether it changed. Needs only
/// the store, so `runs` can call it after each run.
pub async fn evaluate(
    store: &Store,
    now: i64,
    cluster: &str,
) -> Result<(ReadinessRecord, bool), StoreError> {
    let (name, ctx) = (cluster.to_string(), actor());
    let changed = store
        .writing(move |tx| tx.evaluate_readiness(&name, now, &ctx, move |i| decide(i, now)))
        .await?;
    if changed.1 {
        tracing::info!(cluster, state = %changed.0.state, reasons = ?changed.0.reasons, "readiness changed");
    }
    Ok(changed)
}

/// Evaluates and logs (never fails the caller): used after runs and heartbeats.
pub async fn evaluate_logged(store: &Store, now: i64, cluster: &str) {
    match evaluate(store, now, cluster).await {
        Ok(_) | Err(StoreError::NotFound(_)) | Err(StoreError::Refused(_)) => {}
        Err(e) => tracing::error!(cluster, error = %e, "readiness evaluation failed"),
    }
}

/// The readiness of active cluster `name` as last evaluated.
pub async fn current(store: &Store, name: String) -> Result<Readiness, StoreError> {
    store
        .reading(move |r| {
            let cl = r.active_cluster(&name)?;
            r.readiness(cl.id)?
                .map(|rec| view(&cl.name, &rec))
                .ok_or_else(|| StoreError::NotFound(format!("readiness of {name:?}")))
        })
        .await
}

/// The readiness view of the API.
pub fn view(cluster: &str, r: &ReadinessRecord) -> Readiness {
    Readiness {
        cluster: cluster.to_string(),
        state: r.state.clone(),
        reasons: r.reasons.clone(),
        checks: r.checks.clone(),
        since: ms_text(r.since),
        evaluated_at: ms_text(r.evaluated_at),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::readiness::{DatasourceCheckRecord, HeartbeatRecord, LastRun};

    const NOW: i64 = 10_000_000;

    fn inputs(
        hb_age: Option<i64>,
        reachable: Option<bool>,
        missing: &[&str],
        run: Option<&str>,
    ) -> ReadinessInputs {
        ReadinessInputs {
            heartbeat: hb_age.map(|age| HeartbeatRecord {
                received_at: NOW - age,
                agent_version: "1".into(),
                kubernetes_version: "v1.33".into(),
                capabilities: json!({}),
            }),
            datasource: reachable.map(|r| DatasourceCheckRecord {
                checked_at: NOW,
                reachable: r,
                missing_metrics: missing.iter().map(|m| m.to_string()).collect(),
                message: "m".into(),
            }),
            last_run: run.map(|s| LastRun {
                id: "r1".into(),
                status: s.into(),
                finished_at: Some(NOW),
                error: None,
            }),
        }
    }

    #[test]
    fn the_rule_ranks_not_ready_over_degraded_over_ready() {
        let stale = heartbeat_stale_after_ms() + 1;
        let cases = [
            (
                inputs(Some(0), Some(true), &[], Some("succeeded")),
                READY,
                0,
            ),
            (inputs(Some(0), Some(true), &[], None), READY, 0),
            (inputs(None, Some(true), &[], None), NOT_READY, 1),
            (inputs(Some(stale), Some(true), &[], None), NOT_READY, 1),
            (
                inputs(Some(heartbeat_stale_after_ms()), Some(true), &[], None),
                READY,
                0,
            ),
            (inputs(Some(0), None, &[], None), NOT_READY, 1),
            (inputs(Some(0), Some(false), &[], None), NOT_READY, 1),
            (
                inputs(
                    Some(0),
                    Some(true),
                    &["container_memory_working_set_bytes"],
                    None,
                ),
                DEGRADED,
                1,
            ),
            (
                inputs(Some(0), Some(true), &[], Some("failed")),
                DEGRADED,
                1,
            ),
            (
                inputs(Some(0), Some(true), &[], Some("partial")),
                DEGRADED,
                1,
            ),
            (inputs(None, Some(true), &[], Some("failed")), NOT_READY, 2),
        ];
        for (i, (input, state, reasons)) in cases.iter().enumerate() {
            let d = decide(input, NOW);
            assert_eq!(
                (d.state, d.reasons.len()),
                (*state, *reasons),
                "case {i}: {:?}",
                d.reasons
            );
        }
    }
}
