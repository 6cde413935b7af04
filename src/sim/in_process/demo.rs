//! The demo's clusters as in-process clusters: the catalogue's workloads (same
//! namespaces, names, kinds, replicas, containers and usage shapes as the demo
//! datasource reports, and the guardrail workloads' runtimes, strategies, HPAs and
//! PodDisruptionBudgets), on nodes large enough for all of them, with every resource
//! change told to `sim::live` so the demo datasource reports it.

use std::sync::Arc;

use super::{SimCluster, State, WorkloadSpec};
use crate::clock::Clock;
use crate::cluster::{
    ClusterError, Container, EnvVar, HpaMetric, Node, NodeManagers, Resources, RestartPolicy,
    UpdateStrategy, WorkloadKey, WorkloadKind,
};
use crate::sim::catalogue::{self, Kind};
use crate::sim::guarded::{self, Rollout};
use crate::sim::kubelet::Usage;
use crate::sim::live::{Live, LiveKey};

/// Nodes per demo cluster (the node agent DaemonSet runs one pod on each).
const NODES: usize = 4;

fn round(v: Option<f64>) -> Option<u64> {
    v.map(|x| x.round().max(1.0) as u64)
}

fn model(r: catalogue::Resources) -> Resources {
    Resources {
        cpu_request: round(r.cpu_request),
        cpu_limit: round(r.cpu_limit),
        memory_request: round(r.memory_request),
        memory_limit: round(r.memory_limit),
    }
}

fn demo_values(r: Resources) -> catalogue::Resources {
    catalogue::Resources {
        cpu_request: r.cpu_request.map(|v| v as f64),
        cpu_limit: r.cpu_limit.map(|v| v as f64),
        memory_request: r.memory_request.map(|v| v as f64),
        memory_limit: r.memory_limit.map(|v| v as f64),
    }
}

impl SimCluster {
    /// The demo cluster `cluster` (`None` for a name the catalogue does not have), on
    /// `clock`, telling its resource changes to `live`.
    pub fn demo(
        cluster: &str,
        seed: u64,
        clock: Arc<dyn Clock>,
        live: Live,
    ) -> Result<Option<SimCluster>, ClusterError> {
        let Some(specs) = catalogue::workloads(cluster) else {
            return Ok(None);
        };
        let nodes = (0..NODES)
            .map(|i| Node {
                name: format!("{cluster}-node-{i}"),
                labels: Default::default(),
                ready: true,
                // Room for every pod (the sim binds first-fit) and any recommendation:
                // the demo shows changes applied, not a full node's Deferred resizes.
                allocatable_cpu: 128_000,
                allocatable_memory: 512 << 30,
                swap_bytes: 0,
                unschedulable: false,
                managers: NodeManagers::default(),
                daemon_endpoint: None,
            })
            .collect();
        let now = clock.now_ms();
        let sim = SimCluster::new(seed, clock, nodes);
        let mut specs = specs;
        guarded::with_past(&mut specs, now);
        let all: Vec<WorkloadSpec> = specs.iter().map(|s| workload_spec(s, now)).collect();
        sim.create_workloads(all, "kerf-demo")?;
        for (name, spec) in crate::sim::git_policies::objects(cluster) {
            sim.insert_policy(crate::cluster::PolicyObject {
                name: name.into(),
                uid: crate::sim::git_policies::uid(seed, cluster, name),
                generation: 1,
                spec,
                status: serde_json::Value::Null,
            });
        }
        // HPAs (a guardrail row's own metrics, else the catalogue's CPU target, as the
        // demo's kube-state-metrics shows it) and the guardrail rows' PodDisruptionBudgets.
        for spec in &specs {
            let key = WorkloadKey::new(spec.namespace, kind_of(spec.kind), &spec.name);
            let extras = guarded::extras(spec.namespace, &spec.name);
            let targets: Vec<(String, i32)> = match &extras {
                Some(e) if !e.hpa.is_empty() => {
                    e.hpa.iter().map(|(r, t)| (r.to_string(), *t)).collect()
                }
                _ => spec
                    .hpa
                    .iter()
                    .map(|h| ("cpu".to_string(), h.cpu_utilization.round() as i32))
                    .collect(),
            };
            if !targets.is_empty() {
                let metrics = targets
                    .into_iter()
                    .map(|(resource, target)| HpaMetric {
                        kind: "Resource".into(),
                        resource: Some(resource),
                        container: None,
                        target_utilization: Some(target),
                    })
                    .collect();
                sim.create_hpa(&spec.name, &key, metrics);
            }
            if let Some(min) = extras.as_ref().and_then(|e| e.pdb_min_available) {
                sim.create_pdb(spec.namespace, &spec.name, &spec.name, min);
            }
            if let Some((cpu_limit, deadline_s)) = extras.and_then(|e| e.startup) {
                let startup = super::admission::Startup {
                    ready_from_cpu_limit: cpu_limit,
                    progress_deadline_ms: deadline_s * 1000,
                };
                sim.set_startup(&key, startup);
            }
        }
        // The guardrail namespace's memory quota: what its workloads ask for now, and a
        // little room.
        let asked: u64 = specs
            .iter()
            .filter(|s| s.namespace == guarded::NAMESPACE)
            .map(|s| {
                let per_pod: u64 = s
                    .containers
                    .iter()
                    .filter_map(|c| model(c.resources_at(now)).memory_request)
                    .sum();
                per_pod * u64::from(s.replicas)
            })
            .sum();
        if asked > 0 {
            let hard = crate::cluster::QuotaAmounts {
                requests_memory: Some(asked + guarded::QUOTA_ROOM_BYTES),
                ..Default::default()
            };
            sim.create_quota(guarded::NAMESPACE, guarded::QUOTA_NAME, hard);
        }
        sim.state.lock().unwrap_or_else(|p| p.into_inner()).live =
            Some((cluster.to_string(), live));
        Ok(Some(sim))
    }
}

