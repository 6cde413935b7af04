//! VerticalPodAutoscaler objects (`autoscaling.k8s.io/v1`), as far as kerf needs them:
//! which workload each targets and whether it acts on its pods. A VPA whose
//! `updatePolicy.updateMode` is anything but `Off` (`Auto`, `Recreate`, `Initial`,
//! `InPlaceOrRecreate`; unset means `Auto`) sets the requests itself, so kerf must not
//! change the same workload: the two would undo each other's work.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{WorkloadKey, WorkloadKind};

pub const VPA_GROUP: &str = "autoscaling.k8s.io";
pub const VPA_VERSION: &str = "v1";
pub const VPA_KIND: &str = "VerticalPodAutoscaler";
pub const VPA_PLURAL: &str = "verticalpodautoscalers";

/// One VerticalPodAutoscaler.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Vpa {
    pub namespace: String,
    pub name: String,
    /// The workload of `spec.targetRef` (a kind kerf rightsizes), if any.
    pub target: Option<WorkloadKey>,
    /// `spec.updatePolicy.updateMode`, `Auto` when unset (the VPA's own default).
    pub update_mode: String,
}

impl Vpa {
    /// The VPA of object `name` in `namespace` with `spec`.
    pub fn from_spec(namespace: &str, name: &str, spec: &Value) -> Vpa {
        let target_ref = &spec["targetRef"];
        let target = match (target_ref["kind"].as_str(), target_ref["name"].as_str()) {
            (Some(kind), Some(target)) => WorkloadKind::parse(kind).map(|kind| WorkloadKey {
                namespace: namespace.to_string(),
                kind,
                name: target.to_string(),
            }),
            _ => None,
        };
        Vpa {
            namespace: namespace.to_string(),
            name: name.to_string(),
            target,
            update_mode: spec["updatePolicy"]["updateMode"]
                .as_str()
                .unwrap_or("Auto")
                .to_string(),
        }
    }

    /// It sets the requests of its target's pods (any mode but `Off`).
    pub fn acts(&self) -> bool {
        self.update_mode != "Off"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_vpa_acts_unless_its_mode_is_off_and_unset_means_auto() {
        let spec =
            json!({"targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "api"}});
        let v = Vpa::from_spec("shop", "api-vpa", &spec);
        assert_eq!(v.update_mode, "Auto");
        assert!(v.acts());
        assert_eq!(v.target.as_ref().map(|k| k.name.as_str()), Some("api"));
        let off = json!({"targetRef": {"kind": "Deployment", "name": "api"}, "updatePolicy": {"updateMode": "Off"}});
        assert!(!Vpa::from_spec("shop", "v", &off).acts());
        // An Argo Rollout and a CronJob are workloads kerf changes too; a Job is not.
        let argo = json!({"targetRef": {"kind": "Rollout", "name": "api"}, "updatePolicy": {"updateMode": "Recreate"}});
        let target = Vpa::from_spec("shop", "v", &argo).target;
        assert_eq!(target.map(|k| k.kind), Some(WorkloadKind::Rollout));
        let cron = json!({"targetRef": {"kind": "CronJob", "name": "api"}, "updatePolicy": {"updateMode": "Initial"}});
        let target = Vpa::from_spec("shop", "v", &cron).target;
        assert_eq!(target.map(|k| k.kind), Some(WorkloadKind::CronJob));
        let other = json!({"targetRef": {"kind": "Job", "name": "api"}, "updatePolicy": {"updateMode": "Recreate"}});
        assert_eq!(Vpa::from_spec("shop", "v", &other).target, None);
    }
}
