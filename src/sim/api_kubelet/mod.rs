//! Face 1: the simulated kubelet against a real API server (tests). It registers its
//! Nodes and renews their Leases, makes the pods bound to them Running and Ready with
//! `status.containerStatuses[].resources`, answers resizes the way the kubelet does
//! (`PodResizePending` Deferred/Infeasible, `PodResizeInProgress`, then the new
//! resources), OOM-kills and restarts containers whose usage reaches their memory limit,
//! finishes the deletion of terminating pods, and serves cAdvisor's CPU throttling
//! counters at `/metrics/cadvisor`: over HTTPS per node, where the node says its kubelet
//! is and authorized as a real kubelet authorizes (`serving`, what kerf's agent reads),
//! and on a plain loopback port for all nodes (what a Prometheus would scrape).
//!
//! What each container uses comes from the pod annotation [`USAGE_ANNOTATION`]. The
//! containers run on a clock of their own ([`ApiKubelet::start_serving_on`]: a manual
//! clock lets a test compress hours of usage into seconds); node heartbeats and Leases
//! keep the real time the API server judges them by.

mod metrics;
mod serving;
mod status;

pub use serving::Serving;

use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Node as KNode, Pod as KPod};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::Client;
use serde_json::{json, Value};

use super::kubelet::{judge, ContainerRun, Usage, USAGE_ANNOTATION};
use crate::clock::{Clock, SystemClock};
use crate::cluster::kube::error;
use crate::cluster::{total_requests, ClusterError, ContainerRole, Node, ResizeState, Resources};

const MANAGER: &str = "sim-kubelet";

/// One pod as the simulated kubelet runs it.
struct PodRun {
    namespace: String,
    name: String,
    node: String,
    ip: String,
    started_ms: i64,
    containers: Vec<ContainerRun>,
    images: Vec<String>,
    /// Admitted requests per container (`allocatedResources`).
    allocated: Vec<Resources>,
    resize: ResizeState,
    observed_generation: i64,
    /// An accepted resize waiting to be actuated on the next tick.
    actuating: Option<Vec<Resources>>,
    last_written: Option<Value>,
}

/// What the metrics endpoint reads.
pub(crate) struct Shared {
    pods: Mutex<HashMap<String, PodRun>>,
    /// The containers' time.
    clock: Arc<dyn Clock>,
}

/// A running simulated kubelet; stops when dropped.
pub struct ApiKubelet {
    tasks: Vec<tokio::task::JoinHandle<()>>,
    metrics: SocketAddr,
}

impl Drop for ApiKubelet {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

impl ApiKubelet {
    /// Registers `nodes` and starts playing their kubelet. `client` needs rights on
    /// nodes, nodes/status, leases, pods and pods/status (the tests use an admin). The
    /// nodes name no kubelet endpoint kerf could read (see [`ApiKubelet::start_serving`]).
    pub async fn start(
        client: Client,
        nodes: Vec<Node>,
        seed: u64,
    ) -> Result<ApiKubelet, ClusterError> {
        ApiKubelet::begin(client, nodes, seed, None, Arc::new(SystemClock)).await
    }

    /// As [`ApiKubelet::start`], and serves each node's kubelet endpoint over HTTPS with
    /// `serving`'s certificate (`client` also reviews tokens and access: tokenreviews
    /// and subjectaccessreviews create).
    pub async fn start_serving(
        client: Client,
        nodes: Vec<Node>,
        seed: u64,
        serving: Serving,
    ) -> Result<ApiKubelet, ClusterError> {
        ApiKubelet::begin(client, nodes, seed, Some(serving), Arc::new(SystemClock)).await
    }

    /// As [`ApiKubelet::start_serving`], its containers running on `clock` (what they
    /// use, when they start, restart and are OOM-killed, and the kubelet's timestamps at
    /// `/metrics/cadvisor`).
    pub async fn start_serving_on(
        client: Client,
        nodes: Vec<Node>,
        seed: u64,
        serving: Serving,
        clock: Arc<dyn Clock>,
    ) -> Result<ApiKubelet, ClusterError> {
        ApiKubelet::begin(client, nodes, seed, Some(serving), clock).await
    }

