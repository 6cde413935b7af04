//! The agent: reads the hub's config and recommendation feeds, decides for each
//! workload under its effective policy (`decide`, pure), changes workloads through the
//! cluster interface (in place or by rollout) and reports every decision as a contract
//! event. The same code runs in-process (`mode = "all-in-one"`, `kerf demo`) and alone
//! (`mode = "agent"`); only the hub client differs.
//!
//! Its files, each naming only those below it (`tests/it/source_fence.rs` refuses a
//! cycle): `run` (the agent: its life and its passes) owns `link` (the hub: feeds,
//! settings, heartbeat) and `held_feeds` (both feeds as last read, kept by change), `memory` (what it keeps per workload), `reports` (events on
//! their way: outbox, acknowledgements, Kubernetes Events) and `counters` (the kubelets'
//! CPU counters), and lends them to `actions` (deciding and acting on the cluster,
//! carrying changes forward, releasing, the health watch, writing the records), and
//! starts `collector` (usage for a hub without a Prometheus: kubelets and watches,
//! shipped by remote write), and keeps `cluster_policies` (the cluster's
//! RightsizingPolicy objects: judged on the object, reported to the hub). Below them: `apply` (one step of a change), `decide`
//! (pure), `state`, `record`, `event`, `outbox`, `hub` and its HTTP client `http_hub`.

mod actions;
pub mod apply;
pub mod cluster_policies;
pub mod collector;
mod counters;
pub mod decide;
pub mod event;
mod feed_index;
mod held_feeds;
pub mod http_hub;
pub mod hub;
mod link;
mod long_poll;
mod memory;
pub mod outbox;
pub mod record;
mod reports;
pub mod run;
pub mod state;

pub use hub::{FeedItem, FeedPage, Hub, HubError};
pub use outbox::Outbox;
pub use run::{Agent, Options, PassReport, StartError};
