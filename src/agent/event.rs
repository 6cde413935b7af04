//! Contract events (`wire::AgentEvent`) from what the agent decided or did, and the
//! Kubernetes Event that records each one on the workload's RightsizingRecommendation
//! (Warning for `failed`, `rolled_back` and `fallback`; Normal otherwise).

use std::collections::BTreeMap;

use super::decide::values::resource_of;
use super::decide::Finding;
use super::state::{ContainerValues, Operation};
use crate::cluster::quantity::{format_cpu, format_memory};
use crate::cluster::{
    ClusterEvent, EventType as KubeEventType, ObjectRef, ResourceField, WorkloadKey,
};
use crate::policy::Strategy;
use crate::timestamp::format_ms;
use crate::wire::event::ResourceValues;
use crate::wire::{self, AgentEvent, ContainerChange, EventResource, EventType, Reason};

/// Longest message the contract allows, in characters.
const MAX_MESSAGE: usize = 1024;

fn short(message: &str) -> Option<String> {
    if message.is_empty() {
        return None;
    }
    Some(message.chars().take(MAX_MESSAGE).collect())
}

/// A new event id for an event at `now_ms`: a UUID v7, whose leading 48 bits are that
/// time. Ids in time order land at one end of the hub's unique index on them, where
/// random (v4) ids would dirty a random page of it per event.
pub fn new_id(now_ms: i64) -> String {
    let ms = u64::try_from(now_ms).unwrap_or(0);
    let ts = uuid::Timestamp::from_unix(uuid::NoContext, ms / 1000, (ms % 1000) as u32 * 1_000_000);
    uuid::Uuid::new_v7(ts).to_string()
}

fn workload(key: &WorkloadKey) -> wire::WorkloadKey {
    key.into()
}

fn base(id: String, now_ms: i64, key: &WorkloadKey, reason: Reason) -> AgentEvent {
    AgentEvent {
        id,
        event_type: reason.event_type(),
        time: format_ms(now_ms),
        workload: workload(key),
        reason,
        recommendation_id: None,
        strategy: None,
        resources: Vec::new(),
        containers: Vec::new(),
        message: None,
        details: BTreeMap::new(),
    }
}

/// A skip or block.
pub fn finding(
    now_ms: i64,
    key: &WorkloadKey,
    f: &Finding,
    recommendation: Option<&str>,
) -> AgentEvent {
    AgentEvent {
        recommendation_id: recommendation.map(str::to_string),
        resources: f.resources.clone(),
        message: short(&f.message),
        details: f.details.clone(),
        ..base(new_id(now_ms), now_ms, key, f.reason)
    }
}

fn quantity(field: ResourceField, v: u64) -> String {
    match resource_of(field) {
        EventResource::Cpu => format_cpu(v),
        EventResource::Memory => format_memory(v),
    }
}

/// Only the values that change, per container; and the resources they belong to.
pub fn changes(containers: &[ContainerValues]) -> (Vec<ContainerChange>, Vec<EventResource>) {
    let mut resources = Vec::new();
    let mut out = Vec::new();
    for c in containers {
        let (mut from, mut to) = (ResourceValues::default(), ResourceValues::default());
        for field in ResourceField::ALL {
            let (a, b) = (c.from.get(field), c.to.get(field));
            if a == b {
                continue;
            }
            let r = resource_of(field);
            if !resources.contains(&r) {
                resources.push(r);
            }
            let (f, t) = match field {
                ResourceField::CpuRequest | ResourceField::MemoryRequest => {
                    (&mut from.requests, &mut to.requests)
                }
                _ => (&mut from.limits, &mut to.limits),
            };
            if let Some(a) = a {
                f.insert(r, quantity(field, a));
            }
            if let Some(b) = b {
                t.insert(r, quantity(field, b));
            }
        }
        if !to.requests.is_empty() || !to.limits.is_empty() {
            out.push(ContainerChange {
                name: c.name.clone(),
                from,
                to,
            });
        }
    }
    resources.sort();
    (out, resources)
}