    async fn begin(
        client: Client,
        nodes: Vec<Node>,
        seed: u64,
        serving: Option<Serving>,
        clock: Arc<dyn Clock>,
    ) -> Result<ApiKubelet, ClusterError> {
        let now = SystemClock.now_ms();
        let shared = Arc::new(Shared {
            pods: Mutex::default(),
            clock,
        });
        let mut tasks = Vec::new();
        let mut ports = HashMap::new();
        if let Some(serving) = &serving {
            let tls = serving::acceptor(serving)?;
            for node in &nodes {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .map_err(|e| ClusterError::Transport(format!("kubelet listener: {e}")))?;
                let port = listener
                    .local_addr()
                    .map_err(|e| ClusterError::Transport(e.to_string()))?
                    .port();
                ports.insert(node.name.clone(), port);
                tasks.push(tokio::spawn(serving::serve(
                    listener,
                    tls.clone(),
                    node.name.clone(),
                    client.clone(),
                    shared.clone(),
                )));
            }
        }
        // Without a served endpoint the node names the kubelet's default port.
        let port_of = move |n: &str| ports.get(n).copied().unwrap_or(10250);
        let node_api: Api<KNode> = Api::all(client.clone());
        for node in &nodes {
            let object: KNode =
                serde_json::from_value(status::node_object(node)).map_err(unexpected)?;
            match node_api.create(&PostParams::default(), &object).await {
                Ok(_) => {}
                Err(kube::Error::Api(s)) if s.code == 409 => {}
                Err(e) => return Err(error(e)),
            }
            node_api
                .patch_status(
                    &node.name,
                    &PatchParams::default(),
                    &Patch::Merge(status::node_status(node, now, port_of(&node.name))),
                )
                .await
                .map_err(error)?;
        }
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| ClusterError::Transport(format!("metrics listener: {e}")))?;
        let metrics_addr = listener
            .local_addr()
            .map_err(|e| ClusterError::Transport(e.to_string()))?;
        let with_ports: Vec<(Node, u16)> = nodes
            .iter()
            .map(|n| (n.clone(), port_of(&n.name)))
            .collect();
        tasks.push(tokio::spawn(metrics::serve(listener, shared.clone())));
        tasks.push(tokio::spawn(renew_leases(client.clone(), with_ports)));
        tasks.push(tokio::spawn(run_pods(client, nodes, seed, shared)));
        Ok(ApiKubelet {
            tasks,
            metrics: metrics_addr,
        })
    }

    /// `http://127.0.0.1:PORT/metrics/cadvisor`.
    pub fn metrics_url(&self) -> String {
        format!("http://{}/metrics/cadvisor", self.metrics)
    }
}

fn unexpected(e: serde_json::Error) -> ClusterError {
    ClusterError::Unexpected {
        object: "simulated kubelet object".into(),
        problem: e.to_string(),
    }
}

/// Renews each node's Lease and Ready heartbeat every 10 s, so the node lifecycle
/// controller keeps the node Ready (it taints nodes whose Lease is older than its grace
/// period, and then evicts their pods).
async fn renew_leases(client: Client, nodes: Vec<(Node, u16)>) {
    let leases: Api<Lease> = Api::namespaced(client.clone(), "kube-node-lease");
    let node_api: Api<KNode> = Api::all(client);
    loop {
        let now = SystemClock.now_ms();
        for (node, port) in &nodes {
            let lease = json!({
                "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": { "name": node.name },
                "spec": {
                    "holderIdentity": node.name, "leaseDurationSeconds": 40,
                    "renewTime": status::micro_time(now),
                },
            });
            let pp = PatchParams::apply(MANAGER).force();
            if let Err(e) = leases.patch(&node.name, &pp, &Patch::Apply(&lease)).await {
                tracing::warn!(node = %node.name, error = %e, "sim kubelet: lease renewal failed");
            }
            let beat = Patch::Merge(status::node_status(node, now, *port));
            if let Err(e) = node_api
                .patch_status(&node.name, &PatchParams::default(), &beat)
                .await
            {
                tracing::warn!(node = %node.name, error = %e, "sim kubelet: node status update failed");
            }
        }
        tokio::time::sleep(Duration::from_secs(10)).await;
    }
}

