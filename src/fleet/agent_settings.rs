//! The agent settings the config feed hands every agent. Fixed by this build for now;
//! heartbeat freshness is judged against the same loop interval.

use crate::wire::AgentSettings;

/// How often the agent runs its decision loop (and sends a heartbeat), in seconds.
pub const LOOP_INTERVAL_SECONDS: u64 = 30;
/// A heartbeat older than this many loop intervals makes the cluster `not-ready`.
pub const HEARTBEAT_STALE_INTERVALS: u64 = 3;
/// Events the agent buffers while the hub is unreachable.
pub const EVENT_BUFFER_SIZE: u32 = 10_000;

/// What `GET /v1/clusters/{cluster}/config` reports under `agent`.
pub fn current() -> AgentSettings {
    AgentSettings {
        loop_interval_seconds: LOOP_INTERVAL_SECONDS,
        heartbeat_interval_seconds: LOOP_INTERVAL_SECONDS,
        change_tolerance_default: crate::policy::defaults::CHANGE_TOLERANCE,
        event_buffer_size: EVENT_BUFFER_SIZE,
    }
}

/// Heartbeats older than this (ms) are stale.
pub fn heartbeat_stale_after_ms() -> i64 {
    (LOOP_INTERVAL_SECONDS * HEARTBEAT_STALE_INTERVALS * 1000) as i64
}
