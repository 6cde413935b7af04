//! `POST /v1/clusters/{cluster}/heartbeat`: the agent says it is alive, with its version,
//! the cluster's Kubernetes version and its capabilities; the hub answers with the
//! cluster's readiness.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// What the agent sends every heartbeat interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Heartbeat {
    /// 1 to 100 characters.
    pub agent_version: String,
    /// 1 to 100 characters.
    pub kubernetes_version: String,
    /// What the agent can do here, e.g. `{"inPlaceResize": true}`; at most 64 entries
    /// and 8 KiB.
    #[serde(default)]
    pub capabilities: Map<String, Value>,
}

/// A cluster's readiness (`docs/contracts/readiness.md`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Readiness {
    pub cluster: String,
    /// `ready`, `degraded` or `not-ready`.
    pub state: String,
    /// Why it is not `ready`, worst first.
    pub reasons: Vec<String>,
    /// Each check (`heartbeat`, `datasource`, `lastRun`) with its status and detail.
    pub checks: Value,
    /// Since when the state holds (RFC 3339).
    pub since: String,
    pub evaluated_at: String,
}
