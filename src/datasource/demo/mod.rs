//! The built-in demo datasource: a deterministic, seeded synthetic fleet (two clusters,
//! about sixty workloads). It answers the same raw queries the Prometheus client issues
//! (`raw`), so mapping, analysis, runs and the API downstream are the real code.

pub mod fleet;
pub mod generate;

use std::time::Instant;

use crate::analysis::{Input, Series, INPUT_SCHEMA_VERSION};
use crate::datasource::mapping::{map_batch, PodIndex};
use crate::datasource::{
    ClusterScope, CollectStats, Collection, DatasourceError, Source, TestReport, UsageResource,
    Window,
};

/// The demo fleet for one seed. Cheap to clone; generates on demand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DemoFleet {
    pub seed: u64,
}

impl DemoFleet {
    pub fn new(seed: u64) -> DemoFleet {
        DemoFleet { seed }
    }

    /// The cluster names the demo serves.
    pub fn clusters() -> &'static [&'static str] {
        fleet::CLUSTERS
    }

    fn answers(
        &self,
        scope: &ClusterScope,
        window: Window,
    ) -> Result<generate::Answers, DatasourceError> {
        if window.end_ms <= window.start_ms || window.step_seconds == 0 {
            return Err(DatasourceError::Invalid(
                "window must have end > start and a positive step".into(),
            ));
        }
        let specs = fleet::workloads(&scope.cluster).ok_or_else(|| {
            DatasourceError::Query(format!(
                "the demo fleet has no cluster {:?} (it has {})",
                scope.cluster,
                fleet::CLUSTERS.join(", ")
            ))
        })?;
        Ok(generate::generate(
            self.seed,
            &scope.cluster,
            &specs,
            window,
        ))
    }

    /// Synchronous collection (the demo does no IO).
    pub fn collect_now(
        &self,
        scope: &ClusterScope,
        window: Window,
    ) -> Result<Collection, DatasourceError> {
        let started = Instant::now();
        let answers = self.answers(scope, window)?;
        let generated = started.elapsed();
        let series = (answers.usage.cpu.len() + answers.usage.memory.len()) as u64;
        let samples = answers
            .usage
            .cpu
            .iter()
            .chain(&answers.usage.memory)
            .map(|s| s.samples.len() as u64)
            .sum();
        let pods = PodIndex::build(&answers.inventory);
        let (containers, workloads) = map_batch(window, &pods, &answers.settings, answers.usage);
        let total = started.elapsed();
        Ok(Collection {
            input: Input {
                schema_version: INPUT_SCHEMA_VERSION.to_string(),
                evaluation_time: window.end_ms,
                window_start: window.start_ms,
                containers,
            },
            workloads,
            stats: CollectStats {
                queries: 0,
                series,
                samples,
                phase_ms: vec![
                    ("usage".into(), generated.as_millis() as u64),
                    ("map".into(), (total - generated).as_millis() as u64),
                ],
            },
        })
    }
}

impl Source for DemoFleet {
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
        workload: (&str, &str, &str),
        container: &str,
        resource: UsageResource,
        window: Window,
    ) -> Result<Vec<Series>, DatasourceError> {
        let collection = self.collect_now(scope, window)?;
        let (ns, kind, name) = workload;
        let found = collection.input.containers.into_iter().find(|c| {
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
