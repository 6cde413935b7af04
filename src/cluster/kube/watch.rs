//! The live view of a real cluster: one kube-rs reflector per kind (Deployments,
//! StatefulSets, DaemonSets, CronJobs, ReplicaSets, Jobs, Pods, HPAs, PDBs, ResourceQuotas, LimitRanges
//! per namespace in scope; Nodes), each a watch that relists and resumes on its own with backoff. Reading the
//! view converts what the stores hold into the cluster model; it makes no API call.
//!
//! Memory: pods dominate, so their `managedFields` and annotations are dropped as they
//! arrive (the agent reads neither); workloads and HPAs keep `managedFields` (who owns the
//! resources fields and the HPA targets).

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{StreamExt, TryStreamExt};
use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use k8s_openapi::api::batch::v1::{CronJob, Job};
use k8s_openapi::api::core::v1::{LimitRange, Node as KNode, Pod as KPod, ResourceQuota};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::serde::de::DeserializeOwned;
use kube::api::DynamicObject;
use kube::runtime::reflector::{self, Store};
use kube::runtime::{watcher, WatchStreamExt};
use kube::{Api, Client, Resource, ResourceExt};
use tokio::sync::Notify;

use super::converted::Converted;
use super::{convert, convert_admission};
use crate::cluster::{ClusterError, Snapshot, View};

/// What a quota or limit range the agent may not read costs.
const UNCHECKED: &str = "changes are not checked against them";

/// How long the first list of every kind may take.
const READY_WITHIN: Duration = Duration::from_secs(60);

/// One kind's stores (one per namespace in scope, or one for all).
struct Stores<K: Resource<DynamicType = ()> + Clone + 'static>(Vec<Store<K>>);

impl<K: Resource<DynamicType = ()> + Clone + 'static> Stores<K> {
    fn all(&self) -> Vec<Arc<K>> {
        self.0.iter().flat_map(|s| s.state()).collect()
    }
}

/// The live view; its watches stop when it is dropped.
pub struct KubeView {
    deployments: Stores<Deployment>,
    statefulsets: Stores<StatefulSet>,
    daemonsets: Stores<DaemonSet>,
    cronjobs: Stores<CronJob>,
    replicasets: Stores<ReplicaSet>,
    jobs: Stores<Job>,
    pods: Stores<KPod>,
    hpas: Stores<HorizontalPodAutoscaler>,
    pdbs: Stores<PodDisruptionBudget>,
    quotas: Stores<ResourceQuota>,
    limit_ranges: Stores<LimitRange>,
    nodes: Stores<KNode>,
    /// The cluster's RightsizingPolicies (`None`: the agent may not read them).
    policies: Option<Store<DynamicObject>>,
    /// The VerticalPodAutoscalers in scope (none: no CRD, or the agent may not read them).
    vpas: Vec<Store<DynamicObject>>,
    /// The Argo Rollouts in scope (none: no CRD, or the agent may not read them).
    rollouts: Vec<Store<DynamicObject>>,
    notify: Arc<Notify>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    /// Conversions kept from the last snapshot (`converted`).
    converted: Mutex<Conversions>,
}

/// The kinds whose conversions are kept: the many (workloads and pods). ReplicaSets,
/// HPAs, PDBs and nodes are converted on every snapshot.
#[derive(Default)]
struct Conversions {
    deployments: Converted<crate::cluster::Workload>,
    statefulsets: Converted<crate::cluster::Workload>,
    daemonsets: Converted<crate::cluster::Workload>,
    cronjobs: Converted<crate::cluster::Workload>,
    rollouts: Converted<crate::cluster::Workload>,
    pods: Converted<crate::cluster::Pod>,
}

impl Conversions {
    fn begin(&mut self) {
        self.deployments.begin();
        self.statefulsets.begin();
        self.daemonsets.begin();
        self.cronjobs.begin();
        self.rollouts.begin();
        self.pods.begin();
    }

    fn end(&mut self) {
        self.deployments.end();
        self.statefulsets.end();
        self.daemonsets.end();
        self.cronjobs.end();
        self.rollouts.end();
        self.pods.end();
    }
}

impl Drop for KubeView {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

/// What the watches share while starting: the change signal, the tasks, the last error.
struct Start {
    client: Client,
    namespaces: Vec<String>,
    notify: Arc<Notify>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    last_error: Arc<Mutex<Option<String>>>,
}

impl Start {
    /// Reflectors of kind `K` over the namespaces in scope, each `trim`med on arrival.
    fn reflect<K>(&mut self, trim: fn(&mut K)) -> Stores<K>
    where
        K: Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
            + Clone
            + DeserializeOwned
            + Debug
            + Send
            + Sync
            + 'static,
    {
        let apis = self.apis::<K>();
        Stores(apis.into_iter().map(|api| self.run(api, trim)).collect())
    }

    /// One API per namespace in scope, or one over all of them.
    fn apis<K>(&self) -> Vec<Api<K>>
    where
        K: Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>,
    {
        if self.namespaces.is_empty() {
            vec![Api::all(self.client.clone())]
        } else {
            self.namespaces
                .iter()
                .map(|ns| Api::namespaced(self.client.clone(), ns))
                .collect()
        }
    }

