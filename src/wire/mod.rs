//! What travels between the hub and its agents, as typed structs that serialize and
//! deserialize the same way on both sides: the config feed
//! (`GET /v1/clusters/{cluster}/config`), the recommendation feed
//! (`GET /v1/clusters/{cluster}/recommendations`), the heartbeat
//! (`POST /v1/clusters/{cluster}/heartbeat`) and its answer, the agent's audit events
//! (`POST /v1/clusters/{cluster}/events`, the events contract's types and reasons as
//! enums), the recommendation summary the feed carries, and the usage the agent collects
//! (`POST /v1/clusters/{cluster}/write`: Prometheus remote write 1.0, protobuf, the one
//! message set here that is not JSON). The hub builds these; the agent (in-process or
//! remote) reads them; the hub's event validator validates into [`AgentEvent`]. Imports only `policy` (the effective policy) and `timestamp`: no
//! store, no HTTP, so it builds in the hub-only and the agent builds alike.
//!
//! What the hub sends (the feeds, readiness) accepts unknown fields, so an older agent
//! reads a newer hub (forward compatible); what agents send (heartbeat, events) is
//! strict, because the hub validates it.

pub mod actor;
pub mod applied;
pub mod cluster_policies;
pub mod config_feed;
pub mod event;
pub mod heartbeat;
pub mod recommendation_feed;
pub mod remote_write;
pub mod summary;

pub use actor::{Actor, ActorKind, ActorTeam};
pub use config_feed::{
    AgentSettings, ConfigFeed, FeedFlags, Freeze, NamedWorkload, Pause, PauseScope, UsageSource,
    WorkloadConfig,
};
pub use event::{AgentEvent, ContainerChange, EventResource, EventType, Reason, WorkloadKey};
pub use heartbeat::{Heartbeat, Readiness};
pub use recommendation_feed::{
    DataCoverage, FeedWorkload, PendingApproval, RecommendationFeed, RecommendationItem,
};
pub use summary::{
    ContainerSummary, HpaSummary, QualityStatus, RecommendationSummary, ResourceSummary,
};
