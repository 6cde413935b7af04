//! `GET /v1/clusters/{cluster}/config`: everything the agent needs to decide, at the
//! hub's time. Pause flags and scope, the cluster-wide freeze, the agent settings, the
//! server time, and per workload its effective mode, effective policy and the policy's
//! identity (a recommendation made under another identity is `RecommendationStale`).

use serde::{Deserialize, Serialize};

use super::actor::Actor;
use crate::policy::{EffectiveMode, EffectivePolicy};

/// The config feed of one cluster.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigFeed {
    pub cluster: String,
    /// The hub's now (RFC 3339): the time every flag and expiry here was judged at.
    pub server_time: String,
    pub flags: FeedFlags,
    /// The pause in force (the fleet's wins over the cluster's), if any.
    pub pause: Option<Pause>,
    /// The cluster-wide freeze in force; `enabled: false` when there is none.
    pub freeze: Freeze,
    pub agent: AgentSettings,
    /// Every workload of the cluster the hub knows (stale ones included).
    pub workloads: Vec<WorkloadConfig>,
}

/// What stops the agent from changing anything, at a glance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeedFlags {
    /// Automation paused: report `blocked Paused` with `details.pauseScope`.
    pub paused: bool,
    /// `cluster` or `fleet` while paused.
    pub pause_scope: Option<PauseScope>,
    /// The cluster-wide freeze is on: report `blocked FreezeWindow`.
    pub frozen: bool,
}

/// Which pause applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum PauseScope {
    Cluster,
    Fleet,
}

impl PauseScope {
    /// `cluster` or `fleet`.
    pub fn as_str(self) -> &'static str {
        match self {
            PauseScope::Cluster => "cluster",
            PauseScope::Fleet => "fleet",
        }
    }
}

/// A pause of automation (also the API's representation of one, and the `before`/`after`
/// of its audit rows). `paused: false` with only `id` and `scope` when not paused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Pause {
    /// The cluster's name, or `*` for the fleet.
    pub id: String,
    pub scope: PauseScope,
    pub paused: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused_by: Option<Actor>,
    /// When the hub resumes it on its own (RFC 3339), if set. Present (as `null` when
    /// unset) on every pause in force.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_at: Option<Option<String>>,
}

/// The cluster-wide freeze: no change and no release of field ownership while on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Freeze {
    pub enabled: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// When it ends on its own (RFC 3339); `null` while on without an end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<Option<String>>,
}

impl Freeze {
    /// No freeze.
    pub fn off() -> Freeze {
        Freeze {
            enabled: false,
            reason: None,
            since: None,
            until: None,
        }
    }
}

/// How the agent runs, set by the hub.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentSettings {
    /// How often the agent runs its decision loop, in seconds.
    pub loop_interval_seconds: u64,
    /// How often it sends a heartbeat, in seconds.
    pub heartbeat_interval_seconds: u64,
    /// Changes smaller than this fraction are skipped as `NoSignificantChange` unless a
    /// policy sets its own tolerance.
    pub change_tolerance_default: f64,
    /// Events buffered while the hub is unreachable (oldest dropped first).
    pub event_buffer_size: u32,
}

impl Default for AgentSettings {
    /// The build's defaults (the hub's `[agents]` section may change the intervals and
    /// the buffer).
    fn default() -> Self {
        AgentSettings {
            loop_interval_seconds: 30,
            heartbeat_interval_seconds: 30,
            change_tolerance_default: crate::policy::defaults::CHANGE_TOLERANCE,
            event_buffer_size: 10_000,
        }
    }
}

/// One workload's effective policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkloadConfig {
    pub workload_id: String,
    pub namespace: String,
    pub kind: String,
    pub name: String,
    /// The effective mode per resource (also inside `policy`).
    pub mode: EffectiveMode,
    /// The identity of `policy`; recommendations made under another are stale.
    pub policy_identity: String,
    pub policy: EffectivePolicy,
}
