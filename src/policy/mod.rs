//! RightsizingPolicy: the document operators write (`model`), its validation with JSON
//! paths (`validate`), effective-policy resolution with provenance and a stable identity
//! (`resolve`), and the loaded inputs of resolution for many workloads (`set`). Pure:
//! storage and HTTP live in `store` and `api`.
//! docs/contracts/policy.md describes the model for users.

pub mod defaults;
pub mod from_cluster;
pub mod glob;
pub mod model;
pub mod presets;
pub mod resolve;
pub mod set;
pub mod validate;

pub use model::{Mode, ModeSpec, OverrideSpec, PolicySpec, Selector, Strategy};
pub use resolve::{
    resolve, EffectiveApply, EffectiveGuardrails, EffectiveMode, EffectivePolicy,
    EffectiveRollback, Origin, Resolution, StoredPolicy, WorkloadRef,
};
pub use set::{PolicySet, StoredOverride};
pub use validate::{validate_override, validate_policy, FieldError};
