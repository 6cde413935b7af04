//! A workload's pod template through the API server, for each kind kerf changes: the
//! server-side apply of its containers' resources, and the release of kerf's ownership
//! of them. Where the template sits differs by kind (a CronJob's is under its job
//! template); what is sent does not.

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, StatefulSet};
use k8s_openapi::api::batch::v1::CronJob;
use kube::api::{Api, Patch};
use serde_json::{json, Value};

use super::{argo, convert, cronjobs, error, ownership, KubeCluster};
use crate::cluster::{ApplyMode, ClusterError, Workload, WorkloadKey, WorkloadKind};

impl KubeCluster {
    pub(super) async fn apply_template(
        &self,
        key: &WorkloadKey,
        pod_spec: Value,
        mode: ApplyMode,
    ) -> Result<Workload, ClusterError> {
        let api_version = match key.kind {
            WorkloadKind::Rollout => argo::API_VERSION,
            _ => "apps/v1",
        };
        let body = match key.kind {
            WorkloadKind::CronJob => cronjobs::apply_body(&key.namespace, &key.name, pod_spec),
            _ => json!({
                "apiVersion": api_version,
                "kind": key.kind.as_str(),
                "metadata": { "name": key.name, "namespace": key.namespace },
                "spec": { "template": { "spec": pod_spec } },
            }),
        };
        let pp = self.patch_params(mode);
        let patch = Patch::Apply(&body);
        let ns = &key.namespace;
        let c = self.client.clone();
        let unexpected = || ClusterError::Unexpected {
            object: key.to_string(),
            problem: "the API server returned a workload without a spec".into(),
        };
        match key.kind {
            WorkloadKind::Deployment => {
                let d = Api::<Deployment>::namespaced(c, ns)
                    .patch(&key.name, &pp, &patch)
                    .await;
                convert::deployment(&d.map_err(error)?).ok_or_else(unexpected)
            }
            WorkloadKind::StatefulSet => {
                let s = Api::<StatefulSet>::namespaced(c, ns)
                    .patch(&key.name, &pp, &patch)
                    .await;
                convert::statefulset(&s.map_err(error)?).ok_or_else(unexpected)
            }
            WorkloadKind::DaemonSet => {
                let d = Api::<DaemonSet>::namespaced(c, ns)
                    .patch(&key.name, &pp, &patch)
                    .await;
                convert::daemonset(&d.map_err(error)?).ok_or_else(unexpected)
            }
            WorkloadKind::Rollout => {
                let r = argo::api(&c, ns).patch(&key.name, &pp, &patch).await;
                argo::workload(&r.map_err(error)?).ok_or_else(unexpected)
            }
            WorkloadKind::CronJob => {
                let j = Api::<CronJob>::namespaced(c, ns)
                    .patch(&key.name, &pp, &patch)
                    .await;
                cronjobs::workload(&j.map_err(error)?).ok_or_else(unexpected)
            }
        }
    }

    /// Gives back kerf's ownership of `key`'s template resources (values kept).
    pub(super) async fn release_template(
        &self,
        key: &WorkloadKey,
    ) -> Result<Workload, ClusterError> {
        let (c, ns, m) = (self.client.clone(), &key.namespace, &self.manager);
        let unexpected = || ClusterError::Unexpected {
            object: key.to_string(),
            problem: "the API server returned a workload without a spec".into(),
        };
        match key.kind {
            WorkloadKind::Deployment => {
                let api = Api::<Deployment>::namespaced(c, ns);
                let d = ownership::release(&api, m, &key.name).await?;
                convert::deployment(&d).ok_or_else(unexpected)
            }
            WorkloadKind::StatefulSet => {
                let api = Api::<StatefulSet>::namespaced(c, ns);
                let s = ownership::release(&api, m, &key.name).await?;
                convert::statefulset(&s).ok_or_else(unexpected)
            }
            WorkloadKind::DaemonSet => {
                let api = Api::<DaemonSet>::namespaced(c, ns);
                let d = ownership::release(&api, m, &key.name).await?;
                convert::daemonset(&d).ok_or_else(unexpected)
            }
            WorkloadKind::Rollout => {
                let r = ownership::release(&argo::api(&c, ns), m, &key.name).await?;
                argo::workload(&r).ok_or_else(unexpected)
            }
            WorkloadKind::CronJob => {
                let api = Api::<CronJob>::namespaced(c, ns);
                let j = ownership::release(&api, m, &key.name).await?;
                cronjobs::workload(&j).ok_or_else(unexpected)
            }
        }
    }
}
