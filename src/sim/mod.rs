//! The simulated world: nodes, workloads, pods and what their containers use, seeded and
//! deterministic. It is what `kerf demo` runs on (no Kubernetes needed) and what plays
//! the kubelet against a real API server in tests. Only the kubelet and usage are
//! simulated; everything else in kerf is the real code.
//!
//! - `shape`, `catalogue`, `guarded`, `git_policies`, `live`: usage shapes (and the one
//!   rule of what limits do to them), the demo catalogue, its guardrail workloads and its
//!   clusters' own RightsizingPolicies, and the changes
//!   made to it while the demo runs (read by the demo datasource; the only parts in the
//!   hub-only build).
//! - `kubelet`: the kubelet's decisions (resize verdicts, OOM kills, throttling).

#[cfg(feature = "agent")]
pub mod api_kubelet;
pub mod catalogue;
pub mod git_policies;
pub mod guarded;
#[cfg(feature = "agent")]
pub mod in_process;
#[cfg(feature = "agent")]
pub mod kubelet;
pub mod live;
pub mod shape;
