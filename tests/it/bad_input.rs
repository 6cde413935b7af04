//! Hostile or broken input never panics the server: each gets a 4xx in the API's error
//! shape, and the server keeps serving.

use crate::support::{client, error_code, event, uuid, DataDir};

#[tokio::test(flavor = "multi_thread")]
async fn malformed_bodies_get_4xx_with_the_error_shape_and_the_server_stays_up() {
    let data = DataDir::new();
    let token = data.create_cluster("prod");
    let kerf = data.start();
    let http = client();
    let mut unknown_field = event(&uuid());
    unknown_field["colour"] = serde_json::json!("blue");
    let mut wrong_types = event(&uuid());
    wrong_types["time"] = serde_json::json!(12345);
    wrong_types["workload"] = serde_json::json!("shop/api");
    let mut long_message = event(&uuid());
    long_message["message"] = serde_json::json!("m".repeat(1025));
    let mut mib_message = event(&uuid());
    mib_message["message"] = serde_json::json!("m".repeat(1024 * 1024));
    let mut invalid_utf8 =
        br#"[{"id":"6f1c2a8e-0d7b-4c55-a0b1-8f9e2f0d1c3a","type":"skipped","reason":""#.to_vec();
    invalid_utf8.extend_from_slice(&[0xff, 0xfe, 0x80]);
    invalid_utf8.extend_from_slice(br#""}]"#);
    let too_many: Vec<serde_json::Value> = (0..1001).map(|_| event(&uuid())).collect();
    let cases: Vec<(&str, Vec<u8>, u16, &str)> = vec![
        (
            "malformed JSON",
            b"[{\"id\": ".to_vec(),
            400,
            "invalid_json",
        ),
        ("not an array", b"{\"id\": 1}".to_vec(), 400, "invalid_body"),
        (
            "wrong types",
            serde_json::to_vec(&[wrong_types]).unwrap(),
            400,
            "invalid_item",
        ),
        (
            "unknown field",
            serde_json::to_vec(&[unknown_field]).unwrap(),
            400,
            "invalid_item",
        ),
        (
            "1025-char message",
            serde_json::to_vec(&[long_message]).unwrap(),
            400,
            "invalid_item",
        ),
        (
            "1 MiB message",
            serde_json::to_vec(&[mib_message]).unwrap(),
            413,
            "payload_too_large",
        ),
        (
            "oversized body",
            vec![b' '; 2 * 1024 * 1024],
            413,
            "payload_too_large",
        ),
        (
            "1001 items",
            serde_json::to_vec(&too_many).unwrap(),
            413,
            "too_many_items",
        ),
        ("invalid UTF-8", invalid_utf8, 400, "invalid_json"),
        ("empty body", Vec::new(), 400, "invalid_json"),
        ("array of numbers", b"[1,2,3]".to_vec(), 400, "invalid_item"),
    ];
    for (what, body, status, code) in cases {
        let resp = http
            .post(kerf.url("/v1/clusters/prod/events"))
            .bearer_auth(&token)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(resp.status().as_u16(), status, "{what}");
        let json: serde_json::Value = resp
            .json()
            .await
            .unwrap_or_else(|e| panic!("{what}: body not JSON: {e}"));
        assert_eq!(error_code(&json), code, "{what}: {json}");
    }
    let health = http.get(kerf.url("/healthz")).send().await.unwrap();
    assert_eq!(health.status(), 200);
    assert!(!kerf.log_text().contains("panicked"));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_413_names_the_limit() {
    let data = DataDir::new();
    let token = data.create_cluster("prod");
    let kerf = data.start();
    let resp = client()
        .post(kerf.url("/v1/clusters/prod/events"))
        .bearer_auth(&token)
        .body(vec![b'['; 1024 * 1024 + 1])
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 413);
    let body: serde_json::Value = resp.json().await.unwrap();
    assert_eq!(body["error"]["details"]["limitBytes"], 1024 * 1024);
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("1048576"));
}
