//! The embedded web UI: static files from `assets/`, with an SPA fallback so deep links
//! like `/workloads/42` load the app. Each file is served brotli- or gzip-compressed
//! when the browser takes it (compressed once, on first request, at the best levels:
//! the files never change while the binary runs), with ETag revalidation; files whose
//! name carries their version (`vendor/uPlot-1.6.32.esm.js`) are cached as immutable.

use std::collections::HashMap;
use std::io::Write as _;
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use rust_embed::RustEmbed;

#[derive(RustEmbed)]
#[folder = "assets/"]
struct Assets;

/// How long a versioned file may be cached: a year, and never revalidated.
const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// A content coding the hub serves files in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coding {
    Brotli,
    Gzip,
    Identity,
}

impl Coding {
    fn token(self) -> Option<&'static str> {
        match self {
            Coding::Brotli => Some("br"),
            Coding::Gzip => Some("gzip"),
            Coding::Identity => None,
        }
    }

    fn etag_suffix(self) -> &'static str {
        match self {
            Coding::Brotli => "-br",
            Coding::Gzip => "-gz",
            Coding::Identity => "",
        }
    }
}

/// The best coding `accept` (an `Accept-Encoding` value) allows: brotli, then gzip,
/// else identity. A coding with `q=0` is refused.
pub fn negotiate(accept: Option<&str>) -> Coding {
    let mut br = false;
    let mut gzip = false;
    for part in accept.unwrap_or("").split(',') {
        let mut it = part.split(';');
        let name = it.next().unwrap_or("").trim().to_ascii_lowercase();
        let refused = it.any(|p| {
            p.trim()
                .strip_prefix("q=")
                .and_then(|q| q.trim().parse::<f32>().ok())
                .is_some_and(|q| q <= 0.0)
        });
        match name.as_str() {
            "br" => br = !refused,
            "gzip" | "x-gzip" => gzip = !refused,
            "*" if !refused => {
                br = true;
                gzip = true;
            }
            _ => {}
        }
    }
    if br {
        Coding::Brotli
    } else if gzip {
        Coding::Gzip
    } else {
        Coding::Identity
    }
}

/// One compressed form of a file and the hash of the content it was made from (a debug
/// build reads the files from disk, so they may change under a running hub).
type Slot = Mutex<Option<([u8; 32], Arc<[u8]>)>>;

/// A file's compressed forms, made on first use.
#[derive(Default)]
struct Variants {
    brotli: Slot,
    gzip: Slot,
}

fn cached(slot: &Slot, hash: [u8; 32], make: impl FnOnce() -> Arc<[u8]>) -> Arc<[u8]> {
    let mut held = slot.lock().unwrap_or_else(|p| p.into_inner());
    match &*held {
        Some((h, bytes)) if *h == hash => bytes.clone(),
        _ => {
            let bytes = make();
            *held = Some((hash, bytes.clone()));
            bytes
        }
    }
}

/// The compressed forms of every embedded file, shared by all requests (`AppState`).
#[derive(Default)]
pub struct Encoded {
    files: HashMap<String, Variants>,
}

impl Encoded {
    /// An empty cache for every embedded file that compression helps.
    pub fn new() -> Encoded {
        let files = Assets::iter()
            .filter(|p| compressible(p))
            .map(|p| (p.to_string(), Variants::default()))
            .collect();
        Encoded { files }
    }

    /// `data` (the file at `path`) in `coding`; `None` when the file is not one that
    /// is compressed (images, fonts).
    fn get(&self, path: &str, coding: Coding, data: &[u8], hash: [u8; 32]) -> Option<Arc<[u8]>> {
        let v = self.files.get(path)?;
        match coding {
            Coding::Brotli => Some(cached(&v.brotli, hash, || brotli(data))),
            Coding::Gzip => Some(cached(&v.gzip, hash, || gzip(data))),
            Coding::Identity => None,
        }
    }
}

fn compressible(path: &str) -> bool {
    [".js", ".css", ".html", ".svg", ".json", ".txt", ".md"]
        .iter()
        .any(|ext| path.ends_with(ext))
}

fn brotli(data: &[u8]) -> Arc<[u8]> {
    let mut out = Vec::with_capacity(data.len() / 3);
    let params = brotli::enc::BrotliEncoderParams {
        quality: 11,
        lgwin: 22,
        ..Default::default()
    };
    brotli::BrotliCompress(&mut &data[..], &mut out, &params)
        .expect("compressing into a Vec cannot fail");
    out.into()
}

fn gzip(data: &[u8]) -> Arc<[u8]> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(data).expect("writing into a Vec cannot fail");
    gz.finish()
        .expect("finishing into a Vec cannot fail")
        .into()
}

