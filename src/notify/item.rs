//! What the dispatcher considers telling people about: workload events of the audit log,
//! the notices derived from the hub's own configuration audit (readiness went down or
//! up, automation paused or resumed) and failed runs. Nothing is added to the event
//! model: notices are read from rows that exist anyway. Pure.

use serde_json::{json, Value};

use crate::events::config_change::action;
use crate::events::wellknown::{self, CONFIG_CHANGED};
use crate::store::notify_dispatch::{AuditRow, RunRow};

/// The hub's own notices, as rules name them.
pub const NOTICES: &[&str] = &[
    READINESS_DEGRADED,
    READINESS_RECOVERED,
    AUTOMATION_PAUSED,
    AUTOMATION_RESUMED,
    RUN_FAILED,
];
pub const READINESS_DEGRADED: &str = "readiness_degraded";
pub const READINESS_RECOVERED: &str = "readiness_recovered";
pub const AUTOMATION_PAUSED: &str = "automation_paused";
pub const AUTOMATION_RESUMED: &str = "automation_resumed";
pub const RUN_FAILED: &str = "run_failed";

/// One thing that may be worth a message.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// Position in its source (audit seq or run seq).
    pub seq: i64,
    /// The event id, the audit row id or the run id.
    pub id: String,
    /// An event type or a notice name.
    pub trigger: String,
    /// The event's reason; for notices the new state or the action.
    pub reason: String,
    /// `None` only for a fleet-wide pause or resume.
    pub cluster: Option<String>,
    /// Set for workload events.
    pub namespace: Option<String>,
    /// When it happened (event time, change time, run end), Unix ms.
    pub time_ms: i64,
    /// Webhook data: the event as `GET /v1/audit` serves it, or the notice's facts.
    pub detail: Value,
}

impl Item {
    pub fn is_notice(&self) -> bool {
        NOTICES.contains(&self.trigger.as_str())
    }
}

/// Readiness states, worst first.
fn readiness_rank(state: &str) -> Option<u8> {
    match state {
        "not-ready" => Some(0),
        "degraded" => Some(1),
        "ready" => Some(2),
        _ => None,
    }
}

/// The item an audit row stands for, if any.
pub fn from_audit(row: &AuditRow) -> Option<Item> {
    if row.kind != CONFIG_CHANGED {
        return wellknown::is_agent_type(&row.kind).then(|| workload_event(row));
    }
    let record: Value = serde_json::from_str(&row.payload).ok()?;
    let (trigger, cluster) = match row.reason.as_str() {
        action::READINESS_CHANGED => {
            let before = readiness_rank(record["before"]["state"].as_str()?)?;
            let after = readiness_rank(record["after"]["state"].as_str()?)?;
            let trigger = match after.cmp(&before) {
                std::cmp::Ordering::Less => READINESS_DEGRADED,
                std::cmp::Ordering::Greater => READINESS_RECOVERED,
                std::cmp::Ordering::Equal => return None,
            };
            (trigger, record["target"]["id"].as_str().map(str::to_string))
        }
        action::AUTOMATION_PAUSED | action::AUTOMATION_RESUMED => {
            let trigger = if row.reason == action::AUTOMATION_PAUSED {
                AUTOMATION_PAUSED
            } else {
                AUTOMATION_RESUMED
            };
            let scope = record["target"]["id"].as_str()?;
            (trigger, (scope != "*").then(|| scope.to_string()))
        }
        _ => return None,
    };
    let reason = match trigger {
        READINESS_DEGRADED | READINESS_RECOVERED => record["after"]["state"].as_str()?.to_string(),
        _ => row.reason.clone(),
    };
    Some(Item {
        seq: row.seq,
        id: row.id.clone(),
        trigger: trigger.into(),
        reason,
        cluster,
        namespace: None,
        time_ms: row.time_ms,
        detail: json!({
            "notice": trigger,
            "cluster": record["target"]["id"],
            "before": record["before"],
            "after": record["after"],
            "actor": record["actor"],
            "reason": record["reason"],
            "time": record["time"],
        }),
    })
}

