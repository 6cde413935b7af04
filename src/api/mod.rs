//! The HTTP API: the route table with each route's permission and the shared state;
//! `middleware` wraps it (request ids, logs, metrics, security headers, body bounds,
//! fallbacks).

pub mod access;
pub mod admin_settings;
pub mod agent;
pub mod approvals;
pub mod audit;
pub mod automation;
pub mod backtest;
pub mod body;
pub mod clusters;
pub mod config_audit;
pub mod datasources;
pub mod document;
pub mod effective;
pub mod error;
pub mod export;
pub mod feed;
pub mod health;
pub mod history;
#[cfg(feature = "agent")]
pub mod in_process;
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
pub mod teams;
pub mod tokens;
pub mod usage;
pub mod users;
pub mod workload_query;
pub mod workload_totals;
pub mod workloads;

use std::sync::Arc;

use axum::Router;
use utoipa_axum::routes;

pub use access::Permission;
pub use middleware::with_middleware;
pub use routes::{RouteSpec, RouteTable};

use crate::auth::Authenticator;
use crate::clock::Clock;
use crate::config::Config;
use crate::metrics::Metrics;
use crate::store::Store;

/// Everything handlers share.
#[derive(Clone)]
pub struct AppState {
    pub store: Store,
    pub metrics: Arc<Metrics>,
    pub config: Arc<Config>,
    /// The hub's one clock: every handler, feed, expiry and login limit reads it.
    pub clock: Arc<dyn Clock>,
    /// Password hashing, login limits and sessions.
    pub auth: Arc<Authenticator>,
    /// Recommendation runs: trigger, progress, settings.
    pub runs: crate::runs::Runs,
    /// Pauses and readiness: wakes the fleet ticker.
    pub fleet: crate::fleet::Fleet,
    /// The background jobs' status (`/readyz`).
    pub jobs: crate::jobs::Board,
    /// Notification channels: sealing, sending, waking the dispatcher and digest.
    pub notify: crate::notify::Notifier,
    /// The UI files' compressed forms, made once each.
    pub ui: Arc<crate::ui::Encoded>,
}

impl AppState {
    /// The state for `config`; time comes from the clock `runs` was made with, so the
    /// API, the runs and the background jobs share one clock.
    pub fn new(
        store: Store,
        metrics: Arc<Metrics>,
        config: Arc<Config>,
        runs: crate::runs::Runs,
    ) -> Result<AppState, crate::auth::password::PasswordError> {
        let clock = runs.clock().clone();
        let auth = Arc::new(Authenticator::new(&config.auth, clock.clone())?);
        let notify = crate::notify::Notifier::new(&config, store.clone(), runs.clone());
        Ok(AppState {
            store,
            metrics,
            config,
            clock,
            auth,
            runs,
            fleet: crate::fleet::Fleet::default(),
            jobs: crate::jobs::Board::default(),
            notify,
            ui: Arc::new(crate::ui::Encoded::new()),
        })
    }

    /// Now, on the hub's clock.
    pub fn now(&self) -> i64 {
        self.clock.now_ms()
    }
}

/// HSTS value sent when TLS is on.
pub const HSTS: &str = "max-age=31536000; includeSubDomains";

/// The strict Content-Security-Policy: no inline script or style, same-origin only.
pub const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; \
base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

