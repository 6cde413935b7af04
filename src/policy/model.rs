//! The RightsizingPolicy document as users write it. Every field is optional: a policy
//! states only what it wants to decide, and resolution (`resolve`) fills the rest from
//! lower-precedence policies and the defaults.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// What kerf may do with one resource of a workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// Nothing: no recommendation is acted on.
    Off,
    /// Recommend and record; apply only when an operator approves once.
    Audit,
    /// Apply automatically under the guardrails.
    AutoPatch,
}

/// How a change is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    InPlace,
    Rollout,
    Deferred,
}

/// A policy as stored and served: selectors, priority and the partial settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PolicySpec {
    /// Unique, DNS-label-like name.
    #[serde(default)]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Higher wins. Ties go to the more specific selector, then the name.
    #[serde(default)]
    pub priority: i32,
    #[serde(default)]
    pub selector: Selector,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ModeSpec>,
    /// The analysis engine's `Policy` (validated by the engine); merged as a whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub analysis: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guardrails: Option<GuardrailsSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apply: Option<ApplySpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hpa_coordination: Option<bool>,
}

/// Which workloads a policy applies to. Empty lists match everything; entries may use
/// `*` globs. All given conditions must hold.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Selector {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clusters: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub namespaces: Vec<String>,
    /// Exact label matches (`matchLabels`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kinds: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub names: Vec<String>,
}

/// Mode per resource.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ModeSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<Mode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<Mode>,
}

/// Guardrails the agent enforces before and after a change.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GuardrailsSpec {
    /// Minimum covered history before acting, e.g. `7d`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub learning_period: Option<String>,
    /// Minimum recommendation confidence, 0–95.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_confidence: Option<u32>,
    /// Minimum time between changes (or after a rollback), e.g. `24h`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cooldown: Option<String>,
    /// Changes within this fraction of the current value are skipped (0.05 = 5 %).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change_tolerance: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollback: Option<RollbackSpec>,
}

/// When the health watch restores the previous values.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RollbackSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oom_kills: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restarts: Option<u32>,
    /// Fraction of CPU periods throttled, 0–1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttling_ratio: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch_duration: Option<String>,
}

/// How and when changes are applied.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApplySpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<Strategy>,
    /// How long an in-place resize may stay `Deferred` before falling back to a rollout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback_after: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub maintenance_windows: Option<Vec<MaintenanceWindow>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub freeze_windows: Option<Vec<FreezeWindow>>,
}

/// A recurring window in which deferred changes may roll out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MaintenanceWindow {
    /// Five-field cron expression of the window start.
    pub cron: String,
    /// e.g. `2h`.
    pub duration: String,
    /// IANA time zone, default `UTC`.
    #[serde(default = "utc")]
    pub timezone: String,
}

/// A period with no changes: an absolute range, or a recurring cron + duration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FreezeWindow {
    /// RFC 3339 start of an absolute range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<String>,
    /// RFC 3339 end of an absolute range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cron: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<String>,
    #[serde(default = "utc")]
    pub timezone: String,
}

fn utc() -> String {
    "UTC".into()
}

/// The windows as the feeds read them: the same fields, but one this build does not know
/// is ignored, so an older agent reads a newer hub's feed (policies users write stay
/// strict). A field added to a window must be added here too: the conversions below
/// name every field, so the build says so.
pub mod lenient {
    use serde::{Deserialize, Deserializer};

    use super::{FreezeWindow, MaintenanceWindow};

    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Maintenance {
        cron: String,
        duration: String,
        #[serde(default = "super::utc")]
        timezone: String,
    }

    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Freeze {
        #[serde(default)]
        start: Option<String>,
        #[serde(default)]
        end: Option<String>,
        #[serde(default)]
        cron: Option<String>,
        #[serde(default)]
        duration: Option<String>,
        #[serde(default = "super::utc")]
        timezone: String,
    }

    pub fn maintenance_windows<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Vec<MaintenanceWindow>, D::Error> {
        let windows = Vec::<Maintenance>::deserialize(d)?;
        Ok(windows
            .into_iter()
            .map(|m| MaintenanceWindow {
                cron: m.cron,
                duration: m.duration,
                timezone: m.timezone,
            })
            .collect())
    }

    pub fn freeze_windows<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<FreezeWindow>, D::Error> {
        let windows = Vec::<Freeze>::deserialize(d)?;
        Ok(windows
            .into_iter()
            .map(|f| FreezeWindow {
                start: f.start,
                end: f.end,
                cron: f.cron,
                duration: f.duration,
                timezone: f.timezone,
            })
            .collect())
    }
}

/// A per-workload override set by an operator.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OverrideSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ModeSpec>,
    /// Containers kerf must leave alone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub excluded_containers: Vec<String>,
    /// RFC 3339; the override stops applying at this time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reason: String,
}
