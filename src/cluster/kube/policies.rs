//! The cluster's RightsizingPolicy objects through the API server: watched (cluster-
//! scoped `DynamicObject`s of the CRD in `packaging/k8s/crds.yaml`) and their status
//! replaced through the status subresource. An agent that may not list them (an older
//! ClusterRole), or a cluster without the CRD, warns once and watches none.

use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams};
use kube::core::{ApiResource, GroupVersionKind};
use kube::runtime::reflector::Store;
use kube::{Client, ResourceExt};
use serde_json::{json, Value};

use super::error;
use crate::cluster::policy_object::{PolicyObject, POLICY_KIND, POLICY_PLURAL};
use crate::cluster::record::{API_VERSION, GROUP, VERSION};
use crate::cluster::ClusterError;

pub fn resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(GROUP, VERSION, POLICY_KIND),
        POLICY_PLURAL,
    )
}

pub fn api(client: &Client) -> Api<DynamicObject> {
    Api::all_with(client.clone(), &resource())
}

/// True when the policies can be listed; says once why not.
pub async fn readable(client: &Client) -> bool {
    match api(client).list(&ListParams::default().limit(1)).await {
        Err(kube::Error::Api(status)) if status.code == 403 || status.code == 404 => {
            tracing::warn!(
                error = %status.message,
                "RightsizingPolicy objects are not read: grant list and watch on rightsizingpolicies in the agent's RBAC, and apply packaging/k8s/crds.yaml"
            );
            false
        }
        // Anything else (a passing failure) is the watch's to retry.
        _ => true,
    }
}

/// What a watched object says.
pub fn object(o: &DynamicObject) -> PolicyObject {
    PolicyObject {
        name: o.name_any(),
        uid: o.uid().unwrap_or_default(),
        generation: o.metadata.generation.unwrap_or(0),
        spec: o.data.get("spec").cloned().unwrap_or(Value::Null),
        status: o.data.get("status").cloned().unwrap_or(Value::Null),
    }
}

/// Every object a store holds, by name.
pub fn all(store: &Store<DynamicObject>) -> Vec<PolicyObject> {
    let mut out: Vec<PolicyObject> = store.state().iter().map(|o| object(o)).collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

pub async fn apply_status(
    client: &Client,
    manager: &str,
    name: &str,
    status: &Value,
) -> Result<(), ClusterError> {
    let body = json!({
        "apiVersion": API_VERSION,
        "kind": POLICY_KIND,
        "metadata": { "name": name },
        "status": status,
    });
    let pp = PatchParams::apply(manager).force();
    api(client)
        .patch_status(name, &pp, &Patch::Apply(&body))
        .await
        .map_err(error)?;
    Ok(())
}
