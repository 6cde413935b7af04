//! The HTTP API: the route table with each route's permission, the shared state, the
//! middleware stack (request ids, logs, metrics, security headers) and the fallbacks
//! (JSON 404/405 under /v1, the UI everywhere else).

pub mod access;
pub mod audit;
pub mod body;
pub mod datasources;
pub mod error;
pub mod events;
pub mod feed;
pub mod health;
pub mod query;
pub mod routes;
pub mod runs;
pub mod settings;
pub mod usage;
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

use crate::config::Config;
use crate::metrics::{HttpLabels, Metrics};
use crate::store::Store;

/// Everything handlers share.
#[derive(Clone)]
pub struct AppState {
    pub store: Store,
    pub metrics: Arc<Metrics>,
    pub config: Arc<Config>,
    /// Recommendation runs: trigger, progress, settings.
    pub runs: crate::runs::Runs,
}

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
            events::post_events,
        )
        .add(Method::GET, "/v1/audit", Admin, audit::get_audit)
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
            Viewer,
            workloads::list_workloads,
        )
        .add(
            Method::GET,
            "/v1/workloads/{id}",
            Viewer,
            workloads::get_workload,
        )
        .add(
            Method::GET,
            "/v1/workloads/{id}/recommendations",
            Viewer,
            workloads::list_recommendations,
        )
        .add(
            Method::GET,
            "/v1/workloads/{id}/usage",
            Viewer,
            usage::get_usage,
        )
        .add(Method::GET, "/v1/savings", Viewer, settings::get_savings)
        .add(
            Method::GET,
            "/v1/admin/settings/recommender",
            Admin,
            settings::get_recommender,
        )
        .add(
            Method::PUT,
            "/v1/admin/settings/recommender",
            Admin,
            settings::put_recommender,
        )
        .add(
            Method::GET,
            "/v1/admin/settings/pricing",
            Admin,
            settings::get_pricing,
        )
        .add(
            Method::PUT,
            "/v1/admin/settings/pricing",
            Admin,
            settings::put_pricing,
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
}

/// The complete application: routes, fallbacks and middleware.
pub fn app(state: AppState) -> Router {
    let (router, _) = route_table(state.clone()).finish();
    let x_request_id = HeaderName::from_static("x-request-id");
    router
        .fallback(fallback)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(state.clone(), record_metrics))
        .layer(header_layer(header::X_FRAME_OPTIONS, "DENY"))
        .layer(header_layer(header::REFERRER_POLICY, "no-referrer"))
        .layer(header_layer(header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .layer(header_layer(header::CONTENT_SECURITY_POLICY, CSP))
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