/// Every route of the API, with its permission.
pub fn route_table() -> RouteTable {
    use Permission::*;
    RouteTable::new()
        .add(Public, routes!(health::healthz))
        .add(Public, routes!(health::readyz))
        .add(Metrics, routes!(health::metrics))
        .add(Public, routes!(health::openapi))
        .add(ClusterAgent, routes!(agent::post_events))
        .add(WorkloadRead, routes!(audit::get_audit))
        .add(Admin, routes!(config_audit::get_config_audit))
        .add(Public, routes!(me::login))
        .add(Authenticated, routes!(me::logout))
        .add(Authenticated, routes!(me::get_me))
        .add(Admin, routes!(users::list))
        .add(Admin, routes!(users::create))
        .add(Admin, routes!(users::get))
        .add(Admin, routes!(users::update))
        .add(Admin, routes!(users::delete))
        .add(Admin, routes!(users::password_reset))
        .add(Admin, routes!(tokens::list))
        .add(Admin, routes!(tokens::create))
        .add(Admin, routes!(tokens::revoke))
        .add(Admin, routes!(teams::list))
        .add(Admin, routes!(teams::create))
        .add(TeamAdmin, routes!(teams::get))
        .add(Admin, routes!(teams::update))
        .add(Admin, routes!(teams::delete))
        .add(TeamAdmin, routes!(teams::set_members))
        .add(Viewer, routes!(runs::list_runs))
        .add(Viewer, routes!(runs::get_run))
        .add(Editor, routes!(runs::post_run))
        .add(ClusterAgent, routes!(feed::cluster_recommendations))
        .add(WorkloadRead, routes!(workloads::list_workloads))
        .add(WorkloadRead, routes!(workload_totals::get_summary))
        .add(WorkloadRead, routes!(export::get_recommendations))
        .add(WorkloadRead, routes!(workloads::get_workload))
        .add(WorkloadRead, routes!(workloads::list_recommendations))
        .add(WorkloadRead, routes!(usage::get_usage))
        .add(WorkloadRead, routes!(effective::get_policy))
        .add(WorkloadWrite, routes!(overrides::put_override))
        .add(WorkloadWrite, routes!(overrides::delete_override))
        .add(WorkloadWrite, routes!(approvals::approve))
        .add(WorkloadRead, routes!(history::get_history))
        .add(Viewer, routes!(backtest::list_presets))
        .add(Viewer, routes!(backtest::post_backtest))
        .add(Viewer, routes!(policies::list))
        .add(Editor, routes!(policies::create))
        .add(Viewer, routes!(policies::get))
        .add(Editor, routes!(policies::replace))
        .add(Editor, routes!(policies::delete))
        .add(Viewer, routes!(policies::versions))
        .add(Viewer, routes!(policies::version))
        .add(Editor, routes!(policies::revert))
        .add(Viewer, routes!(savings::get_savings))
        .add(Admin, routes!(admin_settings::get_recommender))
        .add(Admin, routes!(admin_settings::put_recommender))
        .add(Admin, routes!(admin_settings::get_pricing))
        .add(Admin, routes!(admin_settings::put_pricing))
        .add(Admin, routes!(datasources::create))
        .add(Admin, routes!(datasources::list))
        .add(Admin, routes!(datasources::get))
        .add(Admin, routes!(datasources::replace))
        .add(Admin, routes!(datasources::delete))
        .add(Admin, routes!(datasources::test))
        .add(Admin, routes!(datasources::set_for_cluster))
        .add(Viewer, routes!(clusters::list))
        .add(Admin, routes!(clusters::create))
        .add(Viewer, routes!(clusters::get))
        .add(Admin, routes!(clusters::update))
        .add(Admin, routes!(clusters::retire))
        .add(Admin, routes!(clusters::rotate_token))
        .add(Editor, routes!(clusters::put_freeze))
        .add(Viewer, routes!(clusters::readiness))
        .add(Editor, routes!(automation::pause_cluster))
        .add(Editor, routes!(automation::resume_cluster))
        .add(Editor, routes!(automation::pause_fleet))
        .add(Editor, routes!(automation::resume_fleet))
        .add(Viewer, routes!(automation::list_pauses))
        .add(WorkloadRead, routes!(notifications::list_channels))
        .add(WorkloadWrite, routes!(notifications::create_channel))
        .add(WorkloadRead, routes!(notifications::get_channel))
        .add(WorkloadWrite, routes!(notifications::replace_channel))
        .add(WorkloadWrite, routes!(notifications::delete_channel))
        .add(WorkloadWrite, routes!(notifications::test_channel))
        .add(WorkloadRead, routes!(notifications::get_digest))
        .add(WorkloadWrite, routes!(notifications::put_digest))
        .add(WorkloadRead, routes!(notifications::list_digests))
        .add(WorkloadRead, routes!(notifications::list_rules))
        .add(WorkloadWrite, routes!(notifications::create_rule))
        .add(WorkloadRead, routes!(notifications::get_rule))
        .add(WorkloadWrite, routes!(notifications::replace_rule))
        .add(WorkloadWrite, routes!(notifications::delete_rule))
        .add(WorkloadRead, routes!(notifications::list_deliveries))
        .add(WorkloadRead, routes!(notifications::get_delivery))
        .add(ClusterAgent, routes!(agent::config))
        .add(ClusterAgent, routes!(agent::heartbeat))
}

/// The complete application: routes, fallbacks and middleware.
pub fn app(state: AppState) -> Router {
    let (router, _) = route_table().finish(state.clone());
    with_middleware(router, state)
}
