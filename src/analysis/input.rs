//! `resource-analysis-input/v2` (contract §2): the caller's normalized observations.
//! Missing fields decode as zero values, as Go's decoder does; unknown fields are ignored.

use serde::{Deserialize, Serialize};

use super::series::{OomKill, Series};

/// The only accepted input schema.
pub const INPUT_SCHEMA_VERSION: &str = "resource-analysis-input/v2";

/// One analysis request: a window and the containers observed in it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Input {
    /// Must be `resource-analysis-input/v2`.
    pub schema_version: String,
    /// Analysis "now", Unix milliseconds.
    pub evaluation_time: i64,
    /// Earliest time considered, Unix milliseconds; > 0.
    pub window_start: i64,
    /// One entry per logical container; order is irrelevant.
    pub containers: Vec<ContainerObservation>,
}

/// Everything known about one logical container.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ContainerObservation {
    /// Which container and which rollout is analyzed.
    pub target: Target,
    /// The current workload identity as the adapter saw it.
    pub identity: CurrentIdentity,
    /// How many replicas should have been observed.
    pub inventory: Inventory,
    /// CPU series and current CPU settings.
    pub cpu: ResourceObservation,
    /// Memory series and current memory settings.
    pub memory: ResourceObservation,
    /// OOM terminations; absence means "no evidence", not "no kills".
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub oom_kills: Vec<OomKill>,
    /// Earlier rollouts, newest first; only the first three are examined.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub previous_releases: Vec<PreviousRelease>,
}

/// The logical container and the selected rollout.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct Target {
    /// Kubernetes namespace.
    pub namespace: String,
    /// Workload kind, e.g. `Deployment`.
    pub kind: String,
    /// Workload name.
    pub name: String,
    /// Container name.
    pub container: String,
    /// The workload UID whose series are selected.
    #[serde(rename = "workloadUID")]
    pub workload_uid: String,
    /// The release whose series are selected.
    pub release: String,
}

/// The current workload identity (echoed, after inference, in evidence).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct CurrentIdentity {
    /// False when the adapter could not establish the identity.
    pub available: bool,
    /// Must equal the target's workload UID.
    #[serde(rename = "workloadUID")]
    pub workload_uid: String,
    /// Must equal the target's release.
    pub release: String,
    /// When the identity was observed; freshness-checked.
    pub timestamp: i64,
    /// Activation boundary; 0 lets the engine infer it.
    pub release_started_at: i64,
    /// The adapter's sources disagree.
    pub ambiguous: bool,
    /// Output only: the engine inferred or moved `releaseStartedAt`.
    pub release_start_inferred: bool,
}

/// The inventory denominator for the selected rollout.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Inventory {
    /// False when the source cannot supply the denominator.
    pub available: bool,
    /// When the inventory was observed; freshness-checked.
    pub timestamp: i64,
    /// Containers that should exist.
    pub eligible: i64,
    /// Containers actually observed.
    pub observed: i64,
    /// Containers excluded from observation.
    pub excluded: i64,
}

/// Series and current settings of one resource.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ResourceObservation {
    /// One entry per container lifetime, any release.
    pub series: Vec<Series>,
    /// The request in force now.
    pub current_request: Signal,
    /// The limit in force now.
    pub current_limit: Signal,
}

/// A current setting (or, in output, the aggregated usage).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Signal {
    /// False means unknown.
    pub available: bool,
    /// With `available`: the setting is known to be absent; `value` is then 0.
    #[serde(skip_serializing_if = "is_false")]
    pub unset: bool,
    /// Millicores or bytes.
    pub value: f64,
    /// Source observation time, Unix milliseconds.
    pub timestamp: i64,
}

/// An earlier rollout that may supply usage when the current one cannot.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct PreviousRelease {
    /// The earlier release; empty or repeated entries are skipped.
    pub release: String,
    /// Its activation boundary; 0 = infer.
    #[serde(skip_serializing_if = "is_zero_i64")]
    pub release_started_at: i64,
    /// The last historical observation time.
    pub evaluation_time: i64,
    /// Its CPU series.
    pub cpu: Vec<Series>,
    /// Its memory series.
    pub memory: Vec<Series>,
}

fn is_false(v: &bool) -> bool {
    !*v
}

fn is_zero_i64(v: &i64) -> bool {
    *v == 0
}

impl Signal {
    /// The evidence form: an unavailable signal is all zeros.
    pub(crate) fn canonical(&self) -> Signal {
        if self.available {
            *self
        } else {
            Signal::default()
        }
    }
}
