//! The kube-rs face of [`Cluster`]: each method is one or a few API calls, with the API
//! server's refusals kept whole in [`ClusterError::Api`]. Nothing here decides anything.

mod argo;
mod convert;
mod convert_admission;
mod convert_owner;
mod convert_rollout;
mod converted;
mod cronjobs;
mod dynamic;
mod keda;
mod kubelet;
mod ownership;
mod patches;
mod policies;
mod records;
mod templates;
mod vpas;
mod watch;

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::core::v1::{LimitRange, Node as KNode, Pod as KPod, ResourceQuota};
use k8s_openapi::api::events::v1::Event as KEvent;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::serde::de::DeserializeOwned;
use kube::api::{Api, EvictParams, ListParams, Patch, PatchParams, PostParams};
use kube::Client;
use serde_json::{json, Value};

use super::{
    ApiStatus, ApplyMode, Cause, Cluster, ClusterError, ClusterEvent, ContainerResources,
    CpuCounters, EventType, Hpa, HpaMetric, Node, ObjectRef, Pod, PodRef, RecordedEvent, Snapshot,
    UsageSample, Workload, WorkloadKey, WorkloadKind, FIELD_MANAGER,
};

pub use convert::pod_containers;
pub use kubelet::KubeletTls;
pub use watch::KubeView;

/// Node label naming the kubelet's CPU Manager policy (`static` disables in-place resize).
pub const CPU_MANAGER_LABEL: &str = "kerf.getkerf.dev/cpu-manager-policy";
/// Node label naming the kubelet's Memory Manager policy (`Static`).
pub const MEMORY_MANAGER_LABEL: &str = "kerf.getkerf.dev/memory-manager-policy";

/// A real cluster through kube-rs.
#[derive(Clone)]
pub struct KubeCluster {
    client: Client,
    manager: String,
    /// Clients of the nodes' kubelets (`None`: built without a config to make them).
    kubelets: Option<Arc<kubelet::Kubelets>>,
}

impl KubeCluster {
    /// A client for `config` that answers every refusal at once: kube-rs retries 429
    /// (and 503/504) by default, up to 15 times with backoff, which would turn a
    /// PodDisruptionBudget refusal of an eviction into a wait of many minutes. The agent
    /// decides its own retries.
    ///
    /// The kubelets (CPU throttling counters) are reached with the same credentials,
    /// their serving certificates trusted as `kubelet_tls` says.
    pub fn connect(
        mut config: kube::Config,
        kubelet_tls: KubeletTls,
    ) -> Result<KubeCluster, ClusterError> {
        config.default_retry = false;
        let client = Client::try_from(config.clone()).map_err(error)?;
        Ok(KubeCluster {
            kubelets: Some(Arc::new(kubelet::Kubelets::new(config, kubelet_tls))),
            ..KubeCluster::new(client)
        })
    }

    /// Writes as field manager `kerf`. Build `client` with `default_retry` off (see
    /// [`KubeCluster::connect`]) so 429s reach the caller. Without the config the
    /// kubelets cannot be reached (no throttling counters).
    pub fn new(client: Client) -> KubeCluster {
        KubeCluster {
            client,
            manager: FIELD_MANAGER.into(),
            kubelets: None,
        }
    }

