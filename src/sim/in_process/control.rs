//! What the controllers and the kubelet do between two moments in the in-process
//! cluster: Deployments keep their replicas of the current template (a changed template
//! replaces the pods), pods are bound to the first node they fit, the kubelet actuates
//! or judges resizes and runs the containers (OOM kills, throttling), PDBs count.

use std::collections::BTreeMap;

use super::{SimPod, SimWorkload, State, WorkloadSpec};
use crate::cluster::{
    total_requests, ClusterError, Container, FieldOwner, PodPhase, PodRef, ResizeState,
    ResourceField, Resources, UpdateStrategy, Workload, WorkloadKey, WorkloadKind,
};
use crate::sim::kubelet::{judge, ContainerRun, Usage};
use crate::sim::shape::Rng;

/// A short stable hash of a template's containers (the `pod-template-hash`).
pub(super) fn template_hash(containers: &[Container]) -> String {
    let text = serde_json::to_string(containers).unwrap_or_default();
    format!(
        "{:010x}",
        crate::fingerprint::fnv1a(text.as_bytes()) & 0xff_ffff_ffff
    )
}

impl State {
    pub(super) fn create_workload(
        &mut self,
        spec: WorkloadSpec,
        creator: &str,
    ) -> Result<WorkloadKey, ClusterError> {
        let key = WorkloadKey::new(&spec.namespace, spec.kind, &spec.name);
        if self.workloads.contains_key(&key) {
            return Err(ClusterError::api(
                409,
                "AlreadyExists",
                format!(
                    "{}s.apps \"{}\" already exists",
                    spec.kind.as_str().to_lowercase(),
                    spec.name
                ),
            ));
        }
        let resource_owners = spec
            .containers
            .iter()
            .flat_map(|c| {
                ResourceField::ALL
                    .into_iter()
                    .filter(|f| c.resources.get(*f).is_some())
                    .map(|field| FieldOwner {
                        manager: creator.into(),
                        operation: "Update".into(),
                        container: c.name.clone(),
                        field,
                    })
            })
            .collect();
        self.serial += 1;
        let selector: BTreeMap<String, String> = [("app".to_string(), spec.name.clone())]
            .into_iter()
            .collect();
        let mut labels = spec.labels;
        labels.extend(selector.clone());
        let workload = Workload {
            key: key.clone(),
            uid: Rng::new(self.seed, &format!("uid/{key}/{}", self.serial)).uuid(),
            generation: 1,
            observed_generation: Some(1),
            replicas: spec.replicas,
            ready_replicas: 0,
            strategy: spec.strategy,
            labels,
            annotations: spec.annotations,
            selector,
            containers: spec.containers,
            resource_owners,
            update_revision: None,
        };
        let revision = template_hash(&workload.containers);
        self.workloads.insert(
            key.clone(),
            SimWorkload {
                workload,
                usage: spec.usage,
                revision,
            },
        );
        Ok(key)
    }

    /// Runs the controllers and the kubelet up to `self.now_ms`.
    pub(super) fn step(&mut self) {
        self.reconcile_workloads();
        self.run_kubelet();
        self.count();
    }

    fn reconcile_workloads(&mut self) {
        let keys: Vec<WorkloadKey> = self.workloads.keys().cloned().collect();
        for key in keys {
            let (revision, desired, containers, usage, on_delete) = {
                let w = &self.workloads[&key].workload;
                let desired = match key.kind {
                    WorkloadKind::DaemonSet => self.nodes.len(),
                    _ => w.replicas.max(0) as usize,
                };
                (
                    template_hash(&w.containers),
                    desired,
                    w.containers.clone(),
                    self.workloads[&key].usage.clone(),
                    w.strategy == UpdateStrategy::OnDelete,
                )
            };
            // Pods of an older template are replaced (all at once: the sim has no surge),
            // except under OnDelete, where they stay until deleted or evicted.
            if !on_delete {
                self.pods.retain(|_, p| {
                    p.pod.owner.as_ref() != Some(&key)
                        || p.pod.revision.as_deref() == Some(&revision)
                });
            }
            self.scale_to(&key, desired, &revision, &containers, &usage);
            if let Some(w) = self.workloads.get_mut(&key) {
                w.revision = revision.clone();
                w.workload.observed_generation = Some(w.workload.generation);
                if key.kind == WorkloadKind::StatefulSet {
                    w.workload.update_revision = Some(revision);
                }
            }
        }
    }

