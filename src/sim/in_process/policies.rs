//! RightsizingPolicy objects in the simulated cluster, as the API server keeps them: a
//! create gets a uid and generation 1, a change of `spec` bumps the generation (a
//! status write does not), a delete removes the object.

use serde_json::Value;

use super::{SimCluster, State};
use crate::cluster::{ClusterError, PolicyObject};
use crate::sim::shape::Rng;

impl SimCluster {
    /// Creates the policy `name`, or replaces its `spec` (a new generation when the
    /// spec differs), as `kubectl apply` of the object would.
    pub fn put_policy(&self, name: &str, spec: Value) -> PolicyObject {
        self.world().put_policy(name, spec)
    }

    /// Adds `object` as it is (the demo's objects, whose uids are known beforehand).
    pub fn insert_policy(&self, object: PolicyObject) {
        self.world().policies.insert(object.name.clone(), object);
    }

    /// Deletes the policy `name`; false when there was none.
    pub fn delete_policy(&self, name: &str) -> bool {
        self.world().policies.remove(name).is_some()
    }

    /// The policy `name` as stored (its status included).
    pub fn policy(&self, name: &str) -> Option<PolicyObject> {
        self.world().policies.get(name).cloned()
    }
}

impl State {
    fn put_policy(&mut self, name: &str, spec: Value) -> PolicyObject {
        self.serial += 1;
        let uid = Rng::new(self.seed, &format!("policy/{name}/{}", self.serial)).uuid();
        let stored = self
            .policies
            .entry(name.to_string())
            .or_insert_with(|| PolicyObject {
                name: name.to_string(),
                uid,
                generation: 0,
                spec: Value::Null,
                status: Value::Null,
            });
        if stored.generation == 0 || stored.spec != spec {
            stored.generation += 1;
            stored.spec = spec;
        }
        stored.clone()
    }

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