    /// The same cluster writing as another field manager (tests play GitOps tools).
    pub fn with_field_manager(&self, manager: &str) -> KubeCluster {
        KubeCluster {
            manager: manager.into(),
            ..self.clone()
        }
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The kubelets' clients, or why there are none.
    fn kubelets(&self, node: &Node) -> Result<&kubelet::Kubelets, ClusterError> {
        self.kubelets
            .as_deref()
            .ok_or_else(|| ClusterError::Unexpected {
                object: format!("Node {}", node.name),
                problem: "this client was built without the config to reach kubelets".into(),
            })
    }

    async fn list<K>(&self, namespace: Option<&str>) -> Result<Vec<K>, ClusterError>
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>
            + Clone
            + DeserializeOwned
            + std::fmt::Debug,
        K::DynamicType: Default,
    {
        let api: Api<K> = match namespace {
            Some(ns) => Api::namespaced(self.client.clone(), ns),
            None => Api::all(self.client.clone()),
        };
        Ok(api.list(&ListParams::default()).await.map_err(error)?.items)
    }

    /// ReplicaSet name → its Deployment or Rollout, in `namespace`.
    async fn rs_owners(&self, namespace: &str) -> Result<convert::PodOwners, ClusterError> {
        Ok(self
            .list::<ReplicaSet>(Some(namespace))
            .await?
            .iter()
            .filter_map(convert::replicaset_owner)
            .collect())
    }

    /// Job name → its CronJob, in `namespace`.
    async fn job_owners(&self, namespace: &str) -> Result<convert::PodOwners, ClusterError> {
        Ok(self
            .list::<Job>(Some(namespace))
            .await?
            .iter()
            .filter_map(convert::job_owner)
            .collect())
    }

    /// The owners of pods controlled by a ReplicaSet or a Job in `namespace`.
    async fn owners_of(
        &self,
        meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
        namespace: &str,
    ) -> Result<convert::PodOwners, ClusterError> {
        match convert::controller(meta) {
            Some((kind, _)) if kind == "ReplicaSet" => self.rs_owners(namespace).await,
            Some((kind, _)) if kind == "Job" => self.job_owners(namespace).await,
            _ => Ok(BTreeMap::new()),
        }
    }

    async fn snapshot_of(&self, ns: Option<&str>, out: &mut Snapshot) -> Result<(), ClusterError> {
        out.workloads.extend(
            self.list::<Deployment>(ns)
                .await?
                .iter()
                .filter_map(|o| convert::deployment(o).map(Arc::new)),
        );
        out.workloads.extend(
            self.list::<StatefulSet>(ns)
                .await?
                .iter()
                .filter_map(|o| convert::statefulset(o).map(Arc::new)),
        );
        out.workloads.extend(
            self.list::<DaemonSet>(ns)
                .await?
                .iter()
                .filter_map(|o| convert::daemonset(o).map(Arc::new)),
        );
        out.workloads.extend(
            readable(self.list::<CronJob>(ns).await)?
                .iter()
                .filter_map(|o| cronjobs::workload(o).map(Arc::new)),
        );
        let mut owners: BTreeMap<String, convert::PodOwners> = BTreeMap::new();
        for r in self.list::<ReplicaSet>(ns).await? {
            out.replica_sets.push(convert::replica_set(&r));
            if let Some((name, owner)) = convert::replicaset_owner(&r) {
                let namespace = r.metadata.namespace.clone().unwrap_or_default();
                owners.entry(namespace).or_default().insert(name, owner);
            }
        }
        for j in readable(self.list::<Job>(ns).await)? {
            if let Some((name, owner)) = convert::job_owner(&j) {
                let namespace = j.metadata.namespace.clone().unwrap_or_default();
                owners.entry(namespace).or_default().insert(name, owner);
            }
        }
        let none = BTreeMap::new();
        for p in self.list::<KPod>(ns).await? {
            let pod_ns = p.metadata.namespace.as_deref().unwrap_or_default();
            let owners = owners.get(pod_ns).unwrap_or(&none);
            out.pods.push(Arc::new(convert::pod(&p, owners)));
        }
        out.hpas.extend(
            self.list::<HorizontalPodAutoscaler>(ns)
                .await?
                .iter()
                .map(convert::hpa),
        );
        out.pdbs.extend(
            self.list::<PodDisruptionBudget>(ns)
                .await?
                .iter()
                .map(convert::pdb),
        );
        // Quotas and limit ranges are checked only where the agent may read them (its
        // RBAC before 2026-12 did not grant it): a refusal leaves the namespace unchecked.
        let quotas = readable(self.list::<ResourceQuota>(ns).await)?;
        let limits = readable(self.list::<LimitRange>(ns).await)?;
        let admission = convert_admission::by_namespace(
            quotas.iter().map(convert_admission::resource_quota),
            limits.iter().map(convert_admission::limit_range),
        );
        out.admission.extend(admission);
        // Rollouts where the cluster has Argo's CRD (404: none) and the agent may list
        // them (403: none).
        let rollouts = argo::apis(
            &self.client,
            &ns.map(str::to_string).into_iter().collect::<Vec<_>>(),
        );
        match rollouts[0].list(&ListParams::default()).await {
            Ok(listed) => out.workloads.extend(
                listed
                    .items
                    .iter()
                    .filter_map(|o| argo::workload(o).map(Arc::new)),
            ),
            Err(kube::Error::Api(s)) if s.code == 404 || s.code == 403 => {}
            Err(e) => return Err(error(e)),
        }
        Ok(())
    }

    fn patch_params(&self, mode: ApplyMode) -> PatchParams {
        let mut pp = PatchParams::apply(&self.manager);
        if mode.force {
            pp = pp.force();
        }
        if mode.dry_run {
            pp = pp.dry_run();
        }
        pp
    }
}

/// kube-rs errors → cluster errors, keeping the API server's Status whole.
/// A list the agent's identity may not read (403) is an empty one.
fn readable<K>(listed: Result<Vec<K>, ClusterError>) -> Result<Vec<K>, ClusterError> {
    match listed {
        Err(e) if e.code() == Some(403) => Ok(Vec::new()),
        other => other,
    }
}

pub fn error(e: kube::Error) -> ClusterError {
    match e {
        kube::Error::Api(status) => ClusterError::Api(ApiStatus {
            code: status.code,
            reason: status.reason.clone(),
            message: status.message.clone(),
            causes: status
                .details
                .as_ref()
                .map(|d| {
                    d.causes
                        .iter()
                        .map(|c| Cause {
                            reason: c.reason.clone(),
                            field: c.field.clone(),
                            message: c.message.clone(),
                        })
                        .collect()
                })
                .unwrap_or_default(),
        }),
        other => ClusterError::Transport(other.to_string()),
    }
}

fn not_found_is_none<T>(r: Result<T, kube::Error>) -> Result<Option<T>, ClusterError> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(None),
        Err(e) => Err(error(e)),
    }
}

