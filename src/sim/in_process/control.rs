//! What the controllers and the kubelet do between two moments in the in-process
//! cluster: Deployments keep their replicas of the current template (a changed template
//! replaces the pods), pods are bound to the first node they fit, the kubelet actuates
//! or judges resizes and runs the containers (OOM kills, throttling), PDBs count.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{SimPod, SimWorkload, State, WorkloadSpec};
use crate::cluster::{
    total_requests, ClusterError, Container, FieldOwner, OwnerRef, PodPhase, PodRef, ResizeState,
    ResourceField, Resources, RolloutStatus, UpdateStrategy, Workload, WorkloadKey, WorkloadKind,
};
use crate::sim::kubelet::{judge, ContainerRun, Usage};
use crate::sim::shape::Rng;

/// A workload's current template, as the controllers read it in one step.
struct Template<'a> {
    key: &'a WorkloadKey,
    revision: &'a str,
    containers: &'a [Container],
    usage: &'a BTreeMap<String, Usage>,
}

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
            node_selector: Default::default(),
            rollout: Default::default(),
            update_revision: None,
            created_ms: Some(self.now_ms),
        };
        let revision = template_hash(&workload.containers);
        self.workloads.insert(
            key.clone(),
            SimWorkload {
                workload: Arc::new(workload),
                usage: spec.usage,
                revisions: vec![(revision.clone(), self.now_ms)],
                revision,
                progress_since_ms: self.now_ms,
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
        // One pass over the pods: who owns which, and what each node has admitted, so a
        // step stays linear in pods and workloads (the demo and the benchmark run
        // thousands).
        let mut owned: BTreeMap<WorkloadKey, Vec<PodRef>> = BTreeMap::new();
        for (r, p) in &self.pods {
            if let Some(o) = &p.pod.owner {
                owned.entry(o.clone()).or_default().push(r.clone());
            }
        }
        let mut used = self.node_usage();
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
            let mut mine = owned.remove(&key).unwrap_or_default();
            // Pods of an older template are replaced (all at once: the sim has no surge),
            // except under OnDelete, where they stay until deleted or evicted.
            if !on_delete {
                mine.retain(|r| {
                    let current = self.pods[r].pod.revision.as_deref() == Some(&revision);
                    if !current {
                        self.forget(r, &mut used);
                    }
                    current
                });
            }
            let t = Template {
                key: &key,
                revision: &revision,
                containers: &containers,
                usage: &usage,
            };
            self.scale_to(&t, desired, mine, &mut used);
            if let Some(w) = self.workloads.get_mut(&key) {
                if !w.revisions.iter().any(|(r, _)| *r == revision) {
                    w.revisions.push((revision.clone(), self.now_ms));
                    let extra = w.revisions.len().saturating_sub(super::REVISION_HISTORY);
                    w.revisions.drain(..extra);
                }
                w.revision = revision.clone();
                let workload = Arc::make_mut(&mut w.workload);
                workload.observed_generation = Some(workload.generation);
                if key.kind == WorkloadKind::StatefulSet {
                    workload.update_revision = Some(revision);
                }
            }
        }
    }

    /// Requests admitted per node (millicores, bytes).
    fn node_usage(&self) -> BTreeMap<String, (u64, u64)> {
        let mut used: BTreeMap<String, (u64, u64)> = BTreeMap::new();
        for p in self.pods.values() {
            if let Some(n) = &p.pod.node {
                let (c, m) = total_requests(p.allocated.iter());
                let e = used.entry(n.clone()).or_default();
                *e = (e.0 + c, e.1 + m);
            }
        }
        used
    }

    /// Removes pod `r`, giving its node back what it admitted.
    fn forget(&mut self, r: &PodRef, used: &mut BTreeMap<String, (u64, u64)>) {
        if let Some(p) = self.pods.remove(r) {
            if let Some(e) = p.pod.node.as_ref().and_then(|n| used.get_mut(n)) {
                let (c, m) = total_requests(p.allocated.iter());
                *e = (e.0.saturating_sub(c), e.1.saturating_sub(m));
            }
        }
    }

    /// Creates missing pods and removes extra ones (StatefulSets by ordinal, DaemonSets
    /// one per node, Deployments by count); `mine` are the workload's pods now.
    fn scale_to(
        &mut self,
        t: &Template,
        desired: usize,
        mine: Vec<PodRef>,
        used: &mut BTreeMap<String, (u64, u64)>,
    ) {
        let key = t.key;
        match key.kind {
            WorkloadKind::StatefulSet => {
                for ordinal in 0..desired {
                    let name = format!("{}-{ordinal}", key.name);
                    if !mine.iter().any(|p| p.name == name) {
                        self.create_pod(t, Some(name), None, used);
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
                    self.forget(p, used);
                }
            }
            WorkloadKind::DaemonSet => {
                let nodes: Vec<String> = self.nodes.iter().map(|n| n.name.clone()).collect();
                for node in nodes {
                    let present = mine
                        .iter()
                        .any(|r| self.pods.get(r).and_then(|p| p.pod.node.as_ref()) == Some(&node));
                    if !present {
                        self.create_pod(t, None, Some(node), used);
                    }
                }
            }
            WorkloadKind::Deployment | WorkloadKind::Rollout => {
                for _ in mine.len()..desired {
                    self.create_pod(t, None, None, used);
                }
                for p in mine.iter().skip(desired) {
                    self.forget(p, used);
                }
            }
            // The in-process sim runs no CronJob schedule: between runs a CronJob has
            // no pod (its runs' usage is the demo datasource's).
            WorkloadKind::CronJob => {
                for p in &mine {
                    self.forget(p, used);
                }
            }
        }
    }

    fn create_pod(
        &mut self,
        t: &Template,
        name: Option<String>,
        on_node: Option<String>,
        used: &mut BTreeMap<String, (u64, u64)>,
    ) {
        let (key, revision, containers, usage) = (t.key, t.revision, t.containers, t.usage);
        self.serial += 1;
        let mut rng = Rng::new(self.seed, &format!("pod/{key}/{}", self.serial));
        let suffix = rng.suffix(5);
        let name = name.unwrap_or_else(|| match key.kind {
            WorkloadKind::Deployment | WorkloadKind::Rollout => {
                format!("{}-{revision}-{suffix}", key.name)
            }
            _ => format!("{}-{suffix}", key.name),
        });
        let uid = rng.uuid();
        let requests = total_requests(containers.iter().map(|c| &c.resources));
        let node = self.nodes.iter().find(|n| {
            let now = used.get(&n.name).copied().unwrap_or_default();
            on_node.as_ref().is_none_or(|want| want == &n.name)
                && now.0 + requests.0 <= n.allocatable_cpu
                && now.1 + requests.1 <= n.allocatable_memory
        });
        let node_name = node.map(|n| n.name.clone());
        let resources: Vec<Resources> = containers.iter().map(|c| c.resources).collect();
        let ready = node_name.is_some() && self.starts(key, &resources);
        if let Some(n) = &node_name {
            let e = used.entry(n.clone()).or_default();
            *e = (e.0 + requests.0, e.1 + requests.1);
        }
        let now = self.now_ms;
        let mut labels = self.workloads[key].workload.selector.clone();
        let revision_label = match key.kind {
            WorkloadKind::Deployment => "pod-template-hash",
            WorkloadKind::Rollout => "rollouts-pod-template-hash",
            _ => "controller-revision-hash",
        };
        labels.insert(revision_label.into(), revision.into());
        let controller = match key.kind {
            WorkloadKind::Deployment | WorkloadKind::Rollout => {
                OwnerRef::new("ReplicaSet", &format!("{}-{revision}", key.name))
            }
            kind => OwnerRef::new(kind.as_str(), &key.name),
        };
        let pod = crate::cluster::Pod {
            pod: PodRef::new(&key.namespace, &name),
            uid: uid.clone(),
            owner: Some(key.clone()),
            controller: Some(controller),
            node: node_name.clone(),
            phase: if node_name.is_some() {
                PodPhase::Running
            } else {
                PodPhase::Pending
            },
            ready,
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
            // As the scheduler words it.
            unschedulable: node_name.is_none().then(|| {
                format!(
                    "0/{} nodes are available: insufficient cpu or memory for requests of {}m CPU and {} bytes",
                    self.nodes.len(),
                    requests.0,
                    requests.1
                )
            }),
        };
        // Drawn as the demo datasource draws the same container, so both agree.
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
                .drawn_as(format!("{}/{}/{}", key.namespace, key.name, c.name))
            })
            .collect();
        let mut sim = SimPod {
            pod: Arc::new(pod),
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
                let pod = Arc::make_mut(&mut p.pod);
                pod.resize = ResizeState::Settled;
                pod.observed_generation = Some(pod.generation);
            } else if let Some(verdict) = verdict {
                let target: Vec<Resources> = p.pod.containers.iter().map(|c| c.resources).collect();
                if verdict == ResizeState::Settled {
                    p.allocated = target.clone();
                    p.actuating = Some(target);
                    Arc::make_mut(&mut p.pod).resize = ResizeState::InProgress { error: None };
                } else {
                    Arc::make_mut(&mut p.pod).resize = verdict;
                }
                let pod = Arc::make_mut(&mut p.pod);
                pod.observed_generation = Some(pod.generation);
            }
            for run in &mut p.runs {
                run.advance(seed, now);
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
        // Per owner: ready pods, and the rollout's pods (all, of the current template,
        // available), not counting pods being deleted, as the controllers count them.
        // One pass over the pods, no list per owner: a step stays linear in pods.
        #[derive(Default)]
        struct Counts {
            /// The owner's current template revision (looked up once per owner).
            revision: Option<String>,
            ready: i32,
            total: i32,
            updated: i32,
            available: i32,
        }
        let mut counts: BTreeMap<&WorkloadKey, Counts> = BTreeMap::new();
        for p in self.pods.values() {
            let Some(o) = &p.pod.owner else { continue };
            let c = counts.entry(o).or_insert_with(|| Counts {
                revision: self.workloads.get(o).map(|w| w.revision.clone()),
                ..Counts::default()
            });
            c.ready += i32::from(p.pod.ready);
            if p.pod.deleting {
                continue;
            }
            c.total += 1;
            c.available += i32::from(p.pod.ready);
            c.updated += i32::from(c.revision.is_some() && p.pod.revision == c.revision);
        }
        for w in self.workloads.values_mut() {
            let mut c = counts.remove(&w.workload.key).unwrap_or_default();
            if w.workload.key.kind == WorkloadKind::CronJob {
                // Nothing rolls out: its next run takes the template (as the API
                // server's CronJob reads in `cluster::kube::cronjobs`).
                let n = w.workload.replicas;
                (c.ready, c.updated, c.total, c.available) = (n, n, n, n);
            }
            let now_ready = c.ready;
            let mut rollout = RolloutStatus {
                updated: c.updated,
                total: c.total,
                available: c.available,
                deadline_exceeded: None,
            };
            let was = &w.workload.rollout;
            if (was.updated, was.total, was.available)
                != (rollout.updated, rollout.total, rollout.available)
            {
                w.progress_since_ms = self.now_ms;
            }
            // The Deployment controller gives up on a rollout that stopped moving.
            let live = &w.workload;
            let done = rollout.done(live.replicas, live.observed_generation, live.generation);
            let deadline = self
                .startups
                .get(&live.key)
                .map_or(super::admission::PROGRESS_DEADLINE_MS, |s| {
                    s.progress_deadline_ms
                });
            if w.workload.key.kind == WorkloadKind::Deployment
                && !done
                && self.now_ms - w.progress_since_ms >= deadline
            {
                rollout.deadline_exceeded = Some(format!(
                    "ReplicaSet \"{}-{}\" has timed out progressing.",
                    w.workload.key.name, w.revision
                ));
            }
            // Written only when it moved: a snapshot still holding the workload keeps it.
            if w.workload.ready_replicas != now_ready || w.workload.rollout != rollout {
                let live = Arc::make_mut(&mut w.workload);
                live.ready_replicas = now_ready;
                live.rollout = rollout;
            }
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
            if !self.pod.statuses.is_empty() {
                Arc::make_mut(&mut self.pod).statuses.clear();
            }
            return;
        }
        let statuses: Vec<crate::cluster::ContainerStatus> = self
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
        if self.pod.statuses != statuses {
            Arc::make_mut(&mut self.pod).statuses = statuses;
        }
    }
}
