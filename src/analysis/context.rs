//! Per-container context shared by the resource pipeline, the previous-release fallback
//! and the leak hand-off: the normalized policy, the inferred identity and error paths.

use super::error::Error;
use super::input::{ContainerObservation, CurrentIdentity, ResourceObservation};
use super::normalize::SeriesFacts;
use super::output::Resource;
use super::policy::Policy;
use super::series::Series;
use super::usage::{measure_usage, Aggregation, Usage, UsageError, UsageView};

/// One container under analysis.
pub(crate) struct ContainerCtx<'a> {
    /// Position in the input `containers` array (for error paths).
    pub index: usize,
    pub container: &'a ContainerObservation,
    pub policy: &'a Policy,
    pub window_start: i64,
    pub evaluation_time: i64,
    /// The identity after release-boundary inference.
    pub identity: CurrentIdentity,
    /// The facts of the CPU and the memory series, in input order.
    pub facts: [Vec<SeriesFacts>; 2],
}

impl ContainerCtx<'_> {
    /// The observation of `resource`.
    pub(crate) fn observation(&self, resource: Resource) -> &ResourceObservation {
        match resource {
            Resource::Memory => &self.container.memory,
            Resource::Cpu => &self.container.cpu,
        }
    }

    /// The facts of the series of `resource`, parallel to its observation's series.
    pub(crate) fn facts(&self, resource: Resource) -> &[SeriesFacts] {
        match resource {
            Resource::Cpu => &self.facts[0],
            Resource::Memory => &self.facts[1],
        }
    }

    /// How `resource` series are aggregated under the policy.
    pub(crate) fn aggregation(&self, resource: Resource) -> Aggregation {
        match resource {
            Resource::Cpu if self.policy.cpu.strategy == "percentile" => {
                Aggregation::Percentile(self.policy.cpu.percentile)
            }
            _ => Aggregation::Maximum,
        }
    }

    /// Start of the current release segment.
    pub(crate) fn segment_start(&self) -> i64 {
        self.window_start.max(self.identity.release_started_at)
    }

    /// Measures `series` (with their `facts`) of `release` over `[start, end]`; `path`
    /// names the series array in the input for error messages.
    pub(crate) fn measure(
        &self,
        resource: Resource,
        (series, facts): (&[Series], &[SeriesFacts]),
        release: &str,
        (start, end): (i64, i64),
        path: &str,
    ) -> Result<Usage, Error> {
        let view = UsageView {
            series,
            facts,
            workload_uid: &self.container.target.workload_uid,
            release,
            start,
            evaluation_time: end,
            memory: resource == Resource::Memory,
            aggregation: self.aggregation(resource),
            evidence: &self.policy.evidence,
        };
        measure_usage(&view).map_err(|e| self.usage_error(resource, path, &e))
    }

    fn usage_error(&self, resource: Resource, path: &str, e: &UsageError) -> Error {
        let (series_index, text) = e.describe();
        let location = match series_index {
            Some(j) => format!("{path}[{j}]"),
            None => path.to_string(),
        };
        self.error(resource, &location, &text)
    }

    /// An input error located at `containers[i].<location>` and prefixed the way the
    /// reference engine prefixes resource errors (`<name> <resource>: `).
    pub(crate) fn error(&self, resource: Resource, location: &str, text: &str) -> Error {
        Error::input(format!(
            "containers[{}].{location}: {} {}: {text}",
            self.index,
            self.container.target.name,
            resource.as_str()
        ))
    }
}
