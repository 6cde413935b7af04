//! The world the agent tests run in: the real control plane with the sim kubelet (a
//! test namespace and its own node), a hub on a manual clock with the cluster
//! registered, workloads created by an admin, policies made through the hub's API,
//! recommendations stored as a run stores them, and the agent itself (as the agent's
//! identity, with the shipped RBAC) reaching the hub in process.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::{Deployment, StatefulSet};
use kerf::agent::{Agent, Options, Outbox};
use kerf::cluster::kube::KubeCluster;
use kerf::cluster::quantity::{format_cpu, format_memory};
use kerf::cluster::{Cluster, Node, Pod, Resources, WorkloadKey, WorkloadKind};
use kerf::server::in_process::InProcessHub;
use kerf::sim::api_kubelet::ApiKubelet;
use kerf::sim::kubelet::{Usage, USAGE_ANNOTATION};
use kerf::store::{ChunkWrite, NewRecommendation, WorkloadSeen};
use kube::api::{Api, PostParams};
use serde_json::{json, Value};

use crate::support::hub::Hub;
use crate::support::kube::objects::{node, POOL_LABEL};
use crate::support::kube::{control_plane, namespace, TestNamespace};

pub const MIB: u64 = 1 << 20;

/// The agent the tests drive.
pub type TestAgent = Agent<KubeCluster, InProcessHub>;

pub use super::spec::{deployment, merge, res, Spec};

/// How sure a stored recommendation is.
#[derive(Debug, Clone, Copy)]
pub struct Rec {
    pub confidence: i64,
    pub covered_seconds: i64,
    /// The container it is for.
    pub container: &'static str,
}

impl Default for Rec {
    fn default() -> Rec {
        Rec {
            confidence: 85,
            covered_seconds: 8 * 86_400,
            container: "app",
        }
    }
}

pub struct World {
    pub ns: TestNamespace,
    pub admin: kube::Client,
    pub hub: Hub,
    pub cluster: String,
    pub kubelet: ApiKubelet,
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

impl World {
    /// A namespace, its node (`cpu` millicores, `memory_mib`), and a hub whose cluster
    /// is named after the namespace.
    pub async fn new(tag: &str, cpu: u64, memory_mib: u64) -> World {
        World::with_node(tag, |ns| node(ns, cpu, memory_mib)).await
    }

    pub async fn with_node(tag: &str, make: impl FnOnce(&str) -> Node) -> World {
        World::build(tag, |ns| vec![make(ns)], crate::support::hub::T0, None).await
    }

    /// As [`World::now`], with the nodes `make` gives for the namespace (each must carry
    /// its pool label, as `node` does, for the workloads to land on them).
    pub async fn now_with_nodes(tag: &str, make: impl FnOnce(&str) -> Vec<Node>) -> World {
        let t0 = kerf::clock::Clock::now_ms(&kerf::clock::SystemClock);
        World::build(tag, make, t0, None).await
    }

    /// As [`World::new`], with the hub's (manual) clock starting at the real now: what
    /// the sim kubelet and the API server stamp (OOM kills, pod creation) is then on
    /// the agent's time line, as in a real cluster.
    pub async fn now(tag: &str, cpu: u64, memory_mib: u64) -> World {
        let t0 = kerf::clock::Clock::now_ms(&kerf::clock::SystemClock);
        World::build(tag, |ns| vec![node(ns, cpu, memory_mib)], t0, None).await
    }

    /// As [`World::now`], with the sim kubelet's containers on `kubelet_clock` (a
    /// manual clock set at the hub's start: a test moves it and then the hub's, so
    /// each of the agent's collections finds the kubelet already at its time) and a hub
    /// that keeps an embedded usage store (the cluster has no datasource).
    pub async fn timed(
        tag: &str,
        cpu: u64,
        memory_mib: u64,
        kubelet_clock: Arc<kerf::clock::ManualClock>,
    ) -> World {
        let t0 = kerf::clock::Clock::now_ms(kubelet_clock.as_ref());
        World::build(
            tag,
            |ns| vec![node(ns, cpu, memory_mib)],
            t0,
            Some(kubelet_clock),
        )
        .await
    }

