//! One workload's identity, the one every part of kerf names a workload by: namespace,
//! kind and name. The kind is open text where kerf reads kinds it does not change
//! (Prometheus's owners, agents' events, the store's rows: `WorkloadKey`), or one of the
//! controller kinds the agent rightsizes (`WorkloadKey<WorkloadKind>`, the cluster
//! side's); a typed key converts to a text one, a text one to a typed one if its kind is
//! one of them. Serialized as `{namespace, kind, name}` and nothing else.

use std::fmt;

use serde::{Deserialize, Serialize};

mod container_role;

pub use container_role::{effective_pod_value, ContainerRole};

/// The controllers kerf rightsizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum WorkloadKind {
    Deployment,
    StatefulSet,
    DaemonSet,
    /// An Argo Rollout (`argoproj.io/v1alpha1`): a Deployment's shape, its pods run by
    /// Argo's controller through a ReplicaSet per revision.
    Rollout,
    /// A CronJob (`batch/v1`): its pod template is `spec.jobTemplate.spec.template`, and
    /// a change takes effect at its next run (no pod is replaced).
    CronJob,
}

impl WorkloadKind {
    pub fn as_str(self) -> &'static str {
        match self {
            WorkloadKind::Deployment => "Deployment",
            WorkloadKind::StatefulSet => "StatefulSet",
            WorkloadKind::DaemonSet => "DaemonSet",
            WorkloadKind::Rollout => "Rollout",
            WorkloadKind::CronJob => "CronJob",
        }
    }

    pub fn parse(kind: &str) -> Option<WorkloadKind> {
        match kind {
            "Deployment" => Some(WorkloadKind::Deployment),
            "StatefulSet" => Some(WorkloadKind::StatefulSet),
            "DaemonSet" => Some(WorkloadKind::DaemonSet),
            "Rollout" => Some(WorkloadKind::Rollout),
            "CronJob" => Some(WorkloadKind::CronJob),
            _ => None,
        }
    }
}

impl fmt::Display for WorkloadKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Names one workload: namespace, kind, name (how hub, agent and datasource match).
/// Ordered by namespace, then kind, then name.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadKey<K = String> {
    pub namespace: String,
    pub kind: K,
    pub name: String,
}

impl<K> WorkloadKey<K> {
    pub fn new(namespace: &str, kind: K, name: &str) -> WorkloadKey<K> {
        WorkloadKey {
            namespace: namespace.into(),
            kind,
            name: name.into(),
        }
    }
}

impl WorkloadKey {
    /// The key of a workload of one of the kinds the agent changes, if it is one.
    pub fn typed(&self) -> Option<WorkloadKey<WorkloadKind>> {
        let kind = WorkloadKind::parse(&self.kind)?;
        Some(WorkloadKey::new(&self.namespace, kind, &self.name))
    }
}

impl From<WorkloadKey<WorkloadKind>> for WorkloadKey {
    fn from(key: WorkloadKey<WorkloadKind>) -> WorkloadKey {
        WorkloadKey {
            namespace: key.namespace,
            kind: key.kind.as_str().to_string(),
            name: key.name,
        }
    }
}

impl From<&WorkloadKey<WorkloadKind>> for WorkloadKey {
    fn from(key: &WorkloadKey<WorkloadKind>) -> WorkloadKey {
        WorkloadKey::new(&key.namespace, key.kind.as_str().to_string(), &key.name)
    }
}

/// `namespace/kind/name`, as errors and logs name a workload.
impl<K: fmt::Display> fmt::Display for WorkloadKey<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}", self.namespace, self.kind, self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_reads_the_same_typed_or_as_text() {
        let typed = WorkloadKey::new("shop", WorkloadKind::StatefulSet, "db");
        let text = WorkloadKey::from(&typed);
        assert_eq!(
            text,
            WorkloadKey::new("shop", "StatefulSet".to_string(), "db")
        );
        assert_eq!(text.typed(), Some(typed.clone()));
        assert_eq!(
            (typed.to_string(), text.to_string()),
            ("shop/StatefulSet/db".into(), "shop/StatefulSet/db".into())
        );
        assert_eq!(
            WorkloadKey::new("shop", "ReplicaSet".to_string(), "x").typed(),
            None
        );
        // One wire shape, either way, and nothing else in it.
        let json = serde_json::json!({"namespace": "shop", "kind": "StatefulSet", "name": "db"});
        assert_eq!(serde_json::to_value(&typed).expect("json"), json);
        assert_eq!(serde_json::to_value(&text).expect("json"), json);
        let extra =
            serde_json::json!({"namespace": "a", "kind": "Deployment", "name": "b", "uid": "u"});
        assert!(serde_json::from_value::<WorkloadKey>(extra).is_err());
    }
}