impl Cluster for KubeCluster {
    type View = KubeView;

    fn field_manager(&self) -> &str {
        &self.manager
    }

    async fn watch(&self, namespaces: &[String]) -> Result<KubeView, ClusterError> {
        watch::start(self.client.clone(), namespaces).await
    }

    async fn server_version(&self) -> Result<String, ClusterError> {
        Ok(self
            .client
            .apiserver_version()
            .await
            .map_err(error)?
            .git_version)
    }

    async fn records(&self, namespaces: &[String]) -> Result<Vec<super::Record>, ClusterError> {
        records::list(&self.client, namespaces).await
    }

    async fn apply_record(&self, record: &super::Record) -> Result<super::Record, ClusterError> {
        records::apply(&self.client, &self.manager, record).await
    }

    async fn apply_record_status(&self, record: &super::Record) -> Result<(), ClusterError> {
        records::apply_status(&self.client, &self.manager, record).await
    }

    async fn apply_policy_status(&self, name: &str, status: &Value) -> Result<(), ClusterError> {
        policies::apply_status(&self.client, &self.manager, name, status).await
    }

    async fn snapshot(&self, namespaces: &[String]) -> Result<Snapshot, ClusterError> {
        let mut out = Snapshot::default();
        if namespaces.is_empty() {
            self.snapshot_of(None, &mut out).await?;
        } else {
            for ns in namespaces {
                self.snapshot_of(Some(ns), &mut out).await?;
            }
        }
        let nodes: Api<KNode> = Api::all(self.client.clone());
        out.nodes = nodes
            .list(&ListParams::default())
            .await
            .map_err(error)?
            .items
            .iter()
            .map(convert::node)
            .collect();
        Ok(out)
    }

    async fn workload(&self, key: &WorkloadKey) -> Result<Option<Workload>, ClusterError> {
        let c = self.client.clone();
        let ns = &key.namespace;
        Ok(match key.kind {
            WorkloadKind::Deployment => {
                not_found_is_none(Api::<Deployment>::namespaced(c, ns).get(&key.name).await)?
                    .and_then(|d| convert::deployment(&d))
            }
            WorkloadKind::StatefulSet => {
                not_found_is_none(Api::<StatefulSet>::namespaced(c, ns).get(&key.name).await)?
                    .and_then(|s| convert::statefulset(&s))
            }
            WorkloadKind::DaemonSet => {
                not_found_is_none(Api::<DaemonSet>::namespaced(c, ns).get(&key.name).await)?
                    .and_then(|d| convert::daemonset(&d))
            }
            WorkloadKind::Rollout => not_found_is_none(argo::api(&c, ns).get(&key.name).await)?
                .and_then(|r| argo::workload(&r)),
            WorkloadKind::CronJob => {
                not_found_is_none(Api::<CronJob>::namespaced(c, ns).get(&key.name).await)?
                    .and_then(|j| cronjobs::workload(&j))
            }
        })
    }

    async fn pod(&self, pod: &PodRef) -> Result<Option<Pod>, ClusterError> {
        let api: Api<KPod> = Api::namespaced(self.client.clone(), &pod.namespace);
        let Some(p) = not_found_is_none(api.get(&pod.name).await)? else {
            return Ok(None);
        };
        let owners = self.owners_of(&p.metadata, &pod.namespace).await?;
        Ok(Some(convert::pod(&p, &owners)))
    }

    async fn resize_pod(
        &self,
        pod: &PodRef,
        changes: &[ContainerResources],
    ) -> Result<Pod, ClusterError> {
        let api: Api<KPod> = Api::namespaced(self.client.clone(), &pod.namespace);
        let patch = json!({ "spec": patches::pod_spec_patch(changes, true) });
        let pp = PatchParams {
            field_manager: Some(self.manager.clone()),
            ..PatchParams::default()
        };
        let p = api
            .patch_resize(&pod.name, &pp, &Patch::Strategic(&patch))
            .await
            .map_err(error)?;
        let owners = self.owners_of(&p.metadata, &pod.namespace).await?;
        Ok(convert::pod(&p, &owners))
    }

