//! An agent's audit event (`../shared/spec/events-contract.md`): what it decided or did
//! for one workload. The types and reasons are enums spelled exactly as the contract
//! spells them; each reason belongs to one type.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::policy::Strategy;

/// The event types agents send (`config_changed` is the hub's own and never one).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum EventType {
    /// A change became live.
    Applied,
    /// The agent deliberately did not act and nothing is wrong.
    Skipped,
    /// A guardrail prevented a change the mode would allow.
    Blocked,
    /// An in-place change switched to a rollout.
    Fallback,
    /// The health watch restored the previous values.
    RolledBack,
    /// The workload left `auto-patch`; field ownership was released.
    Released,
    /// An API call needed for an action failed after retries.
    Failed,
}

impl EventType {
    pub const ALL: [EventType; 7] = [
        EventType::Applied,
        EventType::Skipped,
        EventType::Blocked,
        EventType::Fallback,
        EventType::RolledBack,
        EventType::Released,
        EventType::Failed,
    ];

    /// The contract spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Applied => "applied",
            EventType::Skipped => "skipped",
            EventType::Blocked => "blocked",
            EventType::Fallback => "fallback",
            EventType::RolledBack => "rolled_back",
            EventType::Released => "released",
            EventType::Failed => "failed",
        }
    }

    /// The type spelled `s`, if it is one.
    pub fn parse(s: &str) -> Option<EventType> {
        EventType::ALL.into_iter().find(|t| t.as_str() == s)
    }

    /// The reasons of this type, in contract order.
    pub fn reasons(self) -> impl Iterator<Item = Reason> {
        Reason::ALL
            .into_iter()
            .filter(move |r| r.event_type() == self)
    }

    /// Events of this type must say which strategy was used.
    pub fn needs_strategy(self) -> bool {
        matches!(
            self,
            EventType::Applied | EventType::Fallback | EventType::RolledBack | EventType::Released
        )
    }

    /// Events of this type must list the changed containers.
    pub fn needs_containers(self) -> bool {
        matches!(self, EventType::Applied | EventType::RolledBack)
    }
}

/// Every reason of the contract, CamelCase as it is spelled there (and in the
/// `kerf_actions_total` label and the RightsizingRecommendation conditions).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    utoipa::ToSchema,
)]
pub enum Reason {
    RecommendationApplied,
    ApprovedOnce,
    ModeOff,
    ModeAudit,
    NoSignificantChange,
    RecommendationStale,
    LearningPeriod,
    LowConfidence,
    Cooldown,
    HPACoupled,
    Throttled,
    OOMKilled,
    FreezeWindow,
    OutsideMaintenanceWindow,
    UnsupportedNode,
    RestartPolicyRequired,
    JVMFixedHeap,
    HubUnreachable,
    SingleReplicaUnsafe,
    PodDisruptionBudget,
    Paused,
    ResourceQuota,
    LimitRange,
    NoFittingNode,
    VPAConflict,
    ResizeInfeasible,
    ResizeDeferredTimeout,
    OOMKills,
    Restarts,
    Throttling,
    RolloutStalled,
    ModeChanged,
    ApplyError,
    ResizeError,
    RollbackError,
    ReleaseError,
}

impl Reason {
    /// Every reason, grouped by type in contract order.
    pub const ALL: [Reason; 36] = [
        Reason::RecommendationApplied,
        Reason::ApprovedOnce,
        Reason::ModeOff,
        Reason::ModeAudit,
        Reason::NoSignificantChange,
        Reason::RecommendationStale,
        Reason::LearningPeriod,
        Reason::LowConfidence,
        Reason::Cooldown,
        Reason::HPACoupled,
        Reason::Throttled,
        Reason::OOMKilled,
        Reason::FreezeWindow,
        Reason::OutsideMaintenanceWindow,
        Reason::UnsupportedNode,
        Reason::RestartPolicyRequired,
        Reason::JVMFixedHeap,
        Reason::HubUnreachable,
        Reason::SingleReplicaUnsafe,
        Reason::PodDisruptionBudget,
        Reason::Paused,
        Reason::ResourceQuota,
        Reason::LimitRange,
        Reason::NoFittingNode,
        Reason::VPAConflict,
        Reason::ResizeInfeasible,
        Reason::ResizeDeferredTimeout,
        Reason::OOMKills,
        Reason::Restarts,
        Reason::Throttling,
        Reason::RolloutStalled,
        Reason::ModeChanged,
        Reason::ApplyError,
        Reason::ResizeError,
        Reason::RollbackError,
        Reason::ReleaseError,
    ];

