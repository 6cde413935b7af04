//! kerf's own objects in a cluster: one `RightsizingRecommendation`
//! (`kerf.getkerf.dev/v1alpha1`, namespaced, status subresource) per workload kerf
//! decides for, in the workload's namespace. Its spec names the workload and the
//! recommendation; its status is what the agent decided and did (phase, conditions,
//! the applied change) and what it must remember across restarts. The cluster layer
//! stores spec and status as JSON; their shapes belong to the agent.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::model::{ObjectRef, WorkloadKey};

pub const GROUP: &str = "kerf.getkerf.dev";
pub const VERSION: &str = "v1alpha1";
pub const API_VERSION: &str = "kerf.getkerf.dev/v1alpha1";
pub const KIND: &str = "RightsizingRecommendation";
pub const PLURAL: &str = "rightsizingrecommendations";

/// Label naming the workload's kind on its record.
pub const KIND_LABEL: &str = "kerf.getkerf.dev/workload-kind";
/// Label naming the workload on its record.
pub const NAME_LABEL: &str = "kerf.getkerf.dev/workload-name";

/// A RightsizingRecommendation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub namespace: String,
    pub name: String,
    /// Set by the API server; `None` before the first write.
    pub uid: Option<String>,
    pub labels: BTreeMap<String, String>,
    /// The workload it is about, as its owner: Kubernetes deletes the record with it.
    pub owner: Option<ObjectRef>,
    pub spec: serde_json::Value,
    /// `Null` while it has none.
    pub status: serde_json::Value,
}

impl Record {
    /// The record of `workload`: `<kind>-<name>` (lower-case kind), shortened with a
    /// hash when that would exceed an object name's 253 characters.
    pub fn name_for(workload: &WorkloadKey) -> String {
        let name = format!(
            "{}-{}",
            workload.kind.as_str().to_ascii_lowercase(),
            workload.name
        );
        if name.len() <= 253 {
            return name;
        }
        let hash = crate::fingerprint::fnv1a(name.as_bytes());
        format!("{}-{hash:016x}", &name[..236])
    }

    /// The object Kubernetes Events about this record name.
    pub fn object_ref(&self) -> ObjectRef {
        ObjectRef {
            api_version: API_VERSION.into(),
            kind: KIND.into(),
            namespace: self.namespace.clone(),
            name: self.name.clone(),
            uid: self.uid.clone(),
        }
    }
}
