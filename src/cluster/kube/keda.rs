//! KEDA `ScaledObject`s (`keda.sh/v1alpha1`) through the API server, as
//! `DynamicObject`s: the one change kerf makes is the utilization value of a CPU or
//! memory trigger, so that the HPA KEDA makes of it keeps today's scaling point when the
//! requests change. `spec.triggers` is an atomic list, so a server-side apply would take
//! every trigger over: the value is changed by a JSON patch instead, guarded by a `test`
//! of the value kerf read (a ScaledObject changed since is refused, not overwritten).

use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::{json, Value};

use super::error;
use crate::cluster::ClusterError;

pub fn resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("keda.sh", "v1alpha1", "ScaledObject"),
        "scaledobjects",
    )
}

/// The ScaledObjects API of one namespace.
pub fn api(client: &kube::Client, namespace: &str) -> Api<DynamicObject> {
    Api::namespaced_with(client.clone(), namespace, &resource())
}

/// The index of `so`'s utilization trigger of `resource` whose value is `value`.
fn trigger_at(so: &DynamicObject, resource: &str, value: &str) -> Option<usize> {
    let triggers = so.data["spec"]["triggers"].as_array()?;
    triggers.iter().position(|t| {
        t["type"] == resource
            && matches!(t["metricType"].as_str(), None | Some("Utilization"))
            && t["metadata"]["value"].as_str().map(str::trim) == Some(value)
    })
}

/// Moves ScaledObject `name`'s `resource` trigger from `from` to `to` percent.
pub async fn set_target(
    api: &Api<DynamicObject>,
    manager: &str,
    name: &str,
    resource: &str,
    (from, to): (i32, i32),
) -> Result<(), ClusterError> {
    let so = api.get(name).await.map_err(error)?;
    let (from, to) = (from.to_string(), to.to_string());
    // Already there (an earlier attempt made it, and the agent stopped before it noted so).
    if trigger_at(&so, resource, &to).is_some() {
        return Ok(());
    }
    let Some(i) = trigger_at(&so, resource, &from) else {
        return Err(ClusterError::Unexpected {
            object: format!("ScaledObject {name}"),
            problem: format!("it has no {resource} utilization trigger at {from} % any more"),
        });
    };
    let path = format!("/spec/triggers/{i}/metadata/value");
    let ops: Value = json!([
        { "op": "test", "path": path, "value": from },
        { "op": "replace", "path": path, "value": to },
    ]);
    let patch: json_patch::Patch =
        serde_json::from_value(ops).map_err(|e| ClusterError::Unexpected {
            object: format!("ScaledObject {name}"),
            problem: format!("the patch does not encode: {e}"),
        })?;
    let pp = PatchParams {
        field_manager: Some(manager.to_string()),
        ..PatchParams::default()
    };
    api.patch(name, &pp, &Patch::<()>::Json(patch))
        .await
        .map_err(error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn so(triggers: Value) -> DynamicObject {
        serde_json::from_value(json!({
            "apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject",
            "metadata": { "name": "api-so" },
            "spec": { "scaleTargetRef": { "name": "api" }, "triggers": triggers },
        }))
        .expect("scaled object")
    }

    #[test]
    fn the_trigger_changed_is_the_utilization_one_of_the_resource_at_the_value_read() {
        let s = so(json!([
            { "type": "prometheus", "metadata": { "value": "40" } },
            { "type": "cpu", "metricType": "AverageValue", "metadata": { "value": "40" } },
            { "type": "memory", "metadata": { "value": "40" } },
            { "type": "cpu", "metricType": "Utilization", "metadata": { "value": "40" } },
        ]));
        assert_eq!(trigger_at(&s, "cpu", "40"), Some(3));
        assert_eq!(
            trigger_at(&s, "memory", "40"),
            Some(2),
            "Utilization is the default"
        );
        assert_eq!(
            trigger_at(&s, "cpu", "55"),
            None,
            "changed since kerf read it"
        );
        assert_eq!(trigger_at(&so(json!([])), "cpu", "40"), None);
    }
}
