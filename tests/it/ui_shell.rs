//! The embedded UI shell: ETag revalidation, strict CSP, SPA fallback, JSON 404 under /v1.

use crate::support::{client, error_code, DataDir};

#[tokio::test(flavor = "multi_thread")]
async fn the_ui_is_served_with_a_strict_csp_and_revalidates_by_etag() {
    let data = DataDir::new();
    let kerf = data.start();
    let http = client();
    let index = http.get(kerf.url("/")).send().await.unwrap();
    assert_eq!(index.status(), 200);
    let csp = index.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        csp.contains("script-src 'self'") && !csp.contains("unsafe-inline"),
        "{csp}"
    );
    assert_eq!(index.headers()["x-content-type-options"], "nosniff");
    let etag = index.headers()["etag"].to_str().unwrap().to_string();
    let html = index.text().await.unwrap();
    assert!(html.contains("<script type=\"module\" src=\"/app.js\">"));
    assert!(!html.contains("<script>"), "no inline script");
    let again = http
        .get(kerf.url("/"))
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);
    let js = http.get(kerf.url("/app.js")).send().await.unwrap();
    assert_eq!(js.status(), 200);
    assert!(js.headers()["content-type"]
        .to_str()
        .unwrap()
        .contains("javascript"));
}

#[tokio::test(flavor = "multi_thread")]
async fn deep_links_get_the_app_while_unknown_api_paths_get_json_404() {
    let data = DataDir::new();
    let kerf = data.start();
    let http = client();
    let deep = http.get(kerf.url("/workloads/42")).send().await.unwrap();
    assert_eq!(deep.status(), 200);
    assert!(deep.text().await.unwrap().contains("<div id=\"root\">"));
    let missing_file = http.get(kerf.url("/missing.js")).send().await.unwrap();
    assert_eq!(missing_file.status(), 404);
    let api = http.get(kerf.url("/v1/nothing/here")).send().await.unwrap();
    assert_eq!(api.status(), 404);
    assert_eq!(error_code(&api.json().await.unwrap()), "not_found");
    let wrong_method = http.delete(kerf.url("/v1/audit")).send().await.unwrap();
    assert_eq!(wrong_method.status(), 405);
    assert_eq!(
        error_code(&wrong_method.json().await.unwrap()),
        "method_not_allowed"
    );
    let rid = http.get(kerf.url("/healthz")).send().await.unwrap();
    assert!(rid.headers().contains_key("x-request-id"));
}

/// A GET with `Accept-Encoding: accept`: (status, headers, raw body bytes).
async fn fetch(
    http: &reqwest::Client,
    url: String,
    accept: &str,
) -> (u16, reqwest::header::HeaderMap, Vec<u8>) {
    let r = http
        .get(url)
        .header("accept-encoding", accept)
        .send()
        .await
        .unwrap();
    let (status, headers) = (r.status().as_u16(), r.headers().clone());
    (status, headers, r.bytes().await.unwrap().to_vec())
}

fn unbrotli(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    brotli::BrotliDecompress(&mut &data[..], &mut out).expect("valid brotli");
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn files_and_answers_are_compressed_and_versioned_files_are_immutable() {
    let data = DataDir::new();
    let kerf = data.start();
    let http = client();
    let vendor = "/vendor/uPlot-1.6.32.esm.js";
    let (s, plain_h, plain) = fetch(&http, kerf.url(vendor), "identity").await;
    assert_eq!(s, 200);
    assert!(plain_h.get("content-encoding").is_none());
    let (s, h, br) = fetch(&http, kerf.url(vendor), "gzip, deflate, br, zstd").await;
    assert_eq!(s, 200);
    assert_eq!(h["content-encoding"], "br");
    assert_eq!(h["vary"], "accept-encoding");
    assert_eq!(h["cache-control"], "public, max-age=31536000, immutable");
    assert_eq!(unbrotli(&br), plain, "the brotli form is the file");
    assert!(
        br.len() * 3 < plain.len(),
        "{} of {}",
        br.len(),
        plain.len()
    );
    let (_, h, gz) = fetch(&http, kerf.url(vendor), "gzip").await;
    assert_eq!(h["content-encoding"], "gzip");
    let mut back = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&gz[..]), &mut back).unwrap();
    assert_eq!(back, plain);
    // An ETag of one coding revalidates the other: the content is the same file.
    let etag = h["etag"].to_str().unwrap().to_string();
    let again = http
        .get(kerf.url(vendor))
        .header("accept-encoding", "br")
        .header("if-none-match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);

    // The app's own modules are not versioned: revalidated on every load.
    let (_, h, _) = fetch(&http, kerf.url("/ui/shell.js"), "br").await;
    assert_eq!(h["content-encoding"], "br");
    assert_eq!(h["cache-control"], "no-cache");
    let (s, h, _) = fetch(&http, kerf.url("/favicon.svg"), "br").await;
    assert_eq!(s, 200);
    assert!(h["content-type"]
        .to_str()
        .unwrap()
        .starts_with("image/svg+xml"));

    // API answers are compressed on the fly.
    let (s, h, body) = fetch(&http, kerf.url("/v1/openapi.yaml"), "br").await;
    assert_eq!(s, 200);
    assert_eq!(h["content-encoding"], "br");
    let (_, _, plain) = fetch(&http, kerf.url("/v1/openapi.yaml"), "identity").await;
    assert_eq!(unbrotli(&body), plain);
    assert!(
        body.len() * 4 < plain.len(),
        "{} of {}",
        body.len(),
        plain.len()
    );
}