fn kind_of(kind: Kind) -> WorkloadKind {
    match kind {
        Kind::Deployment => WorkloadKind::Deployment,
        Kind::StatefulSet => WorkloadKind::StatefulSet,
        Kind::DaemonSet => WorkloadKind::DaemonSet,
        Kind::Rollout => WorkloadKind::Rollout,
        Kind::CronJob => WorkloadKind::CronJob,
    }
}

/// A catalogue workload as the in-process cluster creates it, at `now_ms` (with the
/// runtime, resize policy, strategy and annotations of a guardrail workload).
fn workload_spec(spec: &catalogue::WorkloadSpec, now_ms: i64) -> WorkloadSpec {
    let extras = guarded::extras(spec.namespace, &spec.name);
    let mut labels: std::collections::BTreeMap<String, String> = catalogue::labels(spec)
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    let mut annotations = std::collections::BTreeMap::new();
    if let Some(e) = &extras {
        labels.extend(e.labels.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        annotations.extend(
            e.annotations
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string())),
        );
    }
    let containers = spec
        .containers
        .iter()
        .map(|c| {
            let mut container = Container {
                name: c.name.into(),
                role: c.role,
                image: format!("registry.example/{}/{}:1", spec.namespace, spec.name),
                resources: model(c.resources_at(now_ms)),
                ..Container::default()
            };
            if let Some(e) = &extras {
                if !e.image.is_empty() {
                    container.image = e.image.into();
                }
                container.command = e.command.iter().map(|s| s.to_string()).collect();
                container.env = e
                    .env
                    .iter()
                    .map(|(n, v)| EnvVar {
                        name: n.to_string(),
                        value: Some(v.to_string()),
                    })
                    .collect();
                if e.memory_restarts {
                    container.resize_policy.memory = RestartPolicy::RestartContainer;
                }
            }
            container
        })
        .collect::<Vec<Container>>();
    // As the API server lists them: `spec.initContainers` (sidecars) first.
    let mut containers = containers;
    containers.sort_by_key(|c| !c.role.in_init_list());
    let usage = spec
        .containers
        .iter()
        .map(|c| {
            let u = Usage {
                cpu: spec.cpu,
                memory: spec.memory,
                scale: c.scale,
            };
            (c.name.to_string(), u)
        })
        .collect();
    let strategy = match extras.map(|e| e.rollout) {
        _ if spec.kind == Kind::CronJob => UpdateStrategy::NextRun,
        Some(Rollout::Recreate) => UpdateStrategy::Recreate,
        Some(Rollout::OnDelete) => UpdateStrategy::OnDelete,
        _ => UpdateStrategy::RollingUpdate {
            max_surge: Some("25%".into()),
            max_unavailable: Some("25%".into()),
        },
    };
    WorkloadSpec {
        kind: kind_of(spec.kind),
        namespace: spec.namespace.into(),
        name: spec.name.clone(),
        replicas: spec.replicas as i32,
        strategy,
        labels,
        annotations,
        containers,
        usage,
    }
}

impl State {
    /// Tells `live` (when the demo listens) that `key`'s containers now run with
    /// `containers`' values.
    pub(super) fn note_change(&mut self, key: &WorkloadKey, containers: &[Container]) {
        let Some((cluster, live)) = &self.live else {
            return;
        };
        for c in containers {
            let k = LiveKey {
                cluster: cluster.clone(),
                namespace: key.namespace.clone(),
                workload: key.name.clone(),
                container: c.name.clone(),
            };
            live.record(k, self.now_ms, demo_values(c.resources));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;
    use crate::cluster::{ApplyMode, Cluster, ContainerResources};

    #[tokio::test]
    async fn a_change_in_the_demo_cluster_is_told_to_live() {
        let clock = Arc::new(ManualClock::new(1_800_000_000_000));
        let live = Live::default();
        let sim = SimCluster::demo("demo-west", 42, clock.clone(), live.clone())
            .expect("builds")
            .expect("known cluster");
        let key = WorkloadKey::new("search", WorkloadKind::Deployment, "sitemap");
        let w = sim.workload(&key).await.expect("read").expect("exists");
        let mut r = w.containers[0].resources;
        r.cpu_request = Some(200);
        clock.advance(1000);
        sim.apply_template_resources(
            &key,
            &[ContainerResources::set("app", r)],
            ApplyMode {
                force: true,
                dry_run: false,
            },
        )
        .await
        .expect("apply");
        let mut spec = catalogue::workloads("demo-west")
            .expect("west")
            .into_iter()
            .find(|s| s.name == "sitemap")
            .expect("sitemap");
        live.apply("demo-west", &mut spec);
        assert_eq!(
            spec.containers[0].changes.len(),
            1,
            "{:?}",
            spec.containers[0]
        );
        assert_eq!(
            spec.containers[0]
                .resources_at(1_800_000_001_000)
                .cpu_request,
            Some(200.0)
        );
    }
}