fn describe(changes: &[ContainerChange]) -> String {
    let mut parts = Vec::new();
    for c in changes {
        for (kind, from, to) in [
            ("request", &c.from.requests, &c.to.requests),
            ("limit", &c.from.limits, &c.to.limits),
        ] {
            for (r, v) in to {
                let was = from.get(r).map_or("unset", String::as_str);
                let r = match r {
                    EventResource::Cpu => "cpu",
                    EventResource::Memory => "memory",
                };
                parts.push(format!("{} {r} {kind} {was} -> {v}", c.name));
            }
        }
    }
    parts.join(", ")
}

/// The `applied` event of a finished change (carries the operation's own id, so a change
/// finished again after a restart is stored once).
pub fn applied(now_ms: i64, key: &WorkloadKey, op: &Operation) -> AgentEvent {
    let (containers, resources) = changes(&op.containers);
    let how = match op.strategy {
        Strategy::InPlace => "resized in place",
        _ => "rolled out",
    };
    let mut e = AgentEvent {
        recommendation_id: Some(op.recommendation_id.clone()),
        strategy: Some(op.strategy),
        message: short(&format!("{how}: {}", describe(&containers))),
        containers,
        resources,
        ..base(op.event_id.clone(), now_ms, key, op.reason)
    };
    if let Some(a) = &op.approval {
        e.details.insert("approvalId".into(), a.id.clone());
        e.details.insert("approvedBy".into(), a.approved_by.clone());
    }
    if let Some(w) = &op.window {
        e.details.insert("maintenanceWindow".into(), w.clone());
    }
    if let Some(h) = &op.hpa {
        e.details.insert("hpa".into(), h.name.clone());
        e.details.insert("hpaResource".into(), h.resource.clone());
        e.details
            .insert("hpaTargetFrom".into(), h.target_from.to_string());
        e.details
            .insert("hpaTargetTo".into(), h.target_to.to_string());
        if let Some(so) = &h.scaled_object {
            e.details.insert("scaledObject".into(), so.clone());
        }
    }
    e
}

/// The `rolled_back` event of a finished rollback (`op.containers` go from the values
/// of the change back to the previous ones; the operation's own id, as `applied`).
pub fn rolled_back(now_ms: i64, key: &WorkloadKey, op: &Operation) -> AgentEvent {
    let (containers, resources) = changes(&op.containers);
    let cause = op.rollback.clone();
    let mut details = cause
        .as_ref()
        .map(|c| c.details.clone())
        .unwrap_or_default();
    if let Some(h) = &op.hpa {
        details.insert("hpa".into(), h.name.clone());
        details.insert("hpaTargetFrom".into(), h.target_from.to_string());
        details.insert("hpaTargetTo".into(), h.target_to.to_string());
        if let Some(so) = &h.scaled_object {
            details.insert("scaledObject".into(), so.clone());
        }
    }
    let message = match &cause {
        Some(c) => format!("{}; restored: {}", c.message, describe(&containers)),
        None => format!("restored: {}", describe(&containers)),
    };
    AgentEvent {
        recommendation_id: Some(op.recommendation_id.clone()),
        strategy: Some(op.strategy),
        message: short(&message),
        containers,
        resources,
        details,
        ..base(op.event_id.clone(), now_ms, key, op.reason)
    }
}

/// The `released ModeChanged` event (`modes`: previous and new).
pub fn released(
    now_ms: i64,
    key: &WorkloadKey,
    id: String,
    strategy: Strategy,
    resources: Vec<EventResource>,
    message: &str,
    modes: (&str, &str),
) -> AgentEvent {
    let mut e = AgentEvent {
        strategy: Some(strategy),
        resources,
        message: short(message),
        ..base(id, now_ms, key, Reason::ModeChanged)
    };
    e.details.insert("previousMode".into(), modes.0.to_string());
    e.details.insert("newMode".into(), modes.1.to_string());
    e
}