    async fn build(
        tag: &str,
        make: impl FnOnce(&str) -> Vec<Node>,
        t0: i64,
        kubelet_clock: Option<Arc<kerf::clock::ManualClock>>,
    ) -> World {
        // `IT_LOG=kerf=info`: the agent's and sim's logs in a failing test's output.
        if let Ok(filter) = std::env::var("IT_LOG") {
            let _ = tracing_subscriber::fmt()
                .with_env_filter(filter)
                .with_test_writer()
                .try_init();
        }
        let plane = control_plane();
        let admin = plane.admin().await;
        let ns = namespace(&admin, tag).await;
        let nodes = make(&ns.name);
        let timed = kubelet_clock.is_some();
        let kubelet = match kubelet_clock {
            Some(clock) => {
                ApiKubelet::start_serving_on(
                    admin.clone(),
                    nodes,
                    7,
                    plane.kubelet_serving(),
                    clock,
                )
                .await
            }
            None => {
                ApiKubelet::start_serving(admin.clone(), nodes, 7, plane.kubelet_serving()).await
            }
        }
        .expect("sim kubelet");
        let cluster = ns.name.clone();
        let hub = if timed {
            crate::support::hub::hub_collecting(&cluster, t0).await
        } else {
            crate::support::hub::hub_at(&cluster, false, t0, |_| {}).await
        };
        World {
            hub,
            cluster,
            admin,
            ns,
            kubelet,
        }
    }

    pub fn key(&self, kind: WorkloadKind, name: &str) -> WorkloadKey {
        WorkloadKey::new(&self.ns.name, kind, name)
    }

    /// Creates the workload as an admin (a plain create, like `kubectl create`).
    pub async fn create(&self, s: &Spec) -> WorkloadKey {
        let usage: BTreeMap<&str, Usage> = [("app", s.usage)].into_iter().collect();
        let mut body = json!({
            "metadata": { "name": s.name, "namespace": self.ns.name },
            "spec": {
                "replicas": s.replicas,
                "selector": { "matchLabels": { "app": s.name } },
                "template": {
                    "metadata": {
                        "labels": { "app": s.name },
                        "annotations": { USAGE_ANNOTATION: serde_json::to_string(&usage).expect("usage") },
                    },
                    "spec": {
                        "nodeSelector": { POOL_LABEL: self.ns.name },
                        "containers": [{
                            "name": "app", "image": "registry.example/app:1",
                            "resources": { "requests": quantities(&s.resources, false), "limits": quantities(&s.resources, true) },
                        }],
                    },
                },
            },
        });
        if !s.container.is_null() {
            merge(
                &mut body["spec"]["template"]["spec"]["containers"][0],
                s.container.clone(),
            );
        }
        if !s.patch.is_null() {
            merge(&mut body, s.patch.clone());
        }
        let pp = PostParams {
            field_manager: Some("kubectl-create".into()),
            ..PostParams::default()
        };
        let ns = &self.ns.name;
        match s.kind {
            WorkloadKind::StatefulSet => {
                body["spec"]["serviceName"] = s.name.into();
                let strategy = if s.on_delete {
                    "OnDelete"
                } else {
                    "RollingUpdate"
                };
                body["spec"]["updateStrategy"] = json!({ "type": strategy });
                let o: StatefulSet = serde_json::from_value(body).expect("statefulset");
                Api::<StatefulSet>::namespaced(self.admin.clone(), ns)
                    .create(&pp, &o)
                    .await
                    .expect("create statefulset");
            }
            _ => {
                let o: Deployment = serde_json::from_value(body).expect("deployment");
                Api::<Deployment>::namespaced(self.admin.clone(), ns)
                    .create(&pp, &o)
                    .await
                    .expect("create deployment");
            }
        }
        self.key(s.kind, s.name)
    }

