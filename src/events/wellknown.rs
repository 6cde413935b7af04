//! The vocabulary of the events contract the validator checks against. The types and
//! reasons themselves are the `wire::event` enums ([`EventType`], [`Reason`]), listed
//! once; adding a reason is a contract change: add it there and to
//! docs/contracts/events.md.

pub use crate::wire::event::{EventType, Reason};

/// The type the hub records configuration changes under; never accepted from agents.
pub const CONFIG_CHANGED: &str = "config_changed";

/// Apply strategies.
pub const STRATEGIES: &[&str] = &["in-place", "rollout", "deferred"];

/// Resources an event may be about.
pub const RESOURCES: &[&str] = &["cpu", "memory"];

/// Longest `message`, in characters.
pub const MAX_MESSAGE_CHARS: usize = 1024;

/// The reasons allowed for `event_type`, or `None` for an unknown type.
pub fn reasons_for(event_type: &str) -> Option<Vec<&'static str>> {
    EventType::parse(event_type).map(|t| t.reasons().map(Reason::as_str).collect())
}

/// True when `event_type` is one an agent may send.
pub fn is_agent_type(event_type: &str) -> bool {
    EventType::parse(event_type).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seven_types_and_no_reason_listed_twice() {
        assert_eq!(EventType::ALL.len(), 7);
        let mut all: Vec<&str> = EventType::ALL
            .iter()
            .flat_map(|t| t.reasons().map(Reason::as_str))
            .collect();
        let n = all.len();
        assert_eq!(n, Reason::ALL.len(), "every reason belongs to one type");
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n);
        assert!(!is_agent_type(CONFIG_CHANGED));
    }
}
