//! RightsizingPolicy objects in the simulated cluster (the demo's, `sim::git_policies`):
//! held as given, their status written through the status subresource's equivalent;
//! and the other objects kerf reads beside them (VerticalPodAutoscalers).

use serde_json::Value;

use super::{SimCluster, State};
use crate::cluster::{ClusterError, PolicyObject};

impl SimCluster {
    /// Adds `object` as it is (the demo's objects, whose uids are known beforehand).
    pub fn insert_policy(&self, object: PolicyObject) {
        self.world().policies.insert(object.name.clone(), object);
    }

    /// Adds a VerticalPodAutoscaler (a cluster whose VPA acts on a workload kerf would
    /// change).
    pub fn insert_vpa(&self, vpa: crate::cluster::Vpa) {
        self.world().vpas.push(vpa);
    }
}

impl State {
    pub(super) fn apply_policy_status(
        &mut self,
        name: &str,
        status: &Value,
    ) -> Result<(), ClusterError> {
        let stored = self.policies.get_mut(name).ok_or_else(|| {
            ClusterError::api(
                404,
                "NotFound",
                format!("rightsizingpolicies.kerf.getkerf.dev \"{name}\" not found"),
            )
        })?;
        stored.status = status.clone();
        Ok(())
    }
}