/// A `fallback` to a rollout, or a `failed` change (`message` carries the API's answer).
pub fn outcome(
    now_ms: i64,
    key: &WorkloadKey,
    op: &Operation,
    reason: Reason,
    message: &str,
    details: BTreeMap<String, String>,
) -> AgentEvent {
    let (_, resources) = changes(&op.containers);
    let strategy = match reason.event_type() {
        EventType::Fallback => Some(Strategy::Rollout),
        _ => Some(op.strategy),
    };
    AgentEvent {
        recommendation_id: Some(op.recommendation_id.clone()),
        strategy,
        resources,
        message: short(message),
        details,
        ..base(new_id(now_ms), now_ms, key, reason)
    }
}

/// The Kubernetes Event recording `e` on the record `regarding`.
pub fn kubernetes(e: &AgentEvent, regarding: ObjectRef) -> ClusterEvent {
    let event_type = match e.event_type {
        EventType::Failed | EventType::RolledBack | EventType::Fallback => KubeEventType::Warning,
        _ => KubeEventType::Normal,
    };
    let action = match e.event_type {
        EventType::Applied => "Apply",
        EventType::Skipped => "Skip",
        EventType::Blocked => "Block",
        EventType::Fallback => "Fallback",
        EventType::RolledBack => "Rollback",
        EventType::Released => "Release",
        EventType::Failed => "Fail",
    };
    let note = e
        .message
        .clone()
        .unwrap_or_else(|| e.reason.as_str().to_string());
    ClusterEvent {
        regarding,
        event_type,
        reason: e.reason.as_str().into(),
        action: action.into(),
        // Kubernetes caps an Event's note at 1 KiB.
        note: note.chars().take(1000).collect(),
    }
}

#[cfg(test)]
mod kubernetes_tests {
    use super::*;

    /// What needs a person's attention in `kubectl get events` is a Warning: failures,
    /// rollbacks and fallbacks; the rest is Normal.
    #[test]
    fn failures_rollbacks_and_fallbacks_are_warnings_and_nothing_else_is() {
        let key = WorkloadKey::new("shop", crate::cluster::WorkloadKind::Deployment, "web");
        let regarding = ObjectRef {
            api_version: "kerf.getkerf.dev/v1alpha1".into(),
            kind: "RightsizingRecommendation".into(),
            namespace: "shop".into(),
            name: "deployment-web".into(),
            uid: None,
        };
        for reason in Reason::ALL {
            let e = base(new_id(1), 1, &key, reason);
            let want = match reason.event_type() {
                EventType::Failed | EventType::RolledBack | EventType::Fallback => {
                    KubeEventType::Warning
                }
                _ => KubeEventType::Normal,
            };
            assert_eq!(
                kubernetes(&e, regarding.clone()).event_type,
                want,
                "{reason:?}"
            );
        }
        let stalled = base(new_id(1), 1, &key, Reason::RolloutStalled);
        assert_eq!(
            kubernetes(&stalled, regarding).event_type,
            KubeEventType::Warning
        );
    }
}

#[cfg(test)]
mod id_tests {
    use super::new_id;

    #[test]
    fn event_ids_are_v7_uuids_carrying_the_event_time_and_sort_by_it() {
        let at = 1_800_000_123_456;
        let id = uuid::Uuid::parse_str(&new_id(at)).expect("a UUID");
        assert_eq!(id.get_version_num(), 7);
        let (secs, nanos) = id.get_timestamp().expect("v7 has a time").to_unix();
        assert_eq!(secs as i64 * 1000 + i64::from(nanos / 1_000_000), at);
        let (earlier, later) = (new_id(at), new_id(at + 1));
        assert!(earlier < later, "{earlier} sorts before {later}");
        assert_ne!(new_id(at), new_id(at), "same-millisecond ids still differ");
    }
}
