//! The embedded web UI: static files from `assets/`, with ETag revalidation and an SPA
//! fallback so deep links like `/workloads/42` load the app.

use axum::body::Body;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use rust_embed::RustEmbed;

#[derive(RustEmbed)]
#[folder = "assets/"]
struct Assets;

/// Serves `uri` from the embedded assets. Paths without an extension that match no file
/// get `index.html`; other misses are 404.
pub fn serve(method: &Method, uri: &Uri, headers: &HeaderMap) -> Response {
    if method != Method::GET && method != Method::HEAD {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    let path = uri.path().trim_start_matches('/');
    let path = if path.is_empty() { "index.html" } else { path };
    let file = Assets::get(path).or_else(|| {
        let last = path.rsplit('/').next().unwrap_or(path);
        (!last.contains('.'))
            .then(|| Assets::get("index.html"))
            .flatten()
    });
    let Some(file) = file else {
        return (StatusCode::NOT_FOUND, "not found\n").into_response();
    };
    let etag = format!("\"{}\"", hex::encode(file.metadata.sha256_hash()));
    let fresh = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
    let mut resp = if fresh {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let body = if method == Method::HEAD {
            Body::empty()
        } else {
            Body::from(file.data.into_owned())
        };
        let mut r = Response::new(body);
        if let Ok(v) = HeaderValue::from_str(file.metadata.mimetype()) {
            r.headers_mut().insert(header::CONTENT_TYPE, v);
        }
        r
    };
    let h = resp.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&etag) {
        h.insert(header::ETAG, v);
    }
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    resp
}

/// Every embedded file: its path and contents (for size checks).
pub fn files() -> Vec<(String, Vec<u8>)> {
    Assets::iter()
        .filter_map(|p| Assets::get(&p).map(|f| (p.to_string(), f.data.into_owned())))
        .collect()
}

/// Total bytes of the embedded UI (for size checks).
pub fn total_bytes() -> usize {
    Assets::iter()
        .filter_map(|p| Assets::get(&p).map(|f| f.data.len()))
        .sum()
}
