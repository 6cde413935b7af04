//! kerf's RightsizingRecommendations through the API server: listed, applied
//! (server-side apply as kerf, forced: kerf owns its records) and their status replaced
//! through the status subresource, as `DynamicObject`s of the CRD in
//! `packaging/k8s/crds.yaml`.

use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams};
use kube::core::{ApiResource, GroupVersionKind};
use kube::{Client, ResourceExt};
use serde_json::{json, Value};

use super::error;
use crate::cluster::record::{self, Record};
use crate::cluster::ClusterError;

fn resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(record::GROUP, record::VERSION, record::KIND),
        record::PLURAL,
    )
}

fn api(client: &Client, namespace: Option<&str>) -> Api<DynamicObject> {
    let ar = resource();
    match namespace {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &ar),
        None => Api::all_with(client.clone(), &ar),
    }
}

fn from_object(o: DynamicObject) -> Record {
    Record {
        namespace: o.namespace().unwrap_or_default(),
        name: o.name_any(),
        uid: o.uid(),
        labels: o.labels().clone(),
        owner: o
            .owner_references()
            .first()
            .map(|r| crate::cluster::ObjectRef {
                api_version: r.api_version.clone(),
                kind: r.kind.clone(),
                namespace: o.namespace().unwrap_or_default(),
                name: r.name.clone(),
                uid: Some(r.uid.clone()),
            }),
        spec: o.data.get("spec").cloned().unwrap_or(Value::Null),
        status: o.data.get("status").cloned().unwrap_or(Value::Null),
    }
}

pub async fn list(client: &Client, namespaces: &[String]) -> Result<Vec<Record>, ClusterError> {
    let mut out = Vec::new();
    let scopes: Vec<Option<&str>> = if namespaces.is_empty() {
        vec![None]
    } else {
        namespaces.iter().map(|n| Some(n.as_str())).collect()
    };
    for ns in scopes {
        let list = api(client, ns)
            .list(&ListParams::default())
            .await
            .map_err(error)?;
        out.extend(list.items.into_iter().map(from_object));
    }
    Ok(out)
}

pub async fn apply(client: &Client, manager: &str, r: &Record) -> Result<Record, ClusterError> {
    let mut body = json!({
        "apiVersion": record::API_VERSION,
        "kind": record::KIND,
        "metadata": { "name": r.name, "namespace": r.namespace, "labels": r.labels },
        "spec": r.spec,
    });
    if let Some(o) = r.owner.as_ref().filter(|o| o.uid.is_some()) {
        body["metadata"]["ownerReferences"] = json!([{
            "apiVersion": o.api_version, "kind": o.kind, "name": o.name, "uid": o.uid,
        }]);
    }
    let pp = PatchParams::apply(manager).force();
    let o = api(client, Some(&r.namespace))
        .patch(&r.name, &pp, &Patch::Apply(&body))
        .await
        .map_err(error)?;
    Ok(from_object(o))
}

pub async fn apply_status(client: &Client, manager: &str, r: &Record) -> Result<(), ClusterError> {
    let body = json!({
        "apiVersion": record::API_VERSION,
        "kind": record::KIND,
        "metadata": { "name": r.name, "namespace": r.namespace },
        "status": r.status,
    });
    let pp = PatchParams::apply(manager).force();
    api(client, Some(&r.namespace))
        .patch_status(&r.name, &pp, &Patch::Apply(&body))
        .await
        .map_err(error)?;
    Ok(())
}
