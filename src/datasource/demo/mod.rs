//! The built-in demo datasource: a deterministic, seeded synthetic fleet (two clusters,
//! about sixty workloads). It answers the same raw queries the Prometheus client issues
//! (`raw`), so mapping, analysis, runs and the API downstream are the real code.

pub mod generate;
mod pods;

use std::sync::Arc;
use std::time::Instant;

use crate::analysis::Series;
use crate::datasource::mapping::{map_batch, PodIndex};
use crate::datasource::{
    ClusterScope, CollectPlan, CollectStats, Collection, DatasourceError, Group, Source,
    TestReport, UsageResource, Window,
};
use crate::sim::catalogue::{self as fleet, WorkloadSpec};
use crate::sim::live::Live;

/// The demo fleet for one seed. Cheap to clone; generates on demand.
#[derive(Debug, Clone)]
pub struct DemoFleet {
    pub seed: u64,
    /// Changes made to the fleet while the demo runs (the in-process agents').
    live: Live,
}

impl DemoFleet {
    pub fn new(seed: u64) -> DemoFleet {
        DemoFleet::with_live(seed, Live::default())
    }

    /// The fleet whose workloads carry the changes recorded in `live`.
    pub fn with_live(seed: u64, live: Live) -> DemoFleet {
        DemoFleet { seed, live }
    }

    /// The cluster names the demo serves.
    pub fn clusters() -> &'static [&'static str] {
        fleet::CLUSTERS
    }

    fn specs(
        &self,
        scope: &ClusterScope,
        window: Window,
    ) -> Result<Vec<WorkloadSpec>, DatasourceError> {
        if window.end_ms <= window.start_ms || window.step_seconds == 0 {
            return Err(DatasourceError::Invalid(
                "window must have end > start and a positive step".into(),
            ));
        }
        let mut specs = fleet::workloads(&scope.cluster).ok_or_else(|| {
            DatasourceError::Query(format!(
                "the demo fleet has no cluster {:?} (it has {})",
                scope.cluster,
                fleet::CLUSTERS.join(", ")
            ))
        })?;
        for spec in &mut specs {
            self.live.apply(&scope.cluster, spec);
        }
        crate::sim::guarded::with_past(&mut specs, window.end_ms);
        Ok(specs)
    }

    /// The plan: the whole fleet's inventory, one group per namespace (so runs on the
    /// demo go through the same group-by-group pipeline as Prometheus).
    pub fn plan_now(
        &self,
        scope: &ClusterScope,
        window: Window,
    ) -> Result<CollectPlan, DatasourceError> {
        let started = Instant::now();
        let specs = self.specs(scope, window)?;
        let answers = generate::generate(self.seed, &scope.cluster, &specs, window);
        let pods = PodIndex::build(&answers.inventory);
        let groups = pods
            .workloads_by_namespace()
            .into_iter()
            .map(|(namespace, workloads)| Group {
                namespaces: vec![namespace],
                pods: Vec::new(),
                pod_count: workloads.values().map(|w| w.pods.len()).sum(),
                workloads: workloads.values().filter(|w| w.alive).count(),
            })
            .collect();
        Ok(CollectPlan {
            scope: scope.clone(),
            window,
            groups,
            pods: Arc::new(pods),
            stats: CollectStats {
                phase_ms: vec![("inventory".into(), started.elapsed().as_millis() as u64)],
                ..CollectStats::default()
            },
        })
    }

    /// One namespace group: only its workloads are generated (each from its own seed,
    /// so the samples are those of a whole-fleet generation).
    pub fn collect_group_now(
        &self,
        plan: &CollectPlan,
        index: usize,
    ) -> Result<Collection, DatasourceError> {
        let window = plan.window;
        let group = plan
            .groups
            .get(index)
            .ok_or_else(|| DatasourceError::Invalid(format!("the plan has no group {index}")))?;
        let started = Instant::now();
        let specs: Vec<WorkloadSpec> = self
            .specs(&plan.scope, window)?
            .into_iter()
            .filter(|s| {
                group.namespaces.is_empty() || group.namespaces.iter().any(|n| n == s.namespace)
            })
            .collect();
        let answers = generate::generate(self.seed, &plan.scope.cluster, &specs, window);
        let generated = started.elapsed();
        let series = (answers.usage.cpu.len() + answers.usage.memory.len()) as u64;
        let samples = answers
            .usage
            .cpu
            .iter()
            .chain(&answers.usage.memory)
            .map(|s| s.samples.len() as u64)
            .sum();
        let (containers, workloads) =
            map_batch(window, &plan.pods, &answers.settings, answers.usage);
        let total = started.elapsed();
        let mut out = Collection::empty(window);
        out.input.containers = containers;
        out.workloads = workloads;
        out.sort();
        out.stats = CollectStats {
            queries: 0,
            series,
            samples,
            phase_ms: vec![
                ("usage".into(), generated.as_millis() as u64),
                ("map".into(), (total - generated).as_millis() as u64),
            ],
            ..CollectStats::default()
        };
        Ok(out)
    }

    /// Synchronous collection of the whole fleet (the demo does no IO).
    pub fn collect_now(
        &self,
        scope: &ClusterScope,
        window: Window,
    ) -> Result<Collection, DatasourceError> {
        let plan = self.plan_now(scope, window)?;
        let mut all = Collection::empty(window);
        all.stats = plan.stats.clone();
        for index in 0..plan.groups.len() {
            all.absorb(self.collect_group_now(&plan, index)?);
        }
        all.sort();
        Ok(all)
    }
}

