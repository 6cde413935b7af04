//! A `RightsizingPolicy` object (`kerf.getkerf.dev/v1alpha1`, cluster-scoped, status
//! subresource) as the agent reads it: the policy document of docs/contracts/policy.md
//! in `spec` (its name is `metadata.name`), and the status the agent writes (whether the
//! hub took it, and what is wrong with it). The cluster layer keeps spec and status as
//! JSON; the agent judges them (`agent::cluster_policies`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::model::ObjectRef;

pub const POLICY_KIND: &str = "RightsizingPolicy";
pub const POLICY_PLURAL: &str = "rightsizingpolicies";

/// One RightsizingPolicy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolicyObject {
    pub name: String,
    pub uid: String,
    /// `metadata.generation`: bumped by each change of `spec`.
    pub generation: i64,
    /// `Null` when it has none.
    pub spec: Value,
    /// `Null` while it has none.
    pub status: Value,
}

impl PolicyObject {
    /// The object Kubernetes Events about this policy name (cluster-scoped: no
    /// namespace; its Events are recorded in `default`, as for nodes).
    pub fn object_ref(&self) -> ObjectRef {
        ObjectRef {
            api_version: super::record::API_VERSION.into(),
            kind: POLICY_KIND.into(),
            namespace: String::new(),
            name: self.name.clone(),
            uid: Some(self.uid.clone()),
        }
    }
}

/// Where Events about an object in `namespace` are recorded: its namespace, or
/// `default` for a cluster-scoped object.
pub fn events_namespace(namespace: &str) -> &str {
    if namespace.is_empty() {
        "default"
    } else {
        namespace
    }
}
