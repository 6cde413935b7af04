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
