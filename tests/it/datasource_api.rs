//! The datasource API through the real binary: admin-only CRUD, a test against a real
//! Prometheus behind basic auth, and a distinctive password that never comes back in any
//! response, log line (at debug) or audit record, and is not stored in plaintext.

use serde_json::{json, Value};

use crate::support::prometheus::{OpenMetrics, Prometheus, BASIC_AUTH_PASSWORD, BASIC_AUTH_USER};
use crate::support::{client, DataDir, Kerf};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn datasource_password_appears_in_no_response_log_or_audit_record() {
    let mut om = OpenMetrics::new();
    om.sample(
        "kube_pod_owner",
        &[
            ("cluster", "east"),
            ("namespace", "a"),
            ("pod", "p"),
            ("uid", "u"),
        ],
        1.0,
        1_760_000_000_000,
    );
    let prom = Prometheus::with_data(&om, true);
    let data = DataDir::new();
    data.create_cluster("east");
    let admin = data.admin_token();
    let kerf = Kerf::builder(data.path())
        .envs(&[("KERF_LOG", "debug")])
        .start();
    let http = client();
    let mut seen = Vec::new();
    let call = |resp: reqwest::Response| async move {
        let status = resp.status().as_u16();
        let text = resp.text().await.expect("body");
        (status, text)
    };
    let body = json!({
        "name": "prod", "type": "prometheus", "url": prom.url,
        "auth": {"type": "basic", "username": BASIC_AUTH_USER, "password": BASIC_AUTH_PASSWORD},
        "headers": [{"name": "X-Scope-OrgID", "value": BASIC_AUTH_PASSWORD, "secret": true}],
        "clusterLabel": "cluster",
    });
    let (status, text) = call(
        http.post(kerf.url("/v1/datasources"))
            .bearer_auth(&admin)
            .json(&body)
            .send()
            .await
            .expect("post"),
    )
    .await;
    assert_eq!(status, 201, "{text}");
    let created: Value = serde_json::from_str(&text).expect("json");
    assert_eq!(created["auth"]["passwordSet"], true);
    assert_eq!(created["headers"][0]["valueSet"], true);
    // The load budget and protocol take their documented defaults.
    assert_eq!(created["protocol"], "auto", "{text}");
    assert_eq!(created["maxConcurrentQueries"], 4, "{text}");
    assert_eq!(created["maxSamplesPerQuery"], 500_000, "{text}");
    assert_eq!(created["maxSeriesPerQuery"], 2_000, "{text}");
    let id = created["id"].as_i64().expect("id");
    seen.push(text);
    // A viewer-less, token-less caller is refused.
    let anon = http
        .get(kerf.url("/v1/datasources"))
        .send()
        .await
        .expect("anon");
    assert_eq!(anon.status().as_u16(), 401);
    // Point the cluster at it, then read, test, replace (keeping the secret) and err.
    let (s, t) = call(
        http.put(kerf.url("/v1/clusters/east/datasource"))
            .bearer_auth(&admin)
            .json(&json!({"datasourceId": id}))
            .send()
            .await
            .expect("put"),
    )
    .await;
    assert_eq!(s, 200, "{t}");
    seen.push(t);
    for path in [
        "/v1/datasources".to_string(),
        format!("/v1/datasources/{id}"),
    ] {
        let (s, t) = call(
            http.get(kerf.url(&path))
                .bearer_auth(&admin)
                .send()
                .await
                .expect("get"),
        )
        .await;
        assert_eq!(s, 200, "{t}");
        seen.push(t);
    }
    let (s, t) = call(
        http.post(kerf.url(&format!("/v1/datasources/{id}/test")))
            .bearer_auth(&admin)
            .send()
            .await
            .expect("test"),
    )
    .await;
    assert_eq!(s, 200, "{t}");
    let report: Value = serde_json::from_str(&t).expect("json");
    assert_eq!(
        report["authenticated"], true,
        "the stored password reached Prometheus: {t}"
    );
    assert_eq!(
        report["remoteRead"], true,
        "remote read with the same credentials: {t}"
    );
    assert_eq!(report["protocol"], "remote-read", "{t}");
    assert!(
        report["message"]
            .as_str()
            .unwrap_or("")
            .contains("remote read: yes"),
        "{t}"
    );
    seen.push(t);
    let mut replaced = body.clone();
    replaced["auth"] = json!({"type": "basic", "username": BASIC_AUTH_USER});
    replaced["headers"] = json!([{"name": "X-Scope-OrgID", "secret": true}]);
    // A whole number is one JSON number however it is written.
    replaced["timeoutSeconds"] = json!(30.0);
    let (s, t) = call(
        http.put(kerf.url(&format!("/v1/datasources/{id}")))
            .bearer_auth(&admin)
            .json(&replaced)
            .send()
            .await
            .expect("put"),
    )
    .await;
    assert_eq!(s, 200, "{t}");
    seen.push(t);
    let (s, t) = call(
        http.post(kerf.url(&format!("/v1/datasources/{id}/test")))
            .bearer_auth(&admin)
            .send()
            .await
            .expect("test"),
    )
    .await;
    assert!(
        s == 200 && t.contains("\"authenticated\":true"),
        "PUT kept the write-only password: {t}"
    );
    let mut bad = body.clone();
    bad["url"] = json!("not a url");
    bad["timeoutSeconds"] = json!(BASIC_AUTH_PASSWORD);
    bad["protocol"] = json!("grpc");
    bad["maxSamplesPerQuery"] = json!(5);
    bad["maxSeriesPerQuery"] = json!(-1);
    let (s, t) = call(
        http.post(kerf.url("/v1/datasources"))
            .bearer_auth(&admin)
            .json(&bad)
            .send()
            .await
            .expect("bad"),
    )
    .await;
    assert_eq!(s, 400, "{t}");
    for path in [
        "$.url",
        "$.timeoutSeconds",
        "$.protocol",
        "$.maxSamplesPerQuery",
        "$.maxSeriesPerQuery",
    ] {
        assert!(t.contains(path), "errors name the JSON path {path}: {t}");
    }
    seen.push(t);
    // Every null is named at once, before the document is read (so the bad timeout is
    // not reported yet).
    let mut nulls = body.clone();
    nulls["clusterValue"] = Value::Null;
    nulls["tls"] = json!({"caPem": null});
    nulls["timeoutSeconds"] = json!(BASIC_AUTH_PASSWORD);
    let (s, t) = call(
        http.post(kerf.url("/v1/datasources"))
            .bearer_auth(&admin)
            .json(&nulls)
            .send()
            .await
            .expect("nulls"),
    )
    .await;
    assert_eq!(s, 400, "{t}");
    let refused: Value = serde_json::from_str(&t).expect("json");
    let not_null = "must not be null; leave it out instead";
    assert_eq!(refused["error"]["code"], "invalid_datasource", "{t}");
    assert_eq!(
        refused["error"]["details"]["errors"],
        json!([{"path": "$.clusterValue", "message": not_null},
               {"path": "$.tls.caPem", "message": not_null}]),
        "{t}"
    );
    seen.push(t);
    let (s, t) = call(
        http.delete(kerf.url(&format!("/v1/datasources/{id}")))
            .bearer_auth(&admin)
            .send()
            .await
            .expect("delete"),
    )
    .await;
    assert_eq!(s, 409, "in use by a cluster: {t}");
    seen.push(t);
    let (_, audit) = call(
        http.get(kerf.url("/v1/audit"))
            .bearer_auth(&admin)
            .send()
            .await
            .expect("audit"),
    )
    .await;
    seen.push(audit);
    for text in &seen {
        assert!(
            !text.contains(BASIC_AUTH_PASSWORD),
            "secret in a response: {text}"
        );
    }
    let logs = kerf.log_text();
    assert!(logs.contains("datasource created"), "debug logs captured");
    assert!(!logs.contains(BASIC_AUTH_PASSWORD), "secret in the log");
    kerf.stop();
    let db = std::fs::read(data.path().join("kerf.db")).expect("db");
    let wal = std::fs::read(data.path().join("kerf.db-wal")).unwrap_or_default();
    let needle = BASIC_AUTH_PASSWORD.as_bytes();
    for bytes in [&db, &wal] {
        assert!(
            !bytes.windows(needle.len()).any(|w| w == needle),
            "plaintext secret in the database"
        );
    }
}
