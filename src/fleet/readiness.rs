//! Cluster readiness: the pure rule ([`decide`]) and the evaluations that apply it
//! (after heartbeats, runs, datasource checks, and on the fleet ticker). The state
//! changes only through `store::readiness::evaluate_in_transaction`, which records
//! exactly one `ReadinessChanged` (actor `system`) per change. docs/contracts/readiness.md
//! describes the rule for users.

use serde_json::json;

use super::agent_settings::heartbeat_stale_after_ms;
use crate::datasource::Source;
use crate::events::config_change::{Actor, AuditContext};
use crate::runs::Runs;
use crate::store::readiness::{
    evaluate_in_transaction, put_datasource_check, DatasourceCheckRecord, ReadinessDecision,
    ReadinessInputs, ReadinessRecord,
};
use crate::store::{Store, StoreError};
use crate::wire::Readiness;

pub const READY: &str = "ready";
pub const DEGRADED: &str = "degraded";
pub const NOT_READY: &str = "not-ready";

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
    let name = cluster.to_string();
    let changed = store
        .write(move |c| evaluate_in_transaction(c, &name, now, &actor(), |i| decide(i, now)))
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

/// How long one datasource check may take before it counts as unreachable.
const CHECK_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(20);

/// Tests the cluster's datasource (reachable, metrics present), stores the result and
/// re-evaluates readiness.
pub async fn check_datasource(
    store: &Store,
    runs: &Runs,
    cluster: &str,
) -> Result<(ReadinessRecord, bool), StoreError> {
    let check = match runs.source_for(cluster).await {
        Err(why) => (false, Vec::new(), why),
        Ok((source, scope)) => match tokio::time::timeout(CHECK_TIMEOUT, source.test(&scope)).await
        {
            Err(_) => (false, Vec::new(), "the check timed out".to_string()),
            Ok(Err(e)) => (false, Vec::new(), e.to_string()),
            Ok(Ok(report)) => (
                report.reachable && report.authenticated,
                report.missing_metrics,
                report.message,
            ),
        },
    };
    let record = DatasourceCheckRecord {
        checked_at: runs.clock().now_ms(),
        reachable: check.0,
        missing_metrics: check.1,
        message: check.2,
    };
    let name = cluster.to_string();
    store
        .write(move |c| {
            let cl = crate::store::active_cluster(c, &name)?;
            put_datasource_check(c, cl.id, &record)
        })
        .await?;
    evaluate(store, runs.clock().now_ms(), cluster).await
}

/// Checks in the background and logs failures (after a datasource test or relink).
pub fn spawn_check(store: Store, runs: Runs, cluster: String) {
    tokio::spawn(async move {
        if let Err(e) = check_datasource(&store, &runs, &cluster).await {
            tracing::warn!(%cluster, error = %e, "datasource check for readiness failed");
        }
    });
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
    use crate::store::readiness::{HeartbeatRecord, LastRun};

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
