//! The agent: reads the hub's config and recommendation feeds, decides for each
//! workload under its effective policy (`decide`, pure), changes workloads through the
//! cluster interface (in place or by rollout) and reports every decision as a contract
//! event. The same code runs in-process (`mode = "all-in-one"`, `kerf demo`) and alone
//! (`mode = "agent"`); only the hub client differs.

pub mod decide;
pub mod state;
