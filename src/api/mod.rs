//! The HTTP API: one module per resource, the route table with each route's permission
//! (`routes`), the shared state (`state`); `middleware` wraps it (request ids, logs,
//! metrics, security headers, body bounds, fallbacks).

pub mod access;
pub mod admin_settings;
pub mod agent;
pub mod applied;
pub mod approvals;
pub mod audit;
pub mod automation;
pub mod backtest;
pub mod body;
pub mod cluster_policies;
pub mod clusters;
pub mod config_audit;
pub mod datasources;
pub mod deliveries;
pub mod document;
pub mod effective;
pub mod error;
pub mod export;
pub mod feed;
pub mod health;
pub mod history;
pub mod ids;
pub mod lists;
pub mod me;
mod middleware;
pub mod notifications;
pub mod overrides;
pub mod policies;
pub mod query;
pub mod routes;
pub mod runs;
pub mod savings;
pub mod sso;
pub mod state;
pub mod teams;
pub mod tokens;
pub mod usage;
pub mod usage_write;
pub mod users;
pub mod workload_query;
pub mod workload_totals;
pub mod workloads;

use axum::Router;

pub use access::Permission;
pub use middleware::with_middleware;
pub use routes::{route_table, RouteSpec, RouteTable};
pub use state::AppState;

/// The complete application: routes, fallbacks and middleware.
pub fn app(state: AppState) -> Router {
    let (router, _) = route_table().finish(state.clone());
    with_middleware(router, state)
}