    /// Creates a policy for this namespace through the hub's API (the test's base
    /// policy: auto-patch, short learning period, modest confidence), with `patch`
    /// merged over it.
    pub async fn policy(&self, name: &str, patch: Value) -> i64 {
        let mut spec = json!({
            "name": name,
            "priority": 10,
            "selector": { "clusters": [self.cluster], "namespaces": [self.ns.name] },
            "mode": { "cpu": "auto-patch", "memory": "auto-patch" },
            "guardrails": { "learningPeriod": "1d", "minConfidence": 50, "cooldown": "1h" },
        });
        merge(&mut spec, patch);
        let (status, body) = self
            .hub
            .as_token(&self.hub.admin)
            .call("POST", "/v1/policies", Some(spec))
            .await;
        assert_eq!(status, 201, "create policy: {body}");
        body["id"].as_i64().expect("policy id")
    }

    /// `POST`s or `PUT`s `body` to this cluster's `what` (`pause`, `resume`, `freeze`) on
    /// the hub as its admin, as an operator would.
    pub async fn cluster_action(&self, method: &str, what: &str, body: Value) {
        let path = format!("/v1/clusters/{}/{what}", self.cluster);
        let (s, v) = self
            .hub
            .as_token(&self.hub.admin)
            .call(method, &path, Some(body))
            .await;
        assert_eq!(s, 200, "{method} {path}: {v}");
    }

    /// Replaces policy `id` with `patch` merged over it (its current version read first).
    pub async fn update_policy(&self, id: i64, patch: Value) {
        let (s, current) = self
            .hub
            .as_token(&self.hub.admin)
            .call("GET", &format!("/v1/policies/{id}"), None)
            .await;
        assert_eq!(s, 200, "{current}");
        let mut spec = current["spec"].clone();
        merge(&mut spec, patch);
        spec["version"] = current["version"].clone();
        let (s, body) = self
            .hub
            .as_token(&self.hub.admin)
            .call("PUT", &format!("/v1/policies/{id}"), Some(spec))
            .await;
        assert_eq!(s, 200, "update policy: {body}");
    }

    /// Stores a recommendation for `key` as a run would: `app`'s suggested values,
    /// confidence 85, 8 days of history, under the workload's current effective
    /// policy. Returns its id.
    pub async fn recommend(&self, key: &WorkloadKey, suggested: Resources) -> String {
        self.recommend_with(key, suggested, Rec::default()).await
    }

    /// The workload's id in the hub.
    pub fn workload_id(&self, key: &WorkloadKey) -> String {
        kerf::runs::workload::workload_id(
            &self.cluster,
            &key.namespace,
            key.kind.as_str(),
            &key.name,
        )
    }

    /// As [`World::recommend`], with the confidence and history of `r`.
    pub async fn recommend_with(&self, key: &WorkloadKey, suggested: Resources, r: Rec) -> String {
        let wid = kerf::runs::workload::workload_id(
            &self.cluster,
            &key.namespace,
            key.kind.as_str(),
            &key.name,
        );
        // First the workload (so the config feed resolves its policy), then the
        // recommendation under that identity.
        self.store_rec(key, &wid, suggested, "pending", r).await;
        let feed = self.hub.config(&self.cluster).await;
        let identity = feed["workloads"]
            .as_array()
            .expect("workloads")
            .iter()
            .find(|w| w["workloadId"] == wid.as_str())
            .map(|w| w["policyIdentity"].as_str().expect("identity").to_string())
            .expect("the workload in the config feed");
        self.store_rec(key, &wid, suggested, &identity, r).await
    }

    async fn store_rec(
        &self,
        key: &WorkloadKey,
        wid: &str,
        s: Resources,
        identity: &str,
        r: Rec,
    ) -> String {
        let now = kerf::clock::Clock::now_ms(self.hub.clock.as_ref());
        seed(
            &self.hub.store,
            &self.cluster,
            key,
            wid,
            s,
            identity,
            r,
            now,
        )
        .await
    }

