//! Field ownership kerf takes and gives back: the server-side apply of an HPA's metrics,
//! and the release of kerf's `Apply` entry in an object's `managedFields`.
//!
//! Release keeps the values. An apply of an empty configuration would also release
//! them, but the API server then removes every field nobody else owns; after kerf's
//! forced apply (which took the fields from whoever had them) that is all the
//! resources, and the pods would roll out without requests or limits until the GitOps
//! tool restores Git's values. Removing kerf's entry from `managedFields` (a patch the
//! field manager honours as given, guarded by the resourceVersion) leaves the values
//! unowned, so the next apply by any manager sets its own without a conflict.

use std::fmt::Debug;

use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::serde::de::DeserializeOwned;
use kube::api::{Api, Patch, PatchParams};
use kube::Resource;
use serde_json::{json, Value};

use super::{convert, error};
use crate::cluster::{ClusterError, Hpa, HpaMetric};

/// The `spec.metrics[]` entry of `m`.
fn metric_json(m: &HpaMetric) -> Value {
    let target = match m.target_utilization {
        Some(u) => json!({ "type": "Utilization", "averageUtilization": u }),
        None => json!({ "type": "Utilization" }),
    };
    let name = m.resource.clone().unwrap_or_default();
    match m.kind.as_str() {
        "ContainerResource" => json!({
            "type": "ContainerResource",
            "containerResource": { "name": name, "container": m.container, "target": target },
        }),
        _ => json!({ "type": "Resource", "resource": { "name": name, "target": target } }),
    }
}

/// Applies `metrics` as the whole of the HPA's `spec.metrics`, forced.
pub async fn apply_hpa_metrics(
    client: &kube::Client,
    manager: &str,
    namespace: &str,
    name: &str,
    metrics: &[HpaMetric],
) -> Result<Hpa, ClusterError> {
    let api: Api<HorizontalPodAutoscaler> = Api::namespaced(client.clone(), namespace);
    let body = json!({
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": { "name": name, "namespace": namespace },
        "spec": { "metrics": metrics.iter().map(metric_json).collect::<Vec<_>>() },
    });
    let h = api
        .patch(
            name,
            &PatchParams::apply(manager).force(),
            &Patch::Apply(&body),
        )
        .await
        .map_err(error)?;
    Ok(convert::hpa(&h))
}

/// Removes `manager`'s `Apply` entry from the object's `managedFields`, retrying when
/// the object moved meanwhile (409 on the resourceVersion: a controller writing status
/// during a rollout does that several times in a row), with a growing pause between
/// tries (at most about 3 s in all). Returns the object.
pub async fn release<K>(api: &Api<K>, manager: &str, name: &str) -> Result<K, ClusterError>
where
    K: Resource + Clone + DeserializeOwned + serde::Serialize + Debug,
{
    const TRIES: u64 = 8;
    let mut last = None;
    for attempt in 0..TRIES {
        if attempt > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(100 * attempt)).await;
        }
        let object = api.get(name).await.map_err(error)?;
        let meta = object.meta();
        let entries = meta.managed_fields.clone().unwrap_or_default();
        let keep: Vec<_> = entries
            .iter()
            .filter(|e| {
                !(e.manager.as_deref() == Some(manager) && e.operation.as_deref() == Some("Apply"))
            })
            .cloned()
            .collect();
        if keep.len() == entries.len() {
            return Ok(object);
        }
        // An empty list means "unchanged" to the API server; `[{}]` clears them.
        let fields = if keep.is_empty() {
            json!([{}])
        } else {
            serde_json::to_value(&keep).map_err(|e| ClusterError::Unexpected {
                object: name.into(),
                problem: e.to_string(),
            })?
        };
        let patch = json!({ "metadata": {
            "resourceVersion": meta.resource_version,
            "managedFields": fields,
        }});
        let pp = PatchParams {
            field_manager: Some(manager.to_string()),
            ..PatchParams::default()
        };
        match api.patch(name, &pp, &Patch::Merge(&patch)).await {
            Ok(o) => return Ok(o),
            Err(kube::Error::Api(s)) if s.code == 409 => last = Some(error(kube::Error::Api(s))),
            Err(e) => return Err(error(e)),
        }
    }
    Err(last.unwrap_or_else(|| ClusterError::Transport("release did not settle".into())))
}