    /// As [`Start::reflect`], for a kind the agent's identity may not be granted (its
    /// RBAC before quotas and limit ranges were checked): a scope whose first list is
    /// refused with 403 is not watched, and says so once; the checks that read the kind
    /// then find nothing there.
    async fn reflect_readable<K>(
        &mut self,
        (what, without): (&str, &str),
        trim: fn(&mut K),
    ) -> Stores<K>
    where
        K: Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
            + Clone
            + DeserializeOwned
            + Debug
            + Send
            + Sync
            + 'static,
    {
        let apis = self.apis::<K>();
        let mut stores = Vec::new();
        for api in apis {
            let probe = api.list(&kube::api::ListParams::default().limit(1)).await;
            if let Err(kube::Error::Api(status)) = &probe {
                if status.code == 403 {
                    tracing::warn!(
                        kind = what,
                        error = %status.message,
                        "the agent may not list these; {without} (grant list and watch in its RBAC)"
                    );
                    continue;
                }
            }
            stores.push(self.run(api, trim));
        }
        Stores(stores)
    }

    fn run<K>(&mut self, api: Api<K>, trim: fn(&mut K)) -> Store<K>
    where
        K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    {
        self.run_with(api, reflector::store::Writer::default(), trim)
    }

    /// As [`Start::run`], for any kind (a custom resource's `DynamicObject`s too).
    fn run_with<K>(
        &mut self,
        api: Api<K>,
        writer: reflector::store::Writer<K>,
        trim: fn(&mut K),
    ) -> Store<K>
    where
        K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
        K::DynamicType: Clone + Eq + std::hash::Hash + Send + Sync,
    {
        let store = writer.as_reader();
        let stream = watcher(api, watcher::Config::default())
            .default_backoff()
            .map_ok(move |ev| ev.modify(trim));
        let (notify, last_error) = (self.notify.clone(), self.last_error.clone());
        self.tasks.push(tokio::spawn(async move {
            let mut events = std::pin::pin!(reflector::reflector(writer, stream));
            while let Some(event) = events.next().await {
                match event {
                    Ok(_) => notify.notify_waiters(),
                    Err(e) => {
                        *last_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(e.to_string())
                    }
                }
            }
        }));
        store
    }
}

fn keep_all<K>(_: &mut K) {}

fn trim_pod(p: &mut KPod) {
    p.managed_fields_mut().clear();
    p.annotations_mut().clear();
}

fn trim_meta<K: ResourceExt>(o: &mut K) {
    o.managed_fields_mut().clear();
}

/// A Job: only its metadata's owner is read (its CronJob); its spec holds a whole pod
/// template.
fn trim_job(j: &mut Job) {
    trim_meta(j);
    j.spec = None;
    j.status = None;
}

fn trim_dynamic(o: &mut DynamicObject) {
    o.metadata.managed_fields = None;
}

/// Starts the watches and waits for every first list.
pub async fn start(client: Client, namespaces: &[String]) -> Result<KubeView, ClusterError> {
    let mut s = Start {
        client: client.clone(),
        namespaces: namespaces.to_vec(),
        notify: Arc::new(Notify::new()),
        tasks: Vec::new(),
        last_error: Arc::new(Mutex::new(None)),
    };
    let deployments = s.reflect::<Deployment>(keep_all);
    let statefulsets = s.reflect::<StatefulSet>(keep_all);
    let daemonsets = s.reflect::<DaemonSet>(keep_all);
    let replicasets = s.reflect::<ReplicaSet>(trim_meta);
    let pods = s.reflect::<KPod>(trim_pod);
    let hpas = s.reflect::<HorizontalPodAutoscaler>(keep_all);
    let pdbs = s.reflect::<PodDisruptionBudget>(trim_meta);
    let quotas = s
        .reflect_readable::<ResourceQuota>(("ResourceQuota", UNCHECKED), trim_meta)
        .await;
    let limit_ranges = s
        .reflect_readable::<LimitRange>(("LimitRange", UNCHECKED), trim_meta)
        .await;
    // CronJobs where the agent may read them (its RBAC before 2026-12 did not grant it).
    let unwatched = "CronJobs are not rightsized";
    let cronjobs = s
        .reflect_readable::<CronJob>(("CronJob", unwatched), keep_all)
        .await;
    let jobs = s
        .reflect_readable::<Job>(("Job", unwatched), trim_job)
        .await;
    let nodes = Stores(vec![s.run(Api::<KNode>::all(client.clone()), trim_meta)]);
    let policies = if super::policies::readable(&client).await {
        let writer = reflector::store::Writer::new(super::policies::resource());
        Some(s.run_with(super::policies::api(&client), writer, trim_dynamic))
    } else {
        None
    };
    let vpa_apis = super::vpas::apis(&client, namespaces);
    let mut vpas = Vec::new();
    if super::vpas::readable(&vpa_apis[0]).await {
        for api in vpa_apis {
            let writer = reflector::store::Writer::new(super::vpas::resource());
            vpas.push(s.run_with(api, writer, trim_dynamic));
        }
    }
    let rollout_apis = super::argo::apis(&client, namespaces);
    let mut rollouts = Vec::new();
    if super::argo::readable(&rollout_apis[0]).await {
        for api in rollout_apis {
            // Kept whole: their managedFields say who owns the template's resources.
            let writer = reflector::store::Writer::new(super::argo::resource());
            rollouts.push(s.run_with(api, writer, keep_all));
        }
    }
    let view = KubeView {
        deployments,
        statefulsets,
        daemonsets,
        cronjobs,
        replicasets,
        jobs,
        pods,
        hpas,
        pdbs,
        quotas,
        limit_ranges,
        nodes,
        policies,
        vpas,
        rollouts,
        notify: s.notify,
        tasks: s.tasks,
        converted: Mutex::default(),
    };
    let ready = async {
        macro_rules! wait {
            ($($stores:expr),*) => {$(
                for store in &$stores.0 {
                    let _ = store.wait_until_ready().await;
                }
            )*};
        }
        wait!(
            view.deployments,
            view.statefulsets,
            view.daemonsets,
            view.cronjobs,
            view.replicasets,
            view.jobs,
            view.pods,
            view.hpas,
            view.pdbs,
            view.quotas,
            view.limit_ranges,
            view.nodes
        );
        if let Some(p) = &view.policies {
            let _ = p.wait_until_ready().await;
        }
        for v in view.vpas.iter().chain(&view.rollouts) {
            let _ = v.wait_until_ready().await;
        }
    };
    if tokio::time::timeout(READY_WITHIN, ready).await.is_err() {
        let why = s
            .last_error
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .unwrap_or_else(|| "no answer".into());
        return Err(ClusterError::Transport(format!(
            "the watches did not list within {}s: {why}",
            READY_WITHIN.as_secs()
        )));
    }
    Ok(view)
}

impl View for KubeView {
    fn snapshot(&self) -> Snapshot {
        let mut out = Snapshot::default();
        let mut kept = self.converted.lock().unwrap_or_else(|p| p.into_inner());
        let c = &mut *kept;
        c.begin();
        let any = |_: &crate::cluster::Workload| true;
        out.workloads.extend(
            self.deployments
                .all()
                .iter()
                .filter_map(|d| c.deployments.get(&**d, any, convert::deployment)),
        );
        out.workloads.extend(
            self.statefulsets
                .all()
                .iter()
                .filter_map(|s| c.statefulsets.get(&**s, any, convert::statefulset)),
        );
        out.workloads.extend(
            self.daemonsets
                .all()
                .iter()
                .filter_map(|d| c.daemonsets.get(&**d, any, convert::daemonset)),
        );
        out.workloads.extend(
            self.cronjobs
                .all()
                .iter()
                .filter_map(|j| c.cronjobs.get(&**j, any, super::cronjobs::workload)),
        );
        out.workloads.extend(
            self.rollouts
                .iter()
                .flat_map(|s| s.state())
                .filter_map(|r| c.rollouts.get(&*r, any, super::argo::workload)),
        );
        // ReplicaSet → Deployment or Rollout, Job → CronJob, per namespace.
        let mut owners: BTreeMap<String, convert::PodOwners> = BTreeMap::new();
        for rs in self.replicasets.all() {
            out.replica_sets.push(convert::replica_set(&rs));
            if let Some((name, owner)) = convert::replicaset_owner(&rs) {
                owners
                    .entry(rs.namespace().unwrap_or_default())
                    .or_default()
                    .insert(name, owner);
            }
        }
        for job in self.jobs.all() {
            if let Some((name, owner)) = convert::job_owner(&job) {
                owners
                    .entry(job.namespace().unwrap_or_default())
                    .or_default()
                    .insert(name, owner);
            }
        }
        let none = BTreeMap::new();
        out.pods.extend(self.pods.all().iter().filter_map(|p| {
            let ns = p.metadata.namespace.as_deref().unwrap_or_default();
            let rs_owners = owners.get(ns).unwrap_or(&none);
            c.pods.get(
                &**p,
                |cached| convert::same_pod_owner(p, cached, rs_owners),
                |p| Some(convert::pod(p, rs_owners)),
            )
        }));
        c.end();
        drop(kept);
        out.hpas
            .extend(self.hpas.all().iter().map(|h| convert::hpa(h)));
        out.pdbs
            .extend(self.pdbs.all().iter().map(|p| convert::pdb(p)));
        out.nodes
            .extend(self.nodes.all().iter().map(|n| convert::node(n)));
        out.admission = convert_admission::by_namespace(
            self.quotas
                .all()
                .iter()
                .map(|q| convert_admission::resource_quota(q)),
            self.limit_ranges
                .all()
                .iter()
                .map(|l| convert_admission::limit_range(l)),
        );
        if let Some(p) = &self.policies {
            out.policies = super::policies::all(p);
        }
        out.vpas = super::vpas::all(&self.vpas);

        out.workloads.sort_by(|a, b| a.key.cmp(&b.key));
        out
    }

    async fn changed(&self, at_most: Duration) {
        let _ = tokio::time::timeout(at_most, self.notify.notified()).await;
    }
}
