//! The JSON a change sends: the pod spec's `containers` and `initContainers` entries
//! carrying new resources, for a server-side apply of a template and for a pod's
//! `resize` (strategic merge) alike.

use serde_json::{json, Value};

use crate::cluster::quantity::{format_cpu, format_memory};
use crate::cluster::{ContainerResources, ResourceField};

/// The pod spec carrying `changes`: app containers under `containers`, sidecars and
/// init containers under `initContainers` (a list left out when it has none).
pub fn pod_spec_patch(changes: &[ContainerResources], nulls: bool) -> Value {
    let (init, apps): (Vec<&ContainerResources>, Vec<&ContainerResources>) =
        changes.iter().partition(|c| c.role.in_init_list());
    let mut spec = serde_json::Map::new();
    if !init.is_empty() {
        spec.insert("initContainers".into(), container_patches(&init, nulls));
    }
    if !apps.is_empty() {
        spec.insert("containers".into(), container_patches(&apps, nulls));
    }
    Value::Object(spec)
}

/// The `resources` JSON for the `Some` fields of `changes`; with `nulls`, removed
/// fields are sent as `null` (a patch deletes them; an apply just leaves them out).
fn container_patches(changes: &[&ContainerResources], nulls: bool) -> Value {
    changes
        .iter()
        .map(|c| {
            let mut requests = serde_json::Map::new();
            let mut limits = serde_json::Map::new();
            for field in ResourceField::ALL {
                let Some(v) = c.resources.get(field) else {
                    continue;
                };
                let (group, resource) = field.path();
                let text = if resource == "cpu" {
                    format_cpu(v)
                } else {
                    format_memory(v)
                };
                let target = if group == "requests" {
                    &mut requests
                } else {
                    &mut limits
                };
                target.insert(resource.into(), Value::String(text));
            }
            for field in c.remove.iter().filter(|_| nulls) {
                let (group, resource) = field.path();
                let target = if group == "requests" {
                    &mut requests
                } else {
                    &mut limits
                };
                target.insert(resource.into(), Value::Null);
            }
            let mut resources = serde_json::Map::new();
            if !requests.is_empty() {
                resources.insert("requests".into(), Value::Object(requests));
            }
            if !limits.is_empty() {
                resources.insert("limits".into(), Value::Object(limits));
            }
            json!({ "name": c.container, "resources": resources })
        })
        .collect::<Vec<Value>>()
        .into()
}
