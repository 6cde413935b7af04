//! The HTTP API: the route table with each route's permission, the shared state, the
//! middleware stack (request ids, logs, metrics, security headers) and the fallbacks
//! (JSON 404/405 under /v1, the UI everywhere else).

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
pub mod me;
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
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{header, HeaderName, HeaderValue, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::trace::TraceLayer;

pub use access::Permission;
use error::ApiError;
pub use routes::{RouteSpec, RouteTable};

use crate::auth::Authenticator;
use crate::clock::Clock;
use crate::config::Config;
use crate::metrics::{HttpLabels, Metrics};
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
        .add(Method::GET, "/metrics", Public, health::metrics)
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

/// Wraps a router from a route table with the fallbacks and the middleware stack.
pub fn with_middleware(router: Router<AppState>, state: AppState) -> Router {
    let x_request_id = HeaderName::from_static("x-request-id");
    let hsts = state
        .config
        .tls_enabled()
        .then(|| header_layer(header::STRICT_TRANSPORT_SECURITY, HSTS));
    router
        .layer(axum::middleware::from_fn(require_guard))
        .fallback(fallback)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(state.clone(), record_metrics))
        .layer(header_layer(header::X_FRAME_OPTIONS, "DENY"))
        .layer(header_layer(header::REFERRER_POLICY, "no-referrer"))
        .layer(header_layer(header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .layer(header_layer(header::CONTENT_SECURITY_POLICY, CSP))
        .layer(tower::util::option_layer(hsts))
        .layer(PropagateRequestIdLayer::new(x_request_id.clone()))
        .layer(TraceLayer::new_for_http().make_span_with(|req: &Request| {
            let id = req
                .headers()
                .get("x-request-id")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            tracing::info_span!("request", method = %req.method(), path = %req.uri().path(), request_id = %id)
        }))
        .layer(SetRequestIdLayer::new(x_request_id, MakeRequestUuid))
        .with_state(state)
}

fn header_layer(name: HeaderName, value: &'static str) -> SetResponseHeaderLayer<HeaderValue> {
    SetResponseHeaderLayer::if_not_present(name, HeaderValue::from_static(value))
}

/// Fails closed: a matched route whose response does not carry the guard's marker was
/// added without a permission (outside `RouteTable`), so it is refused with 500.
async fn require_guard(req: Request, next: Next) -> Response {
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_string());
    let resp = next.run(req).await;
    match route {
        // 405 comes from the method router's fallback: no handler ran.
        Some(route)
            if resp.status() != axum::http::StatusCode::METHOD_NOT_ALLOWED
                && resp.extensions().get::<access::Guarded>().is_none() =>
        {
            ApiError::internal(format!(
                "route {route} has no declared permission; refusing to serve it"
            ))
            .into_response()
        }
        _ => resp,
    }
}

async fn fallback(req: Request) -> Response {
    let path = req.uri().path();
    if path == "/v1" || path.starts_with("/v1/") {
        return ApiError::not_found(format!("no API route {} {path}", req.method()))
            .into_response();
    }
    crate::ui::serve(req.method(), req.uri(), req.headers())
}

async fn method_not_allowed(req: Request) -> Response {
    ApiError::new(
        axum::http::StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        format!("{} is not allowed on {}", req.method(), req.uri().path()),
    )
    .into_response()
}

async fn record_metrics(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = req.method().to_string();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "unmatched".into());
    let resp = next.run(req).await;
    let labels = HttpLabels {
        method,
        route,
        status: resp.status().as_u16(),
    };
    state.metrics.http_requests.get_or_create(&labels).inc();
    state
        .metrics
        .http_duration
        .get_or_create(&labels)
        .observe(started.elapsed().as_secs_f64());
    resp
}