    /// The agent, started as the agent's identity, reporting to the hub in process.
    pub async fn agent(&self) -> TestAgent {
        let hub = Arc::new(InProcessHub::new(self.hub.state.clone(), &self.cluster));
        self.agent_with(hub).await
    }

    /// The agent reporting to `hub`.
    pub async fn agent_with<H: kerf::agent::Hub>(&self, hub: Arc<H>) -> Agent<KubeCluster, H> {
        let kube = control_plane().agent_cluster().await;
        let options = Options {
            cluster: self.cluster.clone(),
            namespaces: vec![self.ns.name.clone()],
            agent_version: "test".into(),
        };
        Agent::start(
            kube,
            hub,
            self.hub.clock.clone(),
            options,
            Outbox::new(1000, Default::default()),
        )
        .await
        .expect("agent starts")
    }

    /// Delivers what the agent buffered.
    pub async fn deliver(&self, agent: &TestAgent) {
        let hub = InProcessHub::new(self.hub.state.clone(), &self.cluster);
        let flushed = agent.outbox().flush(&hub).await;
        assert!(
            matches!(flushed, kerf::agent::outbox::Flushed::Empty { .. }),
            "{flushed:?}"
        );
    }

    /// What kerf could change, as an admin reads it: each workload's generation and
    /// template values, each pod's uid, generation and values (spec and status).
    pub async fn workload_objects(&self) -> Vec<String> {
        let admin = KubeCluster::new(self.admin.clone());
        let snap = admin
            .snapshot(std::slice::from_ref(&self.ns.name))
            .await
            .expect("snapshot");
        let mut out: Vec<String> = snap
            .workloads
            .iter()
            .map(|w| {
                format!(
                    "{} gen {} {:?}",
                    w.key, w.generation, w.containers[0].resources
                )
            })
            .collect();
        out.extend(snap.pods.iter().map(|p| {
            format!(
                "{} {} gen {} {:?} {:?}",
                p.pod.name,
                p.uid,
                p.generation,
                p.containers[0].resources,
                p.status("app").and_then(|s| s.resources)
            )
        }));
        out.sort();
        out
    }

    /// Waits until `n` pods report resources in their status (running), so that a
    /// picture of [`World::workload_objects`] taken next does not change as they start.
    pub async fn pods_running(&self, n: usize) {
        crate::support::eventually("pods running", crate::support::secs(60), async || {
            let objects = self.workload_objects().await;
            let running = objects
                .iter()
                .filter(|l| l.contains("Some(Resources"))
                .count();
            (running >= n).then_some(()).ok_or(objects)
        })
        .await;
    }

    /// The cluster's workload events in the hub (`GET /v1/audit`), oldest first.
    pub async fn audit(&self) -> Vec<Value> {
        let (s, v) = self
            .hub
            .as_token(&self.hub.admin)
            .call(
                "GET",
                &format!("/v1/audit?cluster={}&limit=500", self.cluster),
                None,
            )
            .await;
        assert_eq!(s, 200, "{v}");
        let mut items = v["items"].as_array().expect("items").clone();
        items.reverse();
        items
    }

