//! Other projects' custom resources the agent reads as `DynamicObject`s (the
//! VerticalPodAutoscaler's, Argo Rollouts'): their APIs over the namespaces in scope, and
//! whether the cluster has them and the agent may list them.

use kube::api::{Api, DynamicObject, ListParams};
use kube::core::ApiResource;
use kube::Client;

/// One API per namespace of `namespaces`, or one over all of them when it is empty.
pub fn apis(client: &Client, namespaces: &[String], r: &ApiResource) -> Vec<Api<DynamicObject>> {
    if namespaces.is_empty() {
        return vec![Api::all_with(client.clone(), r)];
    }
    namespaces
        .iter()
        .map(|ns| Api::namespaced_with(client.clone(), ns, r))
        .collect()
}

/// True when `api` can list; says once why not: `absent` when the cluster has no such
/// CRD (404), `forbidden` when the agent's RBAC does not grant it (403).
pub async fn readable(api: &Api<DynamicObject>, absent: &str, forbidden: &str) -> bool {
    match api.list(&ListParams::default().limit(1)).await {
        Err(kube::Error::Api(status)) if status.code == 404 => {
            tracing::info!("{absent}");
            false
        }
        Err(kube::Error::Api(status)) if status.code == 403 => {
            tracing::warn!(error = %status.message, "{forbidden}");
            false
        }
        _ => true,
    }
}
