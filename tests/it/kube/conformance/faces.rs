//! The two faces the scenarios run on: the real control plane with the sim kubelet
//! (through the kube-rs adapter, as the agent's identity), and the in-process sim.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::{Deployment, StatefulSet};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kerf::clock::ManualClock;
use kerf::cluster::kube::KubeCluster;
use kerf::cluster::quantity::{format_cpu, format_memory};
use kerf::cluster::{
    Cluster, Container, Node, ResizePolicy, Resources, RestartPolicy, UpdateStrategy, WorkloadKey,
    WorkloadKind,
};
use kerf::sim::api_kubelet::ApiKubelet;
use kerf::sim::in_process::{SimCluster, WorkloadSpec};
use kerf::sim::kubelet::{Usage, USAGE_ANNOTATION};
use kube::api::{Api, PostParams};

use crate::support::kube::objects::POOL_LABEL;
use crate::support::kube::{control_plane, namespace, TestNamespace};

/// Who creates the test's objects (a plain create: owner of the fields it sets).
pub const CREATOR: &str = "kerf-test-fixture";

/// One Deployment of one `app` container.
#[derive(Clone)]
pub struct Deploy {
    pub kind: WorkloadKind,
    /// StatefulSets: `updateStrategy: OnDelete`.
    pub on_delete: bool,
    pub name: &'static str,
    pub replicas: i32,
    pub resources: Resources,
    pub memory_policy: RestartPolicy,
    pub usage: Usage,
}

fn container(d: &Deploy) -> Container {
    Container {
        name: "app".into(),
        image: "registry.example/app:1".into(),
        resources: d.resources,
        resize_policy: ResizePolicy {
            cpu: RestartPolicy::NotRequired,
            memory: d.memory_policy,
        },
        ..Container::default()
    }
}

/// What a scenario needs of a face.
pub trait Face {
    type C: Cluster;
    fn name(&self) -> &'static str;
    fn ns(&self) -> &str;
    /// The cluster as the kerf agent (field manager `kerf`).
    fn agent(&self) -> &Self::C;
    /// The same cluster writing as another field manager.
    fn as_manager(&self, manager: &str) -> Self::C;
    /// The cluster as an administrator (reads what the agent may only write).
    fn observer(&self) -> Self::C;
    async fn deploy(&self, d: &Deploy) -> WorkloadKey;
    async fn pdb(&self, name: &str, app: &str, min_available: i32);
    /// A CPU-utilization HPA of Deployment `target` (a plain create).
    async fn hpa(&self, target: &str, utilization: i32);
    /// Lets the world move on a little; false once the face's deadline has passed.
    async fn tick(&self) -> bool;
}

/// Polls `check` on `face` until it yields a value, or fails naming `what`.
pub async fn wait_for<F: Face, T>(
    face: &F,
    what: &str,
    mut check: impl AsyncFnMut() -> Option<T>,
) -> T {
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(
            face.tick().await,
            "[{}] timed out waiting for: {what}",
            face.name()
        );
    }
}

/// Face 1: the real control plane, the sim kubelet, the agent's identity.
pub struct Real {
    ns: TestNamespace,
    admin: kube::Client,
    agent: KubeCluster,
    deadline: Instant,
    _kubelet: ApiKubelet,
}

impl Real {
    pub async fn new(tag: &str, mut node: Node) -> Real {
        let plane = control_plane();
        let admin = plane.admin().await;
        let ns = namespace(&admin, tag).await;
        node.name = format!("{}-node", ns.name);
        node.labels.insert(POOL_LABEL.into(), ns.name.clone());
        let kubelet =
            ApiKubelet::start_serving(admin.clone(), vec![node], 5, plane.kubelet_serving())
                .await
                .expect("sim kubelet");
        Real {
            agent: plane.agent_cluster().await,
            admin,
            ns,
            deadline: Instant::now() + Duration::from_secs(90),
            _kubelet: kubelet,
        }
    }
}

fn quantities(r: &Resources, limits: bool) -> BTreeMap<String, String> {
    let (cpu, mem) = if limits {
        (r.cpu_limit, r.memory_limit)
    } else {
        (r.cpu_request, r.memory_request)
    };
    cpu.map(|c| ("cpu".to_string(), format_cpu(c)))
        .into_iter()
        .chain(mem.map(|m| ("memory".to_string(), format_memory(m))))
        .collect()
}

impl Face for Real {
    type C = KubeCluster;

