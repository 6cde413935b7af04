//! Issue 18, the HTTP surface, as an attacker would try it (loopback, bounded): invented
//! methods cannot grow `/metrics`, a non-UTF-8 path segment is the client's error, every
//! body has one limit and one deadline from the config with one JSON error shape, login
//! refuses cross-site posts, and `/metrics` can require a token.

use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::{client, error_code, event, uuid, Cred, DataDir};

#[tokio::test(flavor = "multi_thread")]
async fn invented_methods_and_paths_never_become_metric_labels() {
    let data = DataDir::new();
    let kerf = data.start();
    let http = client();
    // The original attack: 8 KB method names, each new, each once.
    let methods: Vec<String> = (0..100)
        .map(|i| format!("X{i:04}{}", "Q".repeat(8 * 1024)))
        .collect();
    for chunk in methods.chunks(20) {
        let sends = chunk.iter().enumerate().map(|(i, m)| {
            let method = reqwest::Method::from_bytes(m.as_bytes()).expect("token method");
            http.request(method, kerf.url(&format!("/v1/nope-{i}-{}", uuid())))
                .send()
        });
        for r in futures_util::future::join_all(sends).await {
            assert!(r.expect("answered").status().is_client_error());
        }
    }
    let text = kerf.metrics_text().await;
    assert!(
        text.len() < 64 * 1024,
        "/metrics stays small: {} bytes",
        text.len()
    );
    assert!(!text.contains("QQQQ") && !text.contains("nope-"), "{text}");
    let other: f64 = text
        .lines()
        .find(|l| {
            l.starts_with("kerf_http_requests_total{")
                && l.contains("method=\"other\"")
                && l.contains("route=\"unmatched\"")
        })
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
        .expect("invented methods are counted as `other`");
    assert_eq!(other, 100.0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_matched_route_asked_with_many_ids_is_one_label_its_template() {
    let data = DataDir::new();
    let admin = data.admin_token();
    let kerf = data.start();
    let http = client();
    let ids: Vec<String> = (0..200).map(|i| format!("wl-{i:04}-{}", uuid())).collect();
    for chunk in ids.chunks(25) {
        let asks = chunk.iter().map(|id| {
            http.get(kerf.url(&format!("/v1/workloads/{id}/history")))
                .bearer_auth(&admin)
                .send()
        });
        for r in futures_util::future::join_all(asks).await {
            assert_eq!(r.expect("answered").status(), 404);
        }
    }
    let text = kerf.metrics_text().await;
    assert!(!text.contains("wl-0"), "an id became a label: {text}");
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("kerf_http_requests_total{") && l.contains("/history"))
        .collect();
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert!(
        lines[0].contains("route=\"/v1/workloads/{id}/history\"")
            && lines[0].contains("status=\"404\"")
            && lines[0].ends_with(" 200"),
        "{}",
        lines[0]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_path_segment_that_is_not_utf8_is_a_400_in_the_error_shape_not_a_500() {
    let data = DataDir::new();
    let admin = data.admin_token();
    let kerf = data.start();
    let http = client();
    for (method, path, token) in [
        ("GET", "/v1/workloads/%FF", None),
        ("GET", "/v1/workloads/%FF", Some(admin.as_str())),
        ("POST", "/v1/clusters/%C3%28/events", None),
    ] {
        let m = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
        let mut req = http.request(m, kerf.url(path));
        if let Some(t) = token {
            req = req.bearer_auth(t);
        }
        let resp = req.send().await.expect("send");
        assert_eq!(resp.status(), 400, "{path}");
        let body: serde_json::Value = resp.json().await.expect("json");
        assert_eq!(error_code(&body), "invalid_path", "{body}");
    }
    let logs = kerf.log_text();
    assert!(!logs.contains("ERROR"), "no server error logged:\n{logs}");
}

#[tokio::test(flavor = "multi_thread")]
async fn every_route_takes_its_body_limit_from_the_config_and_answers_413_as_json() {
    let data = DataDir::new();
    let admin = data.admin_token();
    let agent = data.create_cluster("prod");
    let kerf = crate::support::Kerf::builder(data.path())
        .envs(&[("KERF_HTTP__MAX_BODY_BYTES", "4096")])
        .start();
    let http = client();
    // Under the route's own 1 MiB but over the configured 4 KiB.
    let batch: Vec<_> = (0..40).map(|_| event(&uuid())).collect();
    let (status, body) = kerf.api(&agent).post_events("prod", &json!(batch)).await;
    assert_eq!(status, 413, "{body}");
    assert_eq!(error_code(&body), "payload_too_large");
    assert_eq!(body["error"]["details"]["limitBytes"], 4096);
    // The datasource routes answered a plain-text 413 at 2 MiB before.
    let doc = json!({"name": "big", "type": "prometheus", "url": "http://127.0.0.1:1",
                     "tls": {"caPem": "x".repeat(3 * 1024 * 1024)}});
    let resp = http
        .post(kerf.url("/v1/datasources"))
        .bearer_auth(&admin)
        .json(&doc)
        .send()
        .await
        .expect("send");
    assert_eq!(resp.status(), 413);
    let body: serde_json::Value = resp.json().await.expect("a JSON error body");
    assert_eq!(error_code(&body), "payload_too_large");
    assert_eq!(body["error"]["details"]["limitBytes"], 4096);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_body_that_trickles_in_past_the_deadline_gets_408() {
    let data = DataDir::new();
    let agent = data.create_cluster("prod");
    let kerf = crate::support::Kerf::builder(data.path())
        .envs(&[("KERF_HTTP__BODY_READ_TIMEOUT_SECONDS", "1")])
        .start();
    let mut s = tokio::net::TcpStream::connect(kerf.addr)
        .await
        .expect("connect");
    let head = format!(
        "POST /v1/clusters/prod/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {agent}\r\n\
         Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n["
    );
    s.write_all(head.as_bytes()).await.expect("head");
    let mut answer = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut answer)).await;
    assert!(
        read.is_ok(),
        "the server answered and closed within the deadline"
    );
    let text = String::from_utf8_lossy(&answer);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert!(text.contains("body_timeout"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn login_refuses_cross_site_posts_and_non_json_bodies() {
    let data = DataDir::new();
    let password = data.bootstrap_admin("alice");
    let kerf = data.start_for_logins(&[]);
    let http = client();
    let body = json!({"username": "alice", "password": password}).to_string();
    let login = |ct: &str, extra: &[(&str, String)]| {
        let mut req = http
            .post(kerf.url("/v1/auth/login"))
            .header("content-type", ct)
            .body(body.clone());
        for (k, v) in extra {
            req = req.header(*k, v);
        }
        req.send()
    };
    // What a hostile page's form or fetch(no-cors) can send: no preflight needed.
    let r = login("text/plain", &[]).await.expect("send");
    assert_eq!(r.status(), 415);
    let r = login("application/x-www-form-urlencoded", &[])
        .await
        .expect("send");
    assert_eq!(r.status(), 415);
    let here = format!("http://{}", kerf.addr);
    for extra in [
        vec![("sec-fetch-site", "cross-site".to_string())],
        vec![("sec-fetch-site", "same-site".to_string())],
        vec![("origin", "http://evil.example".to_string())],
        vec![("origin", "null".to_string())],
    ] {
        let r = login("application/json", &extra).await.expect("send");
        assert_eq!(r.status(), 403, "{extra:?}");
        let b: serde_json::Value = r.json().await.expect("json");
        assert_eq!(error_code(&b), "cross_site");
    }
    let same = vec![
        ("origin", here),
        ("sec-fetch-site", "same-origin".to_string()),
    ];
    let r = login("application/json; charset=utf-8", &same)
        .await
        .expect("send");
    assert_eq!(r.status(), 200, "the UI's own login still works");
    // Over HTTP/2 the host is the request's authority, not a Host header.
    let h2 = reqwest::Client::builder()
        .http2_prior_knowledge()
        .build()
        .expect("h2 client");
    let r = h2
        .post(kerf.url("/v1/auth/login"))
        .header("content-type", "application/json")
        .header("origin", format!("http://{}", kerf.addr))
        .body(body.clone())
        .send()
        .await
        .expect("send over h2");
    assert_eq!(r.version(), reqwest::Version::HTTP_2);
    assert_eq!(r.status(), 200, "the same-origin login works over HTTP/2");
}

#[tokio::test(flavor = "multi_thread")]
async fn metrics_can_require_a_token_of_any_fleet_role() {
    let data = DataDir::new();
    let admin = data.admin_token();
    let viewer = crate::support::stdout_line(
        &data.run(&["token", "create", "--name", "scraper", "--role", "viewer"]),
    );
    let open = data.start();
    assert_eq!(
        open.api("")
            .recording()
            .call_as("GET", "/metrics", Cred::None, None)
            .await
            .status,
        200,
        "public by default"
    );
    drop(open);
    let kerf = crate::support::Kerf::builder(data.path())
        .envs(&[("KERF_HTTP__METRICS_REQUIRE_TOKEN", "true")])
        .start();
    let api = kerf.api("").recording();
    assert_eq!(
        api.call_as("GET", "/metrics", Cred::None, None)
            .await
            .status,
        401
    );
    for token in [&admin, &viewer] {
        let r = api
            .call_as("GET", "/metrics", Cred::Bearer(token), None)
            .await;
        assert_eq!(r.status, 200);
    }
    assert_eq!(
        api.call_as("GET", "/healthz", Cred::None, None)
            .await
            .status,
        200,
        "health stays public"
    );
}