    async fn apply_template_resources(
        &self,
        key: &WorkloadKey,
        changes: &[ContainerResources],
        mode: ApplyMode,
    ) -> Result<Workload, ClusterError> {
        self.apply_template(key, patches::pod_spec_patch(changes, false), mode)
            .await
    }

    async fn release_template_resources(
        &self,
        key: &WorkloadKey,
    ) -> Result<Workload, ClusterError> {
        self.release_template(key).await
    }

    async fn apply_hpa_metrics(
        &self,
        namespace: &str,
        name: &str,
        metrics: &[HpaMetric],
    ) -> Result<Hpa, ClusterError> {
        ownership::apply_hpa_metrics(&self.client, &self.manager, namespace, name, metrics).await
    }

    async fn release_hpa(&self, namespace: &str, name: &str) -> Result<(), ClusterError> {
        let api = Api::<HorizontalPodAutoscaler>::namespaced(self.client.clone(), namespace);
        ownership::release(&api, &self.manager, name).await?;
        Ok(())
    }

    async fn set_scaled_object_target(
        &self,
        namespace: &str,
        name: &str,
        resource: &str,
        targets: (i32, i32),
    ) -> Result<(), ClusterError> {
        let api = keda::api(&self.client, namespace);
        keda::set_target(&api, &self.manager, name, resource, targets).await
    }

    async fn cpu_counters(&self, node: &Node) -> Result<Vec<CpuCounters>, ClusterError> {
        self.kubelets(node)?.cpu_counters(node).await
    }

    async fn usage(
        &self,
        node: &Node,
        scraped_at_ms: i64,
    ) -> Result<Vec<UsageSample>, ClusterError> {
        self.kubelets(node)?.usage(node, scraped_at_ms).await
    }

    async fn evict(&self, pod: &PodRef) -> Result<(), ClusterError> {
        let api: Api<KPod> = Api::namespaced(self.client.clone(), &pod.namespace);
        api.evict(&pod.name, &EvictParams::default())
            .await
            .map_err(error)?;
        Ok(())
    }

    async fn record_event(&self, event: &ClusterEvent) -> Result<(), ClusterError> {
        let r = &event.regarding;
        let ns = crate::cluster::policy_object::events_namespace(&r.namespace);
        let api: Api<KEvent> = Api::namespaced(self.client.clone(), ns);
        let now = k8s_openapi::jiff::Timestamp::now();
        let body: KEvent = serde_json::from_value(json!({
            "metadata": { "generateName": format!("{}-", r.name) },
            "eventTime": now.to_string(),
            "reportingController": "getkerf.dev/kerf",
            "reportingInstance": self.manager,
            "action": event.action,
            "reason": event.reason,
            "note": event.note,
            "type": match event.event_type { EventType::Normal => "Normal", EventType::Warning => "Warning" },
            "regarding": {
                "apiVersion": r.api_version, "kind": r.kind, "namespace": r.namespace,
                "name": r.name, "uid": r.uid,
            },
        }))
        .map_err(|e| ClusterError::Unexpected {
            object: format!("Event about {}/{}", r.kind, r.name),
            problem: e.to_string(),
        })?;
        api.create(&PostParams::default(), &body)
            .await
            .map_err(error)?;
        Ok(())
    }

    async fn events(&self, regarding: &ObjectRef) -> Result<Vec<RecordedEvent>, ClusterError> {
        let ns = crate::cluster::policy_object::events_namespace(&regarding.namespace);
        let api: Api<KEvent> = Api::namespaced(self.client.clone(), ns);
        let selector = format!(
            "regarding.kind={},regarding.name={}",
            regarding.kind, regarding.name
        );
        let mut items = api
            .list(&ListParams::default().fields(&selector))
            .await
            .map_err(error)?
            .items;
        items.sort_by_key(|e| e.event_time.as_ref().map(|t| t.0));
        Ok(items
            .into_iter()
            .map(|e| RecordedEvent {
                event: ClusterEvent {
                    regarding: regarding.clone(),
                    event_type: if e.type_.as_deref() == Some("Warning") {
                        EventType::Warning
                    } else {
                        EventType::Normal
                    },
                    reason: e.reason.unwrap_or_default(),
                    action: e.action.unwrap_or_default(),
                    note: e.note.unwrap_or_default(),
                },
                reporting_controller: e.reporting_controller.unwrap_or_default(),
            })
            .collect())
    }
}