    /// Creates missing pods and removes extra ones (StatefulSets by ordinal, DaemonSets
    /// one per node, Deployments by count).
    fn scale_to(
        &mut self,
        key: &WorkloadKey,
        desired: usize,
        revision: &str,
        containers: &[Container],
        usage: &BTreeMap<String, Usage>,
    ) {
        let mine: Vec<PodRef> = self
            .pods
            .values()
            .filter(|p| p.pod.owner.as_ref() == Some(key))
            .map(|p| p.pod.pod.clone())
            .collect();
        match key.kind {
            WorkloadKind::StatefulSet => {
                for ordinal in 0..desired {
                    let name = format!("{}-{ordinal}", key.name);
                    if !mine.iter().any(|p| p.name == name) {
                        self.create_pod(key, revision, containers, usage, Some(name), None);
                    }
                }
                let extra = |p: &PodRef| {
                    p.name
                        .rsplit('-')
                        .next()
                        .and_then(|o| o.parse::<usize>().ok())
                        .is_none_or(|o| o >= desired)
                };
                for p in mine.iter().filter(|p| extra(p)) {
                    self.pods.remove(p);
                }
            }
            WorkloadKind::DaemonSet => {
                let nodes: Vec<String> = self.nodes.iter().map(|n| n.name.clone()).collect();
                for node in nodes {
                    let present = self.pods.values().any(|p| {
                        p.pod.owner.as_ref() == Some(key) && p.pod.node.as_ref() == Some(&node)
                    });
                    if !present {
                        self.create_pod(key, revision, containers, usage, None, Some(node));
                    }
                }
            }
            WorkloadKind::Deployment => {
                for _ in mine.len()..desired {
                    self.create_pod(key, revision, containers, usage, None, None);
                }
                for p in mine.iter().skip(desired) {
                    self.pods.remove(p);
                }
            }
        }
    }

    fn create_pod(
        &mut self,
        key: &WorkloadKey,
        revision: &str,
        containers: &[Container],
        usage: &BTreeMap<String, Usage>,
        name: Option<String>,
        on_node: Option<String>,
    ) {
        self.serial += 1;
        let mut rng = Rng::new(self.seed, &format!("pod/{key}/{}", self.serial));
        let suffix = rng.suffix(5);
        let name = name.unwrap_or_else(|| match key.kind {
            WorkloadKind::Deployment => format!("{}-{revision}-{suffix}", key.name),
            _ => format!("{}-{suffix}", key.name),
        });
        let uid = rng.uuid();
        let requests = total_requests(containers.iter().map(|c| &c.resources));
        let node = self.nodes.iter().find(|n| {
            let used = self.used_on(&n.name, None);
            on_node.as_ref().is_none_or(|want| want == &n.name)
                && used.0 + requests.0 <= n.allocatable_cpu
                && used.1 + requests.1 <= n.allocatable_memory
        });
        let node_name = node.map(|n| n.name.clone());
        let now = self.now_ms;
        let mut labels = self.workloads[key].workload.selector.clone();
        let revision_label = match key.kind {
            WorkloadKind::Deployment => "pod-template-hash",
            _ => "controller-revision-hash",
        };
        labels.insert(revision_label.into(), revision.into());
        let resources: Vec<Resources> = containers.iter().map(|c| c.resources).collect();
        let pod = crate::cluster::Pod {
            pod: PodRef::new(&key.namespace, &name),
            uid: uid.clone(),
            owner: Some(key.clone()),
            node: node_name.clone(),
            phase: if node_name.is_some() {
                PodPhase::Running
            } else {
                PodPhase::Pending
            },
            ready: node_name.is_some(),
            qos: Some(crate::cluster::QosClass::of(&resources)),
            generation: 1,
            observed_generation: node_name.as_ref().map(|_| 1),
            labels,
            revision: Some(revision.into()),
            containers: containers.to_vec(),
            statuses: Vec::new(),
            resize: ResizeState::Settled,
            created_ms: Some(now),
            deleting: false,
        };
        let runs = containers
            .iter()
            .map(|c| {
                ContainerRun::start(
                    &c.name,
                    usage.get(&c.name).copied().unwrap_or_default(),
                    c.resources,
                    c.resize_policy,
                    now,
                )
            })
            .collect();
        let mut sim = SimPod {
            pod,
            runs,
            allocated: resources,
            actuating: None,
        };
        sim.refresh_statuses();
        self.pods.insert(PodRef::new(&key.namespace, &name), sim);
    }