    /// `(type, reason)` of every stored event, oldest first.
    pub async fn reasons(&self) -> Vec<(String, String)> {
        self.audit()
            .await
            .iter()
            .map(|e| {
                (
                    e["type"].as_str().unwrap_or_default().to_string(),
                    e["reason"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect()
    }
}

/// Stores a recommendation for `key` as a run would (see [`World::recommend_with`]).
#[allow(clippy::too_many_arguments)]
pub async fn seed(
    store: &kerf::store::Store,
    cluster: &str,
    key: &WorkloadKey,
    wid: &str,
    s: Resources,
    identity: &str,
    r: Rec,
    now: i64,
) -> String {
    let id = uuid::Uuid::new_v4().to_string();
    let setting = |v: Option<u64>| {
        v.map(|v| json!({ "current": null, "suggested": v as f64, "confidence": r.confidence }))
    };
    let summary = json!({
        "containers": [{
            "name": r.container,
            "cpu": { "requests": setting(s.cpu_request), "limits": setting(s.cpu_limit),
                     "dataQuality": "available", "coverage": 1.0 },
            "memory": { "requests": setting(s.memory_request), "limits": setting(s.memory_limit),
                        "dataQuality": "available", "coverage": 1.0 },
        }],
        "confidence": r.confidence, "coverage": 1.0, "dataQuality": "available", "notices": [],
        "coveredSeconds": r.covered_seconds,
    });
    let chunk = ChunkWrite {
        run_id: format!("run-{id}"),
        now_ms: now,
        analyzed: vec![(
            WorkloadSeen {
                id: wid.into(),
                cluster: cluster.to_string(),
                namespace: key.namespace.clone(),
                kind: key.kind.as_str().into(),
                name: key.name.clone(),
                uid: String::new(),
                replicas: None,
                labels: "{}".into(),
                current: "[]".into(),
            },
            NewRecommendation {
                id: id.clone(),
                workload_id: wid.into(),
                run_id: format!("run-{id}"),
                created_at: now,
                policy_version: "test".into(),
                settings_identity: identity.into(),
                cost_delta: None,
                summary: summary.to_string(),
                analysis: "{}".into(),
                has_changes: true,
                data_quality: "available".into(),
                notices: String::new(),
                confidence: r.confidence,
                risk: 0,
                change_tolerance: 0.05,
            },
        )],
        failed: Vec::new(),
    };
    store
        .writing(move |tx| tx.write_chunk(&chunk))
        .await
        .expect("store recommendation");
    id
}

/// The workload's pods, read by an admin.
pub async fn pods(w: &World, key: &WorkloadKey) -> Vec<Pod> {
    let admin = KubeCluster::new(w.admin.clone());
    let snap = admin
        .snapshot(std::slice::from_ref(&w.ns.name))
        .await
        .expect("snapshot");
    let mut pods: Vec<Pod> = snap.pods_of(key).filter(|p| !p.deleting).cloned().collect();
    pods.sort_by(|a, b| a.pod.name.cmp(&b.pod.name));
    pods
}

pub async fn ready(w: &World, key: &WorkloadKey, n: usize) -> Vec<Pod> {
    let what = format!("{n} ready pods of {key}");
    crate::support::eventually(&what, Duration::from_secs(60), async || {
        let p = pods(w, key).await;
        if p.len() == n && p.iter().all(|p| p.ready) {
            Ok(p)
        } else {
            Err(p)
        }
    })
    .await
}

/// Passes and advances the agent until `done` holds; fails naming `what` after 90 s.
pub async fn drive<H: kerf::agent::Hub>(
    agent: &mut Agent<KubeCluster, H>,
    what: &str,
    done: impl Fn(&Agent<KubeCluster, H>) -> bool,
) {
    agent.pass().await;
    // Steady passes, as an agent makes them.
    let every = Duration::from_millis(200);
    let limit = Duration::from_secs(90);
    let driven = crate::support::wait::within_every(what, limit, every, async || {
        if done(agent) {
            return Ok(());
        }
        if agent.busy() {
            agent.advance_all().await;
        } else {
            agent.pass().await;
        }
        Err("not yet")
    })
    .await;
    if let Err(timed_out) = driven {
        {
            for (k, s) in agent.states() {
                eprintln!(
                    "{k}: {:?} {:?} {} op={:?} watch={:?}",
                    s.phase,
                    s.last_reason,
                    s.last_message,
                    s.operation.as_ref().map(|o| (&o.step, o.attempts)),
                    s.watch
                        .as_ref()
                        .map(|w| (w.oom_kills, w.restarts, w.periods, w.throttled))
                );
            }
            panic!("{timed_out}");
        }
    }
}