/// Whether `path`'s name carries its version (`name-1.2.3.ext`): such a file never
/// changes under the same name.
pub fn versioned(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.split(['-', '.'])
        .collect::<Vec<_>>()
        .windows(3)
        .any(|w| {
            w.iter()
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        })
}

/// Serves `uri` from the embedded assets. Paths without an extension that match no file
/// get `index.html`; other misses are 404.
pub fn serve(encoded: &Encoded, method: &Method, uri: &Uri, headers: &HeaderMap) -> Response {
    if method != Method::GET && method != Method::HEAD {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    let path = uri.path().trim_start_matches('/');
    let path = if path.is_empty() { "index.html" } else { path };
    let (path, file) = match Assets::get(path) {
        Some(f) => (path, f),
        None => {
            let last = path.rsplit('/').next().unwrap_or(path);
            match (!last.contains('.'))
                .then(|| Assets::get("index.html"))
                .flatten()
            {
                Some(f) => ("index.html", f),
                None => return (StatusCode::NOT_FOUND, "not found\n").into_response(),
            }
        }
    };
    let accept = headers
        .get(header::ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok());
    let mut coding = negotiate(accept);
    let compressed = encoded.get(path, coding, &file.data, file.metadata.sha256_hash());
    if compressed.is_none() {
        coding = Coding::Identity;
    }
    let hash = hex::encode(file.metadata.sha256_hash());
    let etag = format!("\"{hash}{}\"", coding.etag_suffix());
    // Any coding of the same content is fresh: the browser holds the same file.
    let fresh = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(',').any(|t| {
                let t = t.trim().trim_start_matches("W/");
                t == "*" || t.trim_matches('"').split('-').next() == Some(hash.as_str())
            })
        });
    let mut resp = if fresh {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let body = match (method == Method::HEAD, compressed) {
            (true, _) => Body::empty(),
            (false, Some(bytes)) => Body::from(bytes.to_vec()),
            (false, None) => Body::from(file.data.into_owned()),
        };
        let mut r = Response::new(body);
        if let Ok(v) = HeaderValue::from_str(file.metadata.mimetype()) {
            r.headers_mut().insert(header::CONTENT_TYPE, v);
        }
        if let Some(token) = coding.token() {
            r.headers_mut()
                .insert(header::CONTENT_ENCODING, HeaderValue::from_static(token));
        }
        r
    };
    let h = resp.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&etag) {
        h.insert(header::ETAG, v);
    }
    if encoded.files.contains_key(path) {
        h.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    }
    let cache = if versioned(path) {
        IMMUTABLE
    } else {
        "no-cache"
    };
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_best_coding_the_browser_takes_is_chosen() {
        assert_eq!(negotiate(Some("gzip, deflate, br, zstd")), Coding::Brotli);
        assert_eq!(negotiate(Some("gzip")), Coding::Gzip);
        assert_eq!(negotiate(Some("br;q=0, gzip;q=0.5")), Coding::Gzip);
        assert_eq!(negotiate(Some("*")), Coding::Brotli);
        assert_eq!(negotiate(Some("identity")), Coding::Identity);
        assert_eq!(negotiate(None), Coding::Identity);
    }

    #[test]
    fn only_names_with_a_version_are_immutable() {
        assert!(versioned("vendor/uPlot-1.6.32.esm.js"));
        assert!(versioned("vendor/preact-hooks-10.29.8.module.js"));
        assert!(versioned("vendor/uPlot-1.6.32.min.css"));
        assert!(!versioned("app.js"));
        assert!(!versioned("ui/pages/workload.js"));
        assert!(!versioned("index.html"));
    }

    #[test]
    fn compressed_forms_decode_to_the_file() {
        let data = Assets::get("app.css").expect("app.css").data;
        let enc = Encoded::new();
        let hash = [7; 32];
        let br = enc.get("app.css", Coding::Brotli, &data, hash).expect("br");
        let mut back = Vec::new();
        brotli::BrotliDecompress(&mut &br[..], &mut back).expect("brotli decodes");
        assert_eq!(back, data.as_ref());
        assert!(br.len() * 3 < data.len(), "{} of {}", br.len(), data.len());
        let gz = enc.get("app.css", Coding::Gzip, &data, hash).expect("gzip");
        let mut back = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&gz[..]), &mut back)
            .expect("gzip decodes");
        assert_eq!(back, data.as_ref());
        // Other content under the same name (a debug build's edited file) is compressed anew.
        let other = enc
            .get("app.css", Coding::Gzip, b"body{}", [8; 32])
            .expect("gzip");
        assert_ne!(other, gz);
    }
}
