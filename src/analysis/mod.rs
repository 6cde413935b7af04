//! The pure rightsizing engine: a clean-room implementation of the reference analysis
//! contract (`shared/spec/analysis-contract.md`, input v2, output v3, detector "8").
//!
//! It turns per-container usage observations and a policy into CPU and memory
//! request/limit recommendations with evidence, data quality, notices and a decision
//! trace. It performs no IO, reads no clock, uses no randomness and never mutates its
//! input; output order is deterministic. Map of the files:
//!
//! * `policy` — defaults, validation, `policyVersion`.
//! * `input` / `series` / `output` / `trace` — the JSON contract types.
//! * `validate` — whole-input checks and container order.
//! * `container` → `resource` — the per-container and per-resource pipelines.
//! * `release` — release-boundary inference; `guards` — identity, settings, inventory.
//! * `normalize` — sample conversion; `usage` — aggregation, coverage, confidence;
//!   `gaps` — exact shortcuts for regular scrape intervals.
//! * `fallback` — previous releases; `oom` — OOM events and floors; `sizing` — values
//!   and per-setting guards.
//! * `leak` — the optional potential memory-leak detector (separately owned).
//! * `json` — Go-compatible encoding; `error` — the one error type.

pub mod leak;
pub mod reason;
pub mod series;

mod container;
mod context;
pub mod error;
mod fallback;
mod gaps;
mod guards;
pub mod input;
pub mod json;
mod normalize;
mod oom;
pub mod output;
pub mod policy;
mod release;
mod resource;
mod sizing;
pub mod trace;
mod usage;
mod validate;

pub use error::Error;
pub use input::{
    ContainerObservation, CurrentIdentity, Input, Inventory, PreviousRelease, ResourceObservation,
    Signal, Target, INPUT_SCHEMA_VERSION,
};
pub use normalize::normalize_samples;
pub use output::{
    DataQuality, OomAdjustment, Output, QualityStatus, Recommendation, Resource, ResourceAnalysis,
    ResourceEvidence, RolloutFallback, Setting, DETECTOR_VERSION, OUTPUT_SCHEMA_VERSION,
};
pub use policy::{
    default_policy, normalize_policy, policy_version, Bounds, CpuPolicy, EvidencePolicy,
    MemoryPolicy, Policy,
};
pub use reason::Reason;
pub use series::{OomKill, Sample, SampleKind, Series};

use serde::Deserialize;

/// Analyzes `input` under `policy`. Pure and deterministic; `input` is not mutated.
pub fn analyze(input: &Input, policy: &Policy) -> Result<Output, Error> {
    validate::validate_header(input)?;
    let policy = normalize_policy(policy)?;
    let policy_version = policy::version_of_normalized(&policy)?;
    let order = validate::validate_containers(input)?;
    let mut results = Vec::with_capacity(order.len() * 2);
    for index in order {
        results.extend(container::analyze_container(input, index, &policy)?);
    }
    Ok(Output {
        schema_version: OUTPUT_SCHEMA_VERSION.to_string(),
        detector_version: DETECTOR_VERSION.to_string(),
        policy_version,
        effective_policy: policy,
        results,
    })
}

/// Byte-level entry point for the CLI: decodes the input (and optional policy) JSON,
/// analyzes, and encodes the output like Go's encoder (`pretty`: 2-space indent).
/// Every error is one line naming what is wrong.
pub fn analyze_json(input: &[u8], policy: Option<&[u8]>, pretty: bool) -> Result<Vec<u8>, Error> {
    let input: Input = match serde_json::from_slice(input) {
        Ok(input) => input,
        Err(e) => {
            // A document of another schema often fails to decode; name the schema instead.
            if let Some(version) = probe_schema_version(input) {
                if version != INPUT_SCHEMA_VERSION {
                    return Err(validate::schema_error(&version));
                }
            }
            return Err(Error::input(format!("JSON: {e}")));
        }
    };
    let policy: Policy = match policy {
        Some(bytes) => {
            serde_json::from_slice(bytes).map_err(|e| Error::policy(format!("JSON: {e}")))?
        }
        None => Policy::default(),
    };
    let output = analyze(&input, &policy)?;
    if pretty {
        json::to_vec_pretty(&output)
    } else {
        json::to_vec_compact(&output)
    }
}

fn probe_schema_version(input: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct Probe {
        #[serde(rename = "schemaVersion")]
        schema_version: Option<String>,
    }
    serde_json::from_slice::<Probe>(input).ok()?.schema_version
}

#[cfg(test)]
#[path = "policy_tests.rs"]
mod policy_tests;