/// The pod loop: every 200 ms, reconcile every pod bound to our nodes.
async fn run_pods(client: Client, nodes: Vec<Node>, seed: u64, shared: Arc<Shared>) {
    let mut next_ip = 1u32;
    loop {
        for node in &nodes {
            let api: Api<KPod> = Api::all(client.clone());
            let lp = ListParams::default().fields(&format!("spec.nodeName={}", node.name));
            match api.list(&lp).await {
                Ok(list) => {
                    for pod in list.items {
                        if let Err(e) =
                            reconcile(&client, node, seed, &shared, &pod, &mut next_ip).await
                        {
                            tracing::debug!(error = %e, "sim kubelet: pod not reconciled this tick");
                        }
                    }
                }
                Err(e) => tracing::warn!(error = %e, "sim kubelet: listing pods failed"),
            }
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn usage_of(pod: &KPod) -> BTreeMap<String, Usage> {
    pod.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(USAGE_ANNOTATION))
        .and_then(|text| serde_json::from_str(text).ok())
        .unwrap_or_default()
}

/// The containers the pod runs for its life (sidecars, then app containers), with
/// their values, resize policy and image.
fn desired(pod: &KPod) -> Vec<(String, Resources, crate::cluster::ResizePolicy, String)> {
    crate::cluster::kube::pod_containers(pod.spec.as_ref())
        .into_iter()
        .filter(|c| c.role.long_running())
        .map(|c| (c.name, c.resources, c.resize_policy, c.image))
        .collect()
}

/// The pod's init containers that run to completion (name, image): done at its start.
fn finished_init(pod: &KPod) -> Vec<(String, String)> {
    crate::cluster::kube::pod_containers(pod.spec.as_ref())
        .into_iter()
        .filter(|c| c.role == ContainerRole::Init)
        .map(|c| (c.name, c.image))
        .collect()
}

async fn reconcile(
    client: &Client,
    node: &Node,
    seed: u64,
    shared: &Shared,
    pod: &KPod,
    next_ip: &mut u32,
) -> Result<(), ClusterError> {
    let meta = &pod.metadata;
    let (Some(ns), Some(name), Some(uid)) = (&meta.namespace, &meta.name, &meta.uid) else {
        return Ok(());
    };
    let api: Api<KPod> = Api::namespaced(client.clone(), ns);
    if meta.deletion_timestamp.is_some() {
        // The kubelet confirms a deletion once the containers are gone: at once here.
        shared
            .pods
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(uid);
        let dp = DeleteParams {
            grace_period_seconds: Some(0),
            preconditions: Some(kube::api::Preconditions {
                uid: Some(uid.clone()),
                resource_version: None,
            }),
            ..DeleteParams::default()
        };
        return match api.delete(name, &dp).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(s)) if s.code == 404 || s.code == 409 => Ok(()),
            Err(e) => Err(error(e)),
        };
    }
    let now = shared.clock.now_ms();
    let generation = meta.generation.unwrap_or(1);
    let wanted = desired(pod);
    let patch = {
        let mut pods = shared.pods.lock().unwrap_or_else(|e| e.into_inner());
        let others = pods
            .iter()
            .filter(|(id, p)| *id != uid && p.node == node.name)
            .flat_map(|(_, p)| p.allocated.iter());
        let others = total_requests(others);
        let run = pods.entry(uid.clone()).or_insert_with(|| {
            let usage = usage_of(pod);
            let ip = format!("10.244.{}.{}", *next_ip / 250, *next_ip % 250 + 2);
            *next_ip += 1;
            PodRun {
                namespace: ns.clone(),
                name: name.clone(),
                node: node.name.clone(),
                ip,
                started_ms: now,
                containers: wanted
                    .iter()
                    .map(|(n, r, policy, _)| {
                        ContainerRun::start(
                            n,
                            usage.get(n).copied().unwrap_or_default(),
                            *r,
                            *policy,
                            now,
                        )
                        .drawn_as(format!("{uid}/{n}"))
                    })
                    .collect(),
                images: wanted.iter().map(|w| w.3.clone()).collect(),
                allocated: wanted.iter().map(|w| w.1).collect(),
                resize: ResizeState::Settled,
                observed_generation: generation,
                actuating: None,
                last_written: None,
            }
        });
        step(run, node, seed, &wanted, generation, others, now);
        let sidecars = crate::cluster::kube::pod_containers(pod.spec.as_ref())
            .into_iter()
            .filter(|c| c.role == ContainerRole::Sidecar)
            .map(|c| c.name)
            .collect::<Vec<_>>();
        let (mut init_statuses, mut statuses) = (Vec::new(), Vec::new());
        for ((c, a), image) in run.containers.iter().zip(&run.allocated).zip(&run.images) {
            let s = status::container_status(c, a, image, uid);
            if sidecars.contains(&c.name) {
                init_statuses.push(s);
            } else {
                statuses.push(s);
            }
        }
        // Init containers that ran to completion come first, as they ran first.
        let done = finished_init(pod)
            .iter()
            .map(|(n, image)| status::completed_status(n, image, uid, run.started_ms))
            .collect::<Vec<_>>();
        init_statuses.splice(0..0, done);
        let body = status::pod_status(
            init_statuses,
            statuses,
            &run.resize,
            run.observed_generation,
            run.started_ms,
            &run.ip,
        );
        if run.last_written.as_ref() == Some(&body) {
            None
        } else {
            run.last_written = Some(body.clone());
            Some(body)
        }
    };
    if let Some(body) = patch {
        let result = api
            .patch_status(
                name,
                &PatchParams::default(),
                &Patch::Merge(json!({ "status": body })),
            )
            .await;
        if let Err(e) = result {
            // Write again on the next tick.
            if let Some(run) = shared
                .pods
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get_mut(uid)
            {
                run.last_written = None;
            }
            return Err(error(e));
        }
    }
    Ok(())
}