fn workload_event(row: &AuditRow) -> Item {
    let mut detail: Value = serde_json::from_str(&row.payload).unwrap_or(Value::Null);
    if let Some(obj) = detail.as_object_mut() {
        obj.insert("cluster".into(), json!(row.cluster));
        obj.insert(
            "receivedAt".into(),
            json!(crate::timestamp::format_ms(row.received_at_ms)),
        );
    }
    Item {
        seq: row.seq,
        id: row.id.clone(),
        trigger: row.kind.clone(),
        reason: row.reason.clone(),
        cluster: row.cluster.clone(),
        namespace: row.namespace.clone(),
        time_ms: row.time_ms,
        detail,
    }
}

/// The notice of a run that failed, if it did.
pub fn from_run(run: &RunRow) -> Option<Item> {
    if run.status != "failed" {
        return None;
    }
    let errors: Value = serde_json::from_str(&run.errors).unwrap_or(Value::Array(Vec::new()));
    Some(Item {
        seq: run.seq,
        id: run.id.clone(),
        trigger: RUN_FAILED.into(),
        reason: "failed".into(),
        cluster: Some(run.cluster.clone()),
        namespace: None,
        time_ms: run.finished_at.unwrap_or(run.started_at),
        detail: json!({
            "notice": RUN_FAILED,
            "cluster": run.cluster,
            "runId": run.id,
            "trigger": run.trigger,
            "startedAt": crate::timestamp::format_ms(run.started_at),
            "finishedAt": run.finished_at.map(crate::timestamp::format_ms),
            "errors": errors,
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config_row(action: &str, target: &str, before: Value, after: Value) -> AuditRow {
        AuditRow {
            seq: 7,
            id: "c1".into(),
            kind: CONFIG_CHANGED.into(),
            reason: action.into(),
            cluster: None,
            namespace: None,
            time_ms: 5,
            received_at_ms: 5,
            payload: json!({"action": action, "target": {"type": "x", "id": target},
                "before": before, "after": after, "actor": {"type": "system"}, "reason": "r",
                "time": "t"})
            .to_string(),
        }
    }

    #[test]
    fn readiness_going_down_or_up_is_a_notice_and_the_first_state_is_not() {
        let down = config_row(
            "ReadinessChanged",
            "prod",
            json!({"state": "ready"}),
            json!({"state": "not-ready"}),
        );
        let item = from_audit(&down).expect("notice");
        assert_eq!(
            (item.trigger.as_str(), item.reason.as_str()),
            (READINESS_DEGRADED, "not-ready")
        );
        assert_eq!(item.cluster.as_deref(), Some("prod"));
        let up = config_row(
            "ReadinessChanged",
            "prod",
            json!({"state": "degraded"}),
            json!({"state": "ready"}),
        );
        assert_eq!(
            from_audit(&up).expect("notice").trigger,
            READINESS_RECOVERED
        );
        let first = config_row(
            "ReadinessChanged",
            "prod",
            json!({"state": null}),
            json!({"state": "ready"}),
        );
        assert!(from_audit(&first).is_none());
    }

    #[test]
    fn a_fleet_pause_has_no_cluster_and_other_changes_are_ignored() {
        let pause = config_row("AutomationPaused", "*", json!({}), json!({}));
        let item = from_audit(&pause).expect("notice");
        assert_eq!(
            (item.trigger.as_str(), item.cluster),
            (AUTOMATION_PAUSED, None)
        );
        assert!(from_audit(&config_row("PolicyCreated", "1", json!({}), json!({}))).is_none());
    }

    #[test]
    fn only_failed_runs_are_notices() {
        let mut run = RunRow {
            seq: 1,
            id: "r1".into(),
            cluster: "prod".into(),
            status: "succeeded".into(),
            trigger: "scheduled".into(),
            started_at: 1,
            finished_at: Some(2),
            errors: "[]".into(),
        };
        assert!(from_run(&run).is_none());
        run.status = "failed".into();
        assert_eq!(from_run(&run).expect("notice").trigger, RUN_FAILED);
    }
}
