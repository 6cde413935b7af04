//! The cluster's VerticalPodAutoscalers through the API server: watched as
//! `DynamicObject`s of the `autoscaling.k8s.io/v1` CRD (kerf needs no VPA types), in
//! every namespace or in each of the agent's. A cluster without the CRD, or an agent
//! that may not list them, warns once and watches none.

use kube::api::{Api, DynamicObject};
use kube::core::{ApiResource, GroupVersionKind};
use kube::runtime::reflector::Store;
use kube::{Client, ResourceExt};
use serde_json::Value;

use crate::cluster::vpa::{Vpa, VPA_GROUP, VPA_KIND, VPA_PLURAL, VPA_VERSION};

pub fn resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(VPA_GROUP, VPA_VERSION, VPA_KIND),
        VPA_PLURAL,
    )
}

/// One API per namespace of `namespaces`, or one over all of them when it is empty.
pub fn apis(client: &Client, namespaces: &[String]) -> Vec<Api<DynamicObject>> {
    super::dynamic::apis(client, namespaces, &resource())
}

/// True when VPAs can be listed; says once why not.
pub async fn readable(api: &Api<DynamicObject>) -> bool {
    super::dynamic::readable(
        api,
        "no VerticalPodAutoscaler CRD in this cluster; kerf watches no VPA",
        "VerticalPodAutoscalers are not read: grant list and watch on verticalpodautoscalers.autoscaling.k8s.io in the agent's RBAC, or kerf may fight a VPA over the same workload",
    )
    .await
}

/// Every VPA the stores hold, by namespace and name.
pub fn all(stores: &[Store<DynamicObject>]) -> Vec<Vpa> {
    let mut out: Vec<Vpa> = stores
        .iter()
        .flat_map(|s| s.state())
        .map(|o| {
            let spec = o.data.get("spec").cloned().unwrap_or(Value::Null);
            Vpa::from_spec(&o.namespace().unwrap_or_default(), &o.name_any(), &spec)
        })
        .collect();
    out.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    out
}