    fn name(&self) -> &'static str {
        "real API server"
    }

    fn ns(&self) -> &str {
        &self.ns.name
    }

    fn agent(&self) -> &KubeCluster {
        &self.agent
    }

    fn observer(&self) -> KubeCluster {
        KubeCluster::new(self.admin.clone())
    }

    fn as_manager(&self, manager: &str) -> KubeCluster {
        self.agent.with_field_manager(manager)
    }

    async fn deploy(&self, d: &Deploy) -> WorkloadKey {
        let usage: BTreeMap<&str, Usage> = [("app", d.usage)].into_iter().collect();
        let c = container(d);
        let mut body = serde_json::json!({
            "metadata": { "name": d.name, "namespace": self.ns.name },
            "spec": {
                "replicas": d.replicas,
                "selector": { "matchLabels": { "app": d.name } },
                "template": {
                    "metadata": {
                        "labels": { "app": d.name },
                        "annotations": { USAGE_ANNOTATION: serde_json::to_string(&usage).expect("usage json") },
                    },
                    "spec": {
                        "nodeSelector": { POOL_LABEL: self.ns.name },
                        "containers": [{
                            "name": c.name, "image": c.image,
                            "resources": { "requests": quantities(&c.resources, false), "limits": quantities(&c.resources, true) },
                            "resizePolicy": [
                                { "resourceName": "cpu", "restartPolicy": "NotRequired" },
                                { "resourceName": "memory", "restartPolicy": match d.memory_policy {
                                    RestartPolicy::NotRequired => "NotRequired",
                                    RestartPolicy::RestartContainer => "RestartContainer",
                                } },
                            ],
                        }],
                    },
                },
            },
        });
        let pp = PostParams {
            field_manager: Some(CREATOR.into()),
            ..PostParams::default()
        };
        let ns = &self.ns.name;
        match d.kind {
            WorkloadKind::StatefulSet => {
                body["spec"]["serviceName"] = d.name.into();
                let strategy = if d.on_delete {
                    "OnDelete"
                } else {
                    "RollingUpdate"
                };
                body["spec"]["updateStrategy"] = serde_json::json!({ "type": strategy });
                let s: StatefulSet = serde_json::from_value(body).expect("statefulset object");
                Api::<StatefulSet>::namespaced(self.admin.clone(), ns)
                    .create(&pp, &s)
                    .await
                    .expect("create statefulset");
            }
            _ => {
                let dep: Deployment = serde_json::from_value(body).expect("deployment object");
                Api::<Deployment>::namespaced(self.admin.clone(), ns)
                    .create(&pp, &dep)
                    .await
                    .expect("create deployment");
            }
        }
        WorkloadKey::new(ns, d.kind, d.name)
    }

    async fn pdb(&self, name: &str, app: &str, min_available: i32) {
        let body: PodDisruptionBudget = serde_json::from_value(serde_json::json!({
            "metadata": { "name": name, "namespace": self.ns.name },
            "spec": { "minAvailable": min_available, "selector": { "matchLabels": { "app": app } } },
        }))
        .expect("pdb object");
        Api::<PodDisruptionBudget>::namespaced(self.admin.clone(), &self.ns.name)
            .create(&PostParams::default(), &body)
            .await
            .expect("create pdb");
    }

    async fn hpa(&self, target: &str, utilization: i32) {
        use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
        let body: HorizontalPodAutoscaler = serde_json::from_value(serde_json::json!({
            "metadata": { "name": target, "namespace": self.ns.name },
            "spec": {
                "scaleTargetRef": { "apiVersion": "apps/v1", "kind": "Deployment", "name": target },
                "minReplicas": 1, "maxReplicas": 4,
                "metrics": [{ "type": "Resource", "resource": { "name": "cpu",
                    "target": { "type": "Utilization", "averageUtilization": utilization } } }],
            },
        }))
        .expect("hpa object");
        let pp = PostParams {
            field_manager: Some(CREATOR.into()),
            ..PostParams::default()
        };
        Api::<HorizontalPodAutoscaler>::namespaced(self.admin.clone(), &self.ns.name)
            .create(&pp, &body)
            .await
            .expect("create hpa");
    }

    async fn tick(&self) -> bool {
        tokio::time::sleep(Duration::from_millis(100)).await;
        Instant::now() < self.deadline
    }
}

/// Face 2: the in-process sim on a manual clock.
pub struct Sim {
    ns: String,
    clock: Arc<ManualClock>,
    cluster: SimCluster,
    ticks: std::sync::atomic::AtomicU32,
}

impl Sim {
    pub fn new(tag: &str, node: Node) -> Sim {
        let clock = Arc::new(ManualClock::new(1_800_000_000_000));
        Sim {
            ns: tag.into(),
            cluster: SimCluster::new(5, clock.clone(), vec![node]),
            clock,
            ticks: Default::default(),
        }
    }
}

impl Face for Sim {
    type C = SimCluster;

    fn name(&self) -> &'static str {
        "in-process sim"
    }

    fn ns(&self) -> &str {
        &self.ns
    }

    fn agent(&self) -> &SimCluster {
        &self.cluster
    }

    fn observer(&self) -> SimCluster {
        self.cluster.clone()
    }

    fn as_manager(&self, manager: &str) -> SimCluster {
        self.cluster.with_field_manager(manager)
    }

    async fn deploy(&self, d: &Deploy) -> WorkloadKey {
        let spec = WorkloadSpec {
            kind: d.kind,
            namespace: self.ns.clone(),
            name: d.name.into(),
            replicas: d.replicas,
            strategy: if d.on_delete {
                UpdateStrategy::OnDelete
            } else {
                UpdateStrategy::RollingUpdate {
                    max_surge: Some("25%".into()),
                    max_unavailable: Some("25%".into()),
                }
            },
            labels: BTreeMap::new(),
            annotations: BTreeMap::new(),
            containers: vec![container(d)],
            usage: [("app".to_string(), d.usage)].into_iter().collect(),
        };
        self.cluster
            .create_workload(spec, CREATOR)
            .expect("create workload")
    }

    async fn pdb(&self, name: &str, app: &str, min_available: i32) {
        self.cluster.create_pdb(&self.ns, name, app, min_available);
    }

    async fn hpa(&self, target: &str, utilization: i32) {
        let key = WorkloadKey::new(&self.ns, WorkloadKind::Deployment, target);
        let metric = kerf::cluster::HpaMetric {
            kind: "Resource".into(),
            resource: Some("cpu".into()),
            container: None,
            target_utilization: Some(utilization),
        };
        self.cluster.create_hpa(target, &key, vec![metric]);
    }

    async fn tick(&self) -> bool {
        self.clock.advance(1_000);
        self.cluster.step();
        self.ticks.fetch_add(1, std::sync::atomic::Ordering::SeqCst) < 600
    }
}
