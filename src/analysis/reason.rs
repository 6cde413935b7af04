//! The reason and notice vocabulary of the analysis contract (`analysis-contract.md`,
//! "Enumerations"). The JSON strings are contract data: never rename one.

use serde::{Deserialize, Serialize};

/// A data-quality reason, no-action reason, trace reason or notice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reason {
    InferredReleaseStart,
    MissingIdentity,
    AmbiguousIdentity,
    StaleIdentity,
    UnknownReleaseStart,
    MissingUsage,
    UnknownSeriesIdentity,
    InsufficientHistory,
    InsufficientSamples,
    SparseCoverage,
    StaleUsage,
    MissingCurrentRequest,
    StaleCurrentRequest,
    MissingCurrentLimit,
    StaleCurrentLimit,
    UnknownInventory,
    StaleInventory,
    IncompleteInventory,
    ExcludedContainers,
    NoMaterialChange,
    BoundApplied,
    LimitChangesDisabled,
    OomKillDetected,
    UnknownOomMemoryLimit,
    PreviousReleaseUsage,
    PotentialMemoryLeak,
    SustainedMemoryBaselineGrowth,
    NoSustainedMemoryBaselineGrowth,
    MemoryBaselinePlateauOrRecovery,
    InsufficientMemoryTrendBuckets,
    MemoryTrendOutsideNumericRange,
}

impl Reason {
    /// The contract string, as serialized.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::InferredReleaseStart => "inferred-release-start",
            Reason::MissingIdentity => "missing-identity",
            Reason::AmbiguousIdentity => "ambiguous-identity",
            Reason::StaleIdentity => "stale-identity",
            Reason::UnknownReleaseStart => "unknown-release-start",
            Reason::MissingUsage => "missing-usage",
            Reason::UnknownSeriesIdentity => "unknown-series-identity",
            Reason::InsufficientHistory => "insufficient-history",
            Reason::InsufficientSamples => "insufficient-samples",
            Reason::SparseCoverage => "sparse-coverage",
            Reason::StaleUsage => "stale-usage",
            Reason::MissingCurrentRequest => "missing-current-request",
            Reason::StaleCurrentRequest => "stale-current-request",
            Reason::MissingCurrentLimit => "missing-current-limit",
            Reason::StaleCurrentLimit => "stale-current-limit",
            Reason::UnknownInventory => "unknown-inventory",
            Reason::StaleInventory => "stale-inventory",
            Reason::IncompleteInventory => "incomplete-inventory",
            Reason::ExcludedContainers => "excluded-containers",
            Reason::NoMaterialChange => "no-material-change",
            Reason::BoundApplied => "bound-applied",
            Reason::LimitChangesDisabled => "limit-changes-disabled",
            Reason::OomKillDetected => "oom-kill-detected",
            Reason::UnknownOomMemoryLimit => "unknown-oom-memory-limit",
            Reason::PreviousReleaseUsage => "previous-release-usage",
            Reason::PotentialMemoryLeak => "potential-memory-leak",
            Reason::SustainedMemoryBaselineGrowth => "sustained-memory-baseline-growth",
            Reason::NoSustainedMemoryBaselineGrowth => "no-sustained-memory-baseline-growth",
            Reason::MemoryBaselinePlateauOrRecovery => "memory-baseline-plateau-or-recovery",
            Reason::InsufficientMemoryTrendBuckets => "insufficient-memory-trend-buckets",
            Reason::MemoryTrendOutsideNumericRange => "memory-trend-outside-numeric-range",
        }
    }
}