impl Source for DemoFleet {
    async fn plan(
        &self,
        scope: &ClusterScope,
        window: Window,
    ) -> Result<CollectPlan, DatasourceError> {
        self.plan_now(scope, window)
    }

    async fn collect_group(
        &self,
        plan: &CollectPlan,
        index: usize,
    ) -> Result<Collection, DatasourceError> {
        self.collect_group_now(plan, index)
    }

    async fn collect(
        &self,
        scope: &ClusterScope,
        window: Window,
    ) -> Result<Collection, DatasourceError> {
        self.collect_now(scope, window)
    }

    async fn usage(
        &self,
        scope: &ClusterScope,
        workload: &crate::workload::WorkloadKey,
        container: &str,
        resource: UsageResource,
        window: Window,
    ) -> Result<Vec<Series>, DatasourceError> {
        // Only this workload is generated (its samples do not depend on the others).
        let (ns, kind, name) = (
            workload.namespace.as_str(),
            workload.kind.as_str(),
            workload.name.as_str(),
        );
        let specs: Vec<WorkloadSpec> = self
            .specs(scope, window)?
            .into_iter()
            .filter(|s| s.namespace == ns && s.name == name)
            .collect();
        let answers = generate::generate(self.seed, &scope.cluster, &specs, window);
        let pods = PodIndex::build(&answers.inventory);
        let (containers, _) = map_batch(window, &pods, &answers.settings, answers.usage);
        let found = containers.into_iter().find(|c| {
            c.target.namespace == ns
                && c.target.kind == kind
                && c.target.name == name
                && c.target.container == container
        });
        Ok(found
            .map(|c| match resource {
                UsageResource::Cpu => c.cpu.series,
                UsageResource::Memory => c.memory.series,
            })
            .unwrap_or_default())
    }

    async fn test(&self, scope: &ClusterScope) -> Result<TestReport, DatasourceError> {
        let known = fleet::workloads(&scope.cluster).is_some();
        Ok(TestReport {
            remote_read: None,
            protocol: None,
            reachable: true,
            authenticated: true,
            missing_metrics: Vec::new(),
            message: if known {
                format!("demo fleet serves cluster {}", scope.cluster)
            } else {
                format!("the demo fleet has no cluster {:?}", scope.cluster)
            },
        })
    }
}

#[cfg(test)]
mod tests;
