//! The HTTP API: the route table with each route's permission and the shared state;
//! `middleware` wraps it (request ids, logs, metrics, security headers, body bounds,
//! fallbacks).

pub mod access;
pub mod admin_settings;
pub mod agent;
pub mod approvals;
pub mod audit;
pub mod automation;
pub mod body;
pub mod clusters;
pub mod config_audit;
pub mod datasources;
pub mod effective;
pub mod error;
pub mod feed;
pub mod health;
pub mod history;
#[cfg(feature = "agent")]
pub mod in_process;
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
pub mod workloads;

use std::sync::Arc;

use axum::http::Method;
use axum::Router;

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
pub fn route_table(state: AppState) -> RouteTable {
    use Permission::*;
    RouteTable::new(state)
        .add(Method::GET, "/healthz", Public, health::healthz)
        .add(Method::GET, "/readyz", Public, health::readyz)
        .add(Method::GET, "/metrics", Metrics, health::metrics)
        .add(Method::GET, "/v1/openapi.yaml", Public, health::openapi)
        .add(
            Method::POST,
            "/v1/clusters/{cluster}/events",
            ClusterAgent,
            agent::post_events,
        )
        .add(Method::GET, "/v1/audit", WorkloadRead, audit::get_audit)
        .add(
            Method::GET,
            "/v1/audit/config",
            Admin,
            config_audit::get_config_audit,
        )
        .add(Method::POST, "/v1/auth/login", Public, me::login)
        .add(Method::POST, "/v1/auth/logout", Authenticated, me::logout)
        .add(Method::GET, "/v1/me", Authenticated, me::get_me)
        .add(Method::GET, "/v1/admin/users", Admin, users::list)
        .add(Method::POST, "/v1/admin/users", Admin, users::create)
        .add(Method::GET, "/v1/admin/users/{id}", Admin, users::get)
        .add(Method::PATCH, "/v1/admin/users/{id}", Admin, users::update)
        .add(Method::DELETE, "/v1/admin/users/{id}", Admin, users::delete)
        .add(
            Method::POST,
            "/v1/admin/users/{id}/password-reset",
            Admin,
            users::password_reset,
        )
        .add(Method::GET, "/v1/admin/tokens", Admin, tokens::list)
        .add(Method::POST, "/v1/admin/tokens", Admin, tokens::create)
        .add(
            Method::DELETE,
            "/v1/admin/tokens/{id}",
            Admin,
            tokens::revoke,
        )
        .add(Method::GET, "/v1/admin/teams", Admin, teams::list)
        .add(Method::POST, "/v1/admin/teams", Admin, teams::create)
        .add(Method::GET, "/v1/admin/teams/{id}", TeamAdmin, teams::get)
        .add(Method::PATCH, "/v1/admin/teams/{id}", Admin, teams::update)
        .add(Method::DELETE, "/v1/admin/teams/{id}", Admin, teams::delete)
        .add(
            Method::PUT,
            "/v1/admin/teams/{id}/members",
            TeamAdmin,
            teams::set_members,
        )
        .add(Method::GET, "/v1/runs", Viewer, runs::list_runs)
        .add(Method::GET, "/v1/runs/{id}", Viewer, runs::get_run)
        .add(
            Method::POST,
            "/v1/clusters/{cluster}/runs",
            Editor,
            runs::post_run,
        )
        .add(
            Method::GET,
            "/v1/clusters/{cluster}/recommendations",
            ClusterAgent,
            feed::cluster_recommendations,
        )
        .add(
            Method::GET,
            "/v1/workloads",
            WorkloadRead,
            workloads::list_workloads,
        )
        .add(
            Method::GET,
            "/v1/workloads/{id}",
            WorkloadRead,
            workloads::get_workload,
        )
        .add(
            Method::GET,
            "/v1/workloads/{id}/recommendations",
            WorkloadRead,
            workloads::list_recommendations,
        )
        .add(
            Method::GET,
            "/v1/workloads/{id}/usage",
            WorkloadRead,
            usage::get_usage,
        )
        .add(
            Method::GET,
            "/v1/workloads/{id}/policy",
            WorkloadRead,
            effective::get_policy,
        )
        .add(
            Method::PUT,
            "/v1/workloads/{id}/override",
            WorkloadWrite,
            overrides::put_override,
        )
        .add(
            Method::DELETE,
            "/v1/workloads/{id}/override",
            WorkloadWrite,
            overrides::delete_override,
        )
        .add(
            Method::POST,
            "/v1/workloads/{id}/approve",
            WorkloadWrite,
            approvals::approve,
        )
        .add(
            Method::GET,
            "/v1/workloads/{id}/history",
            WorkloadRead,
            history::get_history,
        )
        .add(Method::GET, "/v1/policies", Viewer, policies::list)
        .add(Method::POST, "/v1/policies", Editor, policies::create)
        .add(Method::GET, "/v1/policies/{id}", Viewer, policies::get)
        .add(Method::PUT, "/v1/policies/{id}", Editor, policies::replace)
        .add(
            Method::DELETE,
            "/v1/policies/{id}",
            Editor,
            policies::delete,
        )
        .add(
            Method::GET,
            "/v1/policies/{id}/versions",
            Viewer,
            policies::versions,
        )
        .add(
            Method::GET,
            "/v1/policies/{id}/versions/{version}",
            Viewer,
            policies::version,
        )
        .add(
            Method::POST,
            "/v1/policies/{id}/revert",
            Editor,
            policies::revert,
        )
        .add(Method::GET, "/v1/savings", Viewer, savings::get_savings)
        .add(
            Method::GET,
            "/v1/admin/settings/recommender",
            Admin,
            admin_settings::get_recommender,
        )
        .add(
            Method::PUT,
            "/v1/admin/settings/recommender",
            Admin,
            admin_settings::put_recommender,
        )
        .add(
            Method::GET,
            "/v1/admin/settings/pricing",
            Admin,
            admin_settings::get_pricing,
        )
        .add(
            Method::PUT,
            "/v1/admin/settings/pricing",
            Admin,
            admin_settings::put_pricing,
        )
        .add(Method::POST, "/v1/datasources", Admin, datasources::create)
        .add(Method::GET, "/v1/datasources", Admin, datasources::list)
        .add(Method::GET, "/v1/datasources/{id}", Admin, datasources::get)
        .add(
            Method::PUT,
            "/v1/datasources/{id}",
            Admin,
            datasources::replace,
        )
        .add(
            Method::DELETE,
            "/v1/datasources/{id}",
            Admin,
            datasources::delete,
        )
        .add(
            Method::POST,
            "/v1/datasources/{id}/test",
            Admin,
            datasources::test,
        )
        .add(
            Method::PUT,
            "/v1/clusters/{cluster}/datasource",
            Admin,
            datasources::set_for_cluster,
        )
        .add(Method::GET, "/v1/clusters", Viewer, clusters::list)
        .add(Method::POST, "/v1/clusters", Admin, clusters::create)
        .add(Method::GET, "/v1/clusters/{cluster}", Viewer, clusters::get)
        .add(
            Method::PATCH,
            "/v1/clusters/{cluster}",
            Admin,
            clusters::update,
        )
        .add(
            Method::DELETE,
            "/v1/clusters/{cluster}",
            Admin,
            clusters::retire,
        )
        .add(
            Method::POST,
            "/v1/clusters/{cluster}/token",
            Admin,
            clusters::rotate_token,
        )
        .add(
            Method::PUT,
            "/v1/clusters/{cluster}/freeze",
            Editor,
            clusters::put_freeze,
        )
        .add(
            Method::GET,
            "/v1/clusters/{cluster}/readiness",
            Viewer,
            clusters::readiness,
        )
        .add(
            Method::POST,
            "/v1/clusters/{cluster}/pause",
            Editor,
            automation::pause_cluster,
        )
        .add(
            Method::POST,
            "/v1/clusters/{cluster}/resume",
            Editor,
            automation::resume_cluster,
        )
        .add(
            Method::POST,
            "/v1/fleet/pause",
            Editor,
            automation::pause_fleet,
        )
        .add(
            Method::POST,
            "/v1/fleet/resume",
            Editor,
            automation::resume_fleet,
        )
        .add(
            Method::GET,
            "/v1/fleet/automation",
            Viewer,
            automation::list_pauses,
        )
        .add(
            Method::GET,
            "/v1/notifications/channels",
            WorkloadRead,
            notifications::list_channels,
        )
        .add(
            Method::POST,
            "/v1/notifications/channels",
            WorkloadWrite,
            notifications::create_channel,
        )
        .add(
            Method::GET,
            "/v1/notifications/channels/{id}",
            WorkloadRead,
            notifications::get_channel,
        )
        .add(
            Method::PUT,
            "/v1/notifications/channels/{id}",
            WorkloadWrite,
            notifications::replace_channel,
        )
        .add(
            Method::DELETE,
            "/v1/notifications/channels/{id}",
            WorkloadWrite,
            notifications::delete_channel,
        )
        .add(
            Method::POST,
            "/v1/notifications/channels/{id}/test",
            WorkloadWrite,
            notifications::test_channel,
        )
        .add(
            Method::GET,
            "/v1/notifications/channels/{id}/digest",
            WorkloadRead,
            notifications::get_digest,
        )
        .add(
            Method::PUT,
            "/v1/notifications/channels/{id}/digest",
            WorkloadWrite,
            notifications::put_digest,
        )
        .add(
            Method::GET,
            "/v1/notifications/digest",
            WorkloadRead,
            notifications::list_digests,
        )
        .add(
            Method::GET,
            "/v1/notifications/rules",
            WorkloadRead,
            notifications::list_rules,
        )
        .add(
            Method::POST,
            "/v1/notifications/rules",
            WorkloadWrite,
            notifications::create_rule,
        )
        .add(
            Method::GET,
            "/v1/notifications/rules/{id}",
            WorkloadRead,
            notifications::get_rule,
        )
        .add(
            Method::PUT,
            "/v1/notifications/rules/{id}",
            WorkloadWrite,
            notifications::replace_rule,
        )
        .add(
            Method::DELETE,
            "/v1/notifications/rules/{id}",
            WorkloadWrite,
            notifications::delete_rule,
        )
        .add(
            Method::GET,
            "/v1/notifications/deliveries",
            WorkloadRead,
            notifications::list_deliveries,
        )
        .add(
            Method::GET,
            "/v1/notifications/deliveries/{id}",
            WorkloadRead,
            notifications::get_delivery,
        )
        .add(
            Method::GET,
            "/v1/clusters/{cluster}/config",
            ClusterAgent,
            agent::config,
        )
        .add(
            Method::POST,
            "/v1/clusters/{cluster}/heartbeat",
            ClusterAgent,
            agent::heartbeat,
        )
}

/// The complete application: routes, fallbacks and middleware.
pub fn app(state: AppState) -> Router {
    let (router, _) = route_table(state.clone()).finish();
    with_middleware(router, state)
}