/// One kubelet step for a pod: actuate an accepted resize, judge a new one, run the
/// containers up to `now`.
#[allow(clippy::too_many_arguments)]
fn step(
    run: &mut PodRun,
    node: &Node,
    seed: u64,
    wanted: &[(String, Resources, crate::cluster::ResizePolicy, String)],
    generation: i64,
    others: (u64, u64),
    now: i64,
) {
    if let Some(target) = run.actuating.take() {
        for (c, r) in run.containers.iter_mut().zip(&target) {
            c.resize(*r, now);
        }
        run.resize = ResizeState::Settled;
        run.observed_generation = generation;
    } else {
        let target: Vec<Resources> = wanted.iter().map(|w| w.1).collect();
        let current: Vec<Resources> = run.containers.iter().map(|c| c.actual).collect();
        let retry = matches!(run.resize, ResizeState::Deferred { .. })
            || generation != run.observed_generation;
        if target.len() == current.len() && target != current && retry {
            match judge(node, &current, &target, others) {
                ResizeState::Settled => {
                    run.allocated = target.clone();
                    run.resize = ResizeState::InProgress { error: None };
                    run.actuating = Some(target);
                }
                verdict => run.resize = verdict,
            }
            run.observed_generation = generation;
        } else if target == current {
            run.observed_generation = generation;
        }
    }
    for c in &mut run.containers {
        c.advance(seed, now);
    }
}
