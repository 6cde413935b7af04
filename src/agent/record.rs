//! A workload's RightsizingRecommendation, written from what the agent decided: the spec
//! names the workload and the recommendation (with the values kerf would set), the
//! status shows the phase, the latest reason, the applied change and two conditions
//! whose reasons are the events contract's (`Applied`: the recommended values are live;
//! `Held`: a skip or a guardrail holds the change back), and keeps the agent's memory
//! (`status.agent`, [`WorkloadState`]).

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::decide::values::ProposedValue;
use super::state::{ContainerValues, Phase, WorkloadState};
use crate::cluster::quantity::{format_cpu, format_memory};
use crate::cluster::record::{KIND_LABEL, NAME_LABEL};
use crate::cluster::{Record, ResourceField, Resources, WorkloadKey};
use crate::policy::Mode;
use crate::timestamp::format_ms;
use crate::wire::EventType;

fn quantity(field: ResourceField, v: u64) -> String {
    match field {
        ResourceField::CpuRequest | ResourceField::CpuLimit => format_cpu(v),
        _ => format_memory(v),
    }
}

/// `{requests: {cpu, memory}, limits: {...}}` of the set values.
pub fn quantities(r: &Resources) -> Value {
    let mut out = Map::new();
    for field in ResourceField::ALL {
        if let Some(v) = r.get(field) {
            let (group, resource) = field.path();
            let entry = out.entry(group).or_insert_with(|| json!({}));
            entry[resource] = Value::String(quantity(field, v));
        }
    }
    Value::Object(out)
}

/// The record of `key` (no uid, no status yet).
pub fn new(key: &WorkloadKey, recommendation_id: Option<&str>, values: &[ProposedValue]) -> Record {
    let mut containers: BTreeMap<&str, Resources> = BTreeMap::new();
    for v in values {
        containers
            .entry(v.container.as_str())
            .or_default()
            .set(v.field, Some(v.value));
    }
    let containers: Vec<Value> = containers
        .iter()
        .map(|(name, r)| {
            let mut c = quantities(r);
            c["name"] = Value::String(name.to_string());
            c
        })
        .collect();
    let mut spec = json!({
        "workloadRef": { "apiVersion": "apps/v1", "kind": key.kind.as_str(), "name": key.name },
    });
    if let Some(id) = recommendation_id {
        spec["recommendationID"] = Value::String(id.into());
    }
    if !containers.is_empty() {
        spec["containers"] = Value::Array(containers);
    }
    Record {
        namespace: key.namespace.clone(),
        name: Record::name_for(key),
        uid: None,
        labels: BTreeMap::from([
            (KIND_LABEL.to_string(), key.kind.as_str().to_string()),
            (NAME_LABEL.to_string(), short_label(&key.name)),
        ]),
        owner: None,
        spec,
        status: Value::Null,
    }
}

/// Label values are at most 63 characters.
fn short_label(name: &str) -> String {
    name.chars()
        .take(63)
        .collect::<String>()
        .trim_end_matches(['-', '.', '_'])
        .to_string()
}

fn mode_text(state: &WorkloadState) -> Option<String> {
    let m = state.mode.as_ref()?;
    let text = |m: Mode| match m {
        Mode::Off => "off",
        Mode::Audit => "audit",
        Mode::AutoPatch => "auto-patch",
    };
    Some(if m.cpu == m.memory {
        text(m.cpu).to_string()
    } else {
        format!("cpu {}, memory {}", text(m.cpu), text(m.memory))
    })
}

fn changes(containers: &[ContainerValues]) -> Value {
    Value::Array(
        containers
            .iter()
            .map(
                |c| json!({ "name": c.name, "from": quantities(&c.from), "to": quantities(&c.to) }),
            )
            .collect(),
    )
}

/// The status of a record holding `state`.
pub fn status(state: &WorkloadState) -> Value {
    let reason = state.last_reason.map(|r| r.as_str().to_string());
    let since = format_ms(state.phase_since_ms);
    let mut s = json!({
        "phase": format!("{:?}", state.phase),
        "agent": state,
    });
    if let Some(r) = &reason {
        s["reason"] = Value::String(r.clone());
        s["message"] = Value::String(state.last_message.clone());
        let applied = state.phase == Phase::Applied;
        let held = state
            .last_reason
            .is_some_and(|r| matches!(r.event_type(), EventType::Skipped | EventType::Blocked));
        let condition = |kind: &str, on: bool| {
            json!({
                "type": kind,
                "status": if on { "True" } else { "False" },
                "reason": r,
                "message": state.last_message,
                "lastTransitionTime": since,
            })
        };
        s["conditions"] = json!([condition("Applied", applied), condition("Held", held)]);
    }
    if let Some(m) = mode_text(state) {
        s["mode"] = Value::String(m);
    }
    if let Some(id) = &state.recommendation_id {
        s["observedRecommendationID"] = Value::String(id.clone());
    }
    if let Some(t) = state.last_change_ms {
        s["lastChange"] = Value::String(format_ms(t));
    }
    if let (Phase::Deferred, Some(t)) = (state.phase, state.next_window_ms) {
        s["nextWindow"] = Value::String(format_ms(t));
    }
    if let Some(w) = &state.watch {
        s["watch"] = json!({
            "until": format_ms(w.until_ms),
            "oomKills": w.oom_kills,
            "restarts": w.restarts,
        });
    }
    if let Some(r) = &state.rolled_back {
        s["rolledBack"] = json!({
            "reason": r.reason.as_str(),
            "time": format_ms(r.at_ms),
            "message": r.message,
        });
    }
    if let Some(a) = &state.applied {
        s["applied"] = json!({
            "strategy": a.strategy,
            "recommendationID": a.recommendation_id,
            "time": format_ms(a.at_ms),
            "containers": changes(&a.containers),
            "laterPodsResized": a.later_pods_resized,
        });
    }
    s
}

/// The agent's memory in a record (`None` when it has none or it cannot be read).
pub fn state_of(record: &Record) -> Option<WorkloadState> {
    let agent = record.status.get("agent")?;
    match serde_json::from_value(agent.clone()) {
        Ok(s) => Some(s),
        Err(e) => {
            tracing::warn!(record = %record.name, namespace = %record.namespace, error = %e,
                "cannot read the agent's memory in a RightsizingRecommendation; starting afresh");
            None
        }
    }
}

/// The workload a record is about, from its spec.
pub fn workload_of(record: &Record) -> Option<WorkloadKey> {
    let r = record.spec.get("workloadRef")?;
    let kind = crate::cluster::WorkloadKind::parse(r.get("kind")?.as_str()?)?;
    Some(WorkloadKey::new(
        &record.namespace,
        kind,
        r.get("name")?.as_str()?,
    ))
}