    /// The type this reason belongs to.
    pub fn event_type(self) -> EventType {
        use Reason::*;
        match self {
            RecommendationApplied | ApprovedOnce => EventType::Applied,
            ModeOff | ModeAudit | NoSignificantChange | RecommendationStale => EventType::Skipped,
            LearningPeriod
            | LowConfidence
            | Cooldown
            | HPACoupled
            | Throttled
            | OOMKilled
            | FreezeWindow
            | OutsideMaintenanceWindow
            | UnsupportedNode
            | RestartPolicyRequired
            | JVMFixedHeap
            | HubUnreachable
            | SingleReplicaUnsafe
            | PodDisruptionBudget
            | Paused
            | ResourceQuota
            | LimitRange
            | NoFittingNode
            | VPAConflict => EventType::Blocked,
            ResizeInfeasible | ResizeDeferredTimeout => EventType::Fallback,
            OOMKills | Restarts | Throttling | RolloutStalled => EventType::RolledBack,
            ModeChanged => EventType::Released,
            ApplyError | ResizeError | RollbackError | ReleaseError => EventType::Failed,
        }
    }

    /// The contract spelling.
    pub fn as_str(self) -> &'static str {
        use Reason::*;
        match self {
            RecommendationApplied => "RecommendationApplied",
            ApprovedOnce => "ApprovedOnce",
            ModeOff => "ModeOff",
            ModeAudit => "ModeAudit",
            NoSignificantChange => "NoSignificantChange",
            RecommendationStale => "RecommendationStale",
            LearningPeriod => "LearningPeriod",
            LowConfidence => "LowConfidence",
            Cooldown => "Cooldown",
            HPACoupled => "HPACoupled",
            Throttled => "Throttled",
            OOMKilled => "OOMKilled",
            FreezeWindow => "FreezeWindow",
            OutsideMaintenanceWindow => "OutsideMaintenanceWindow",
            UnsupportedNode => "UnsupportedNode",
            RestartPolicyRequired => "RestartPolicyRequired",
            JVMFixedHeap => "JVMFixedHeap",
            HubUnreachable => "HubUnreachable",
            SingleReplicaUnsafe => "SingleReplicaUnsafe",
            PodDisruptionBudget => "PodDisruptionBudget",
            Paused => "Paused",
            ResourceQuota => "ResourceQuota",
            LimitRange => "LimitRange",
            NoFittingNode => "NoFittingNode",
            VPAConflict => "VPAConflict",
            ResizeInfeasible => "ResizeInfeasible",
            ResizeDeferredTimeout => "ResizeDeferredTimeout",
            OOMKills => "OOMKills",
            Restarts => "Restarts",
            Throttling => "Throttling",
            RolloutStalled => "RolloutStalled",
            ModeChanged => "ModeChanged",
            ApplyError => "ApplyError",
            ResizeError => "ResizeError",
            RollbackError => "RollbackError",
            ReleaseError => "ReleaseError",
        }
    }

    /// The reason spelled `s`, if it is one.
    pub fn parse(s: &str) -> Option<Reason> {
        Reason::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

/// The workload an event is about: the one workload identity, kind as text.
pub use crate::workload::WorkloadKey;

impl utoipa::PartialSchema for WorkloadKey {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{AdditionalProperties, ObjectBuilder, Type};
        let text = || ObjectBuilder::new().schema_type(Type::String);
        ObjectBuilder::new()
            .description(Some("The workload an event is about."))
            .property("namespace", text())
            .required("namespace")
            .property("kind", text())
            .required("kind")
            .property("name", text())
            .required("name")
            .additional_properties(Some(
                AdditionalProperties::<utoipa::openapi::schema::Schema>::FreeForm(false),
            ))
            .into()
    }
}

