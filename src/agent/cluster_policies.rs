//! The cluster's RightsizingPolicy objects, kept in step: each generation is judged
//! once (the policy document, `policy::from_cluster`, the same judgment the hub makes)
//! and says so on the object — its status (`observedGeneration`, `acceptedGeneration`,
//! the `Accepted` condition) and one Kubernetes Event (`Warning InvalidPolicy` with
//! every problem, or `Normal PolicyAccepted`) — and the whole set goes to the hub
//! whenever it changes (and once after start), which takes the valid ones into every
//! affected workload's effective policy. An invalid generation changes nothing: the
//! last valid generation of the object stays in force.

use std::collections::HashMap;

use serde_json::{json, Value};

use super::hub::{Hub, HubError};
use crate::cluster::{Cluster, ClusterEvent, EventType, PolicyObject};
use crate::policy::from_cluster::{document_of, summary};
use crate::wire::cluster_policies::{ClusterPolicies, ClusterPolicyObject};

/// Longest Event note the API server takes is 1 KiB; longer problem lists are cut.
const NOTE_CHARS: usize = 1000;

/// What the agent remembers of the objects between passes.
#[derive(Debug, Default)]
pub struct PolicySync {
    /// The report the hub last took (or refused for good), `None` since start.
    sent: Option<ClusterPolicies>,
    /// The generation whose status was written, by uid.
    judged: HashMap<String, i64>,
}

/// The report of `objects`.
fn report_of(objects: &[PolicyObject]) -> ClusterPolicies {
    ClusterPolicies {
        policies: objects
            .iter()
            .map(|o| ClusterPolicyObject {
                name: o.name.clone(),
                uid: o.uid.clone(),
                generation: o.generation,
                spec: o.spec.clone(),
            })
            .collect(),
    }
}

/// The verdict on `o`: its status and Event.
pub fn verdict(o: &PolicyObject, now_ms: i64) -> (Value, ClusterEvent) {
    let time = crate::timestamp::format_ms(now_ms);
    let (accepted, (status, why), event_type, reason, note) = match document_of(&o.name, &o.spec) {
        Ok(_) => {
            let note = format!("generation {} is in force", o.generation);
            (
                Some(o.generation),
                ("True", "Valid"),
                EventType::Normal,
                "PolicyAccepted",
                note,
            )
        }
        Err(errors) => {
            let before = o.status["acceptedGeneration"].as_i64();
            let kept = match before {
                Some(g) => format!("generation {g} stays in force"),
                None => "the policy changes nothing until it is valid".into(),
            };
            let note = format!("{}; {kept}", summary(&errors));
            (
                before,
                ("False", "InvalidSpec"),
                EventType::Warning,
                "InvalidPolicy",
                note,
            )
        }
    };
    let condition = json!({
        "type": "Accepted", "status": status, "reason": why, "message": note,
        "lastTransitionTime": time, "observedGeneration": o.generation,
    });
    let mut status = json!({
        "observedGeneration": o.generation,
        "conditions": [condition],
    });
    if let Some(g) = accepted {
        status["acceptedGeneration"] = json!(g);
    }
    let event = ClusterEvent {
        regarding: o.object_ref(),
        event_type,
        reason: reason.into(),
        action: "Validate".into(),
        note: note.chars().take(NOTE_CHARS).collect(),
    };
    (status, event)
}

impl PolicySync {
    /// Judges each generation not judged yet and, when the hub answered this pass
    /// (`hub_reachable`), reports the set if it changed since the hub last took it.
    pub async fn sync<C: Cluster, H: Hub>(
        &mut self,
        cluster: &C,
        hub: &H,
        objects: &[PolicyObject],
        hub_reachable: bool,
        now_ms: i64,
    ) {
        self.judged
            .retain(|uid, _| objects.iter().any(|o| &o.uid == uid));
        for o in objects {
            let seen = self.judged.get(&o.uid) == Some(&o.generation)
                || o.status["observedGeneration"].as_i64() == Some(o.generation);
            if seen {
                self.judged.insert(o.uid.clone(), o.generation);
                continue;
            }
            let (status, event) = verdict(o, now_ms);
            if let Err(e) = cluster.apply_policy_status(&o.name, &status).await {
                tracing::warn!(policy = %o.name, error = %e, "the RightsizingPolicy's status was not written; trying again next pass");
                continue;
            }
            if let Err(e) = cluster.record_event(&event).await {
                tracing::warn!(policy = %o.name, error = %e, "the RightsizingPolicy's Event was not recorded");
            }
            self.judged.insert(o.uid.clone(), o.generation);
        }
        if !hub_reachable {
            return;
        }
        let report = report_of(objects);
        if self.sent.as_ref() == Some(&report) {
            return;
        }
        match hub.report_policies(&report).await {
            Ok(_) => self.sent = Some(report),
            Err(HubError::Unreachable(e)) => {
                tracing::warn!(error = %e, "the cluster's RightsizingPolicies did not reach the hub; trying again next pass");
            }
            Err(e) => {
                // Not something a retry mends (an older hub, a refused report): say it
                // once per change of the set.
                tracing::warn!(error = %e, "the hub did not take the cluster's RightsizingPolicies");
                self.sent = Some(report);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(generation: i64, spec: Value, status: Value) -> PolicyObject {
        PolicyObject {
            name: "web".into(),
            uid: "u1".into(),
            generation,
            spec,
            status,
        }
    }

    #[test]
    fn a_valid_generation_is_accepted_and_an_invalid_one_says_what_stays_in_force() {
        let (status, event) = verdict(&object(2, json!({"priority": 1}), Value::Null), 0);
        assert_eq!(status["acceptedGeneration"], 2);
        assert_eq!(status["conditions"][0]["status"], "True");
        assert_eq!(event.event_type, EventType::Normal);
        let bad = json!({"mode": {"cpu": "always"}});
        let (status, event) = verdict(&object(3, bad.clone(), status), 0);
        assert_eq!(status["observedGeneration"], 3);
        assert_eq!(status["acceptedGeneration"], 2);
        assert_eq!(status["conditions"][0]["reason"], "InvalidSpec");
        assert_eq!(event.event_type, EventType::Warning);
        assert_eq!(event.reason, "InvalidPolicy");
        assert!(
            event.note.starts_with("spec.mode.cpu: unknown variant"),
            "{}",
            event.note
        );
        assert!(
            event.note.ends_with("generation 2 stays in force"),
            "{}",
            event.note
        );
        let (status, event) = verdict(&object(1, bad, Value::Null), 0);
        assert!(status.get("acceptedGeneration").is_none());
        assert!(event
            .note
            .ends_with("the policy changes nothing until it is valid"));
    }
}
