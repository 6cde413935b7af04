//! The middleware stack around the route table: request ids, logs, metrics (labels from
//! closed sets only), security headers, one body bound, the guard check that fails
//! closed, and the fallbacks (JSON 404/405 under /v1, the UI everywhere else).

use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{header, HeaderName, HeaderValue, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;
use tower_http::compression::{CompressionLayer, CompressionLevel};
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::trace::TraceLayer;

use super::error::ApiError;
use super::state::AppState;
use super::{access, body};
use crate::metrics::HttpLabels;

/// HSTS value sent when TLS is on.
pub const HSTS: &str = "max-age=31536000; includeSubDomains";

/// The strict Content-Security-Policy: no inline script or style, same-origin only.
pub const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; \
base-uri 'none'; frame-ancestors 'none'; form-action 'self'";

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
        // One body bound, from the config, for every route (axum's own 2 MiB is off).
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            body::bound_bodies,
        ))
        .layer(axum::extract::DefaultBodyLimit::disable())
        // API answers compressed on the fly at a level that costs little CPU (the UI's
        // files come compressed already and pass through).
        .layer(CompressionLayer::new().quality(CompressionLevel::Precise(4)))
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
            // Bounded: a client chooses both, and they go into every log line of the request.
            let path: String = req.uri().path().chars().take(256).collect();
            tracing::info_span!("request", method = method_label(req.method()), path = %path, request_id = %id)
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

async fn fallback(State(state): State<AppState>, req: Request) -> Response {
    let path = req.uri().path();
    if path == "/v1" || path.starts_with("/v1/") {
        return ApiError::not_found(format!("no API route {} {path}", req.method()))
            .into_response();
    }
    // The first request for a file compresses it (brotli at its best level): off the
    // async workers.
    let (method, uri, headers) = (
        req.method().clone(),
        req.uri().clone(),
        req.headers().clone(),
    );
    let ui = state.ui.clone();
    tokio::task::spawn_blocking(move || crate::ui::serve(&ui, &method, &uri, &headers))
        .await
        .unwrap_or_else(|e| ApiError::internal(format!("serving a UI file: {e}")).into_response())
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
    let method = method_label(req.method()).to_string();
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

/// The `method` label: the standard methods by name, anything a client invents as
/// `other`, so no request can add a label value (the route label is the matched
/// template or `unmatched`, never the raw path).
fn method_label(m: &Method) -> &'static str {
    match *m {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    }
}