impl utoipa::ToSchema for WorkloadKey {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("WorkloadKey")
    }
}

/// A resource an event may be about.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    utoipa::ToSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum EventResource {
    Cpu,
    Memory,
}

/// Requests and limits of one container, as Kubernetes quantities (`250m`, `384Mi`),
/// keyed by resource (`cpu`, `memory`). Only changed resources are listed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ResourceValues {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub requests: BTreeMap<EventResource, String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub limits: BTreeMap<EventResource, String>,
}

/// One changed container: values before and after.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ContainerChange {
    pub name: String,
    pub from: ResourceValues,
    pub to: ResourceValues,
}

/// One event as the agent sends it and `GET /v1/audit` returns it (the hub adds
/// `cluster` and `receivedAt` there).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentEvent {
    /// A UUID made by the agent; the hub stores each id once.
    pub id: String,
    #[serde(rename = "type")]
    pub event_type: EventType,
    /// When it happened in the cluster (RFC 3339), not when it was sent.
    pub time: String,
    pub workload: WorkloadKey,
    pub reason: Reason,
    /// The hub recommendation the event is about, if known.
    #[serde(
        rename = "recommendationID",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub recommendation_id: Option<String>,
    /// For applied/fallback/rolled_back/released (for `fallback`: `rollout`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<Strategy>,
    /// Empty means the whole workload.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<EventResource>,
    /// For applied/rolled_back: the changed containers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub containers: Vec<ContainerChange>,
    /// Human-readable, at most 1024 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Well-known keys include `approvalId` and `approvedBy` (ApprovedOnce),
    /// `pauseScope` (Paused), `oomKills`, `watchDuration`, `hpa*`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub details: BTreeMap<String, String>,
}

impl AgentEvent {
    /// `details.approvalId` of an `applied ApprovedOnce`: the approval it consumes.
    pub fn approval_id(&self) -> Option<&str> {
        (self.reason == Reason::ApprovedOnce)
            .then(|| self.details.get("approvalId").map(String::as_str))
            .flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reason_round_trips_by_its_contract_spelling() {
        for r in Reason::ALL {
            let json = serde_json::to_string(&r).unwrap();
            assert_eq!(json, format!("\"{}\"", r.as_str()));
            assert_eq!(Reason::parse(r.as_str()), Some(r));
        }
        for t in EventType::ALL {
            assert_eq!(
                serde_json::to_string(&t).unwrap(),
                format!("\"{}\"", t.as_str())
            );
            assert!(t.reasons().count() > 0, "{t:?} has reasons");
        }
    }

    #[test]
    fn the_contract_example_deserializes_and_serializes_back() {
        let text = r#"{"id":"6f1c2a8e-0d7b-4c55-a0b1-8f9e2f0d1c3a","type":"rolled_back",
            "time":"2026-11-04T10:15:00Z",
            "workload":{"namespace":"payments-prod","kind":"Deployment","name":"checkout"},
            "recommendationID":"0b9b5c1e-4f7c-4a52-9a43-1f1d3f6b7c10","strategy":"in-place",
            "resources":["memory"],"containers":[{"name":"app",
            "from":{"requests":{"memory":"384Mi"},"limits":{"memory":"384Mi"}},
            "to":{"requests":{"memory":"1Gi"},"limits":{"memory":"1Gi"}}}],
            "reason":"OOMKills","message":"2 OOM kills within 30m after change (threshold 1)",
            "details":{"oomKills":"2","watchDuration":"30m"}}"#;
        let e: AgentEvent = serde_json::from_str(text).unwrap();
        assert_eq!(
            (e.event_type, e.reason),
            (EventType::RolledBack, Reason::OOMKills)
        );
        let back: serde_json::Value = serde_json::to_value(&e).unwrap();
        let orig: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(back, orig);
    }
}