    /// Requests admitted on `node` (millicores, bytes), leaving out `except`.
    pub(super) fn used_on(&self, node: &str, except: Option<&PodRef>) -> (u64, u64) {
        total_requests(
            self.pods
                .values()
                .filter(|p| p.pod.node.as_deref() == Some(node) && Some(&p.pod.pod) != except)
                .flat_map(|p| p.allocated.iter()),
        )
    }

    fn run_kubelet(&mut self) {
        let refs: Vec<PodRef> = self.pods.keys().cloned().collect();
        let (seed, now) = (self.seed, self.now_ms);
        for r in refs {
            let verdict = self.judge_resize(&r);
            let Some(p) = self.pods.get_mut(&r) else {
                continue;
            };
            if p.pod.node.is_none() {
                continue;
            }
            if let Some(target) = p.actuating.take() {
                for (run, res) in p.runs.iter_mut().zip(&target) {
                    run.resize(*res, now);
                }
                p.pod.resize = ResizeState::Settled;
                p.pod.observed_generation = Some(p.pod.generation);
            } else if let Some(verdict) = verdict {
                let target: Vec<Resources> = p.pod.containers.iter().map(|c| c.resources).collect();
                if verdict == ResizeState::Settled {
                    p.allocated = target.clone();
                    p.actuating = Some(target);
                    p.pod.resize = ResizeState::InProgress { error: None };
                } else {
                    p.pod.resize = verdict;
                }
                p.pod.observed_generation = Some(p.pod.generation);
            }
            for run in &mut p.runs {
                run.advance(seed, &p.pod.uid, now);
            }
            p.refresh_statuses();
        }
    }

    /// The kubelet's verdict on a pending resize of `r`, if one is due.
    fn judge_resize(&self, r: &PodRef) -> Option<ResizeState> {
        let p = self.pods.get(r)?;
        let node = self
            .nodes
            .iter()
            .find(|n| Some(&n.name) == p.pod.node.as_ref())?;
        let target: Vec<Resources> = p.pod.containers.iter().map(|c| c.resources).collect();
        let current: Vec<Resources> = p.runs.iter().map(|c| c.actual).collect();
        let due = matches!(p.pod.resize, ResizeState::Deferred { .. })
            || p.pod.observed_generation != Some(p.pod.generation);
        if p.actuating.is_some() || target == current || !due {
            return None;
        }
        let others = self.used_on(&node.name, Some(r));
        Some(judge(node, &current, &target, others))
    }

    fn count(&mut self) {
        for w in self.workloads.values_mut() {
            let key = &w.workload.key;
            w.workload.ready_replicas = self
                .pods
                .values()
                .filter(|p| p.pod.owner.as_ref() == Some(key) && p.pod.ready)
                .count() as i32;
        }
        for pdb in &mut self.pdbs {
            let healthy = self
                .pods
                .values()
                .filter(|p| {
                    p.pod.pod.namespace == pdb.namespace
                        && p.pod.ready
                        && pdb
                            .selector
                            .iter()
                            .all(|(k, v)| p.pod.labels.get(k) == Some(v))
                })
                .count() as i32;
            let min = pdb
                .min_available
                .as_deref()
                .and_then(|m| m.parse::<i32>().ok())
                .unwrap_or(0);
            pdb.current_healthy = healthy;
            pdb.disruptions_allowed = (healthy - min).max(0);
        }
    }
}

impl SimPod {
    /// `status.containerStatuses` from the containers' runs.
    pub(super) fn refresh_statuses(&mut self) {
        if self.pod.node.is_none() {
            self.pod.statuses.clear();
            return;
        }
        self.pod.statuses = self
            .runs
            .iter()
            .zip(&self.allocated)
            .map(|(run, allocated)| crate::cluster::ContainerStatus {
                name: run.name.clone(),
                ready: true,
                restart_count: run.restarts,
                resources: Some(run.actual),
                allocated: Some(Resources {
                    cpu_request: allocated.cpu_request,
                    memory_request: allocated.memory_request,
                    ..Resources::default()
                }),
                last_termination: run.last_termination.clone(),
            })
            .collect();
    }
}
