//! The agent: reads the hub's config and recommendation feeds, decides for each
//! workload under its effective policy (`decide`, pure), changes workloads through the
//! cluster interface (in place or by rollout) and reports every decision as a contract
//! event. The same code runs in-process (`mode = "all-in-one"`, `kerf demo`) and alone
//! (`mode = "agent"`); only the hub client differs.

pub mod apply;
pub mod decide;
pub mod event;
mod health;
pub mod http_hub;
pub mod hub;
pub mod outbox;
mod pass;
mod persist;
mod progress;
pub mod record;
mod release;
pub mod run;
pub mod state;

pub use hub::{FeedItem, FeedPage, Hub, HubError};
pub use outbox::Outbox;
pub use run::{Agent, Options, PassReport, StartError};
