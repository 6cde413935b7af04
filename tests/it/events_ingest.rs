//! Event ingest through the real binary: exactly-once storage, whole-batch refusal,
//! token checks, durability across restarts and the actions metric.

use std::collections::HashMap;

use serde_json::{json, Value};

use crate::support::{client, error_code, event, uuid, Api, DataDir};

#[tokio::test(flavor = "multi_thread")]
async fn duplicate_ids_are_stored_once_across_batches_and_within_one_batch() {
    let data = DataDir::new();
    let token = data.create_cluster("prod");
    let admin = data.admin_token();
    let kerf = data.start();
    let (a, b, c) = (uuid(), uuid(), uuid());
    let (s, body) = kerf
        .api(&token)
        .post_events("prod", &json!([event(&a), event(&a), event(&b)]))
        .await;
    assert_eq!((s, body), (200, json!({"accepted": 2, "duplicates": 1})));
    let (s, body) = kerf
        .api(&token)
        .post_events("prod", &json!([event(&b), event(&c)]))
        .await;
    assert_eq!((s, body), (200, json!({"accepted": 1, "duplicates": 1})));
    let stored = kerf.api(&admin).audit_all("").await;
    let mut ids: Vec<&str> = stored.iter().map(|e| e["id"].as_str().unwrap()).collect();
    ids.sort_unstable();
    let mut want = vec![a.as_str(), b.as_str(), c.as_str()];
    want.sort_unstable();
    assert_eq!(ids, want);
    assert!(stored
        .iter()
        .all(|e| e["cluster"] == "prod" && e["receivedAt"].is_string()));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_invalid_item_refuses_the_whole_batch_naming_its_index_and_stores_nothing() {
    let data = DataDir::new();
    let token = data.create_cluster("prod");
    let admin = data.admin_token();
    let kerf = data.start();
    let mut bad = event(&uuid());
    bad["reason"] = json!("NotAReason");
    let bad_id = bad["id"].as_str().unwrap().to_string();
    let batch = json!([event(&uuid()), event(&uuid()), bad, event(&uuid())]);
    let (s, body) = kerf.api(&token).post_events("prod", &batch).await;
    assert_eq!(s, 400);
    assert_eq!(error_code(&body), "invalid_item");
    let items = body["error"]["details"]["items"].as_array().expect("items");
    assert_eq!(items.len(), 1, "{body}");
    assert_eq!(items[0]["index"], 2);
    assert_eq!(items[0]["id"], bad_id.as_str());
    assert_eq!(items[0]["field"], "reason");
    assert!(kerf.api(&admin).audit_all("").await.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn missing_unknown_and_foreign_tokens_are_refused_with_401_or_403() {
    let data = DataDir::new();
    let prod = data.create_cluster("prod");
    let stage = data.create_cluster("stage");
    let admin = data.admin_token();
    let kerf = data.start();
    let http = client();
    let url = kerf.url("/v1/clusters/prod/events");
    let batch = json!([event(&uuid())]);
    let no_token = http.post(&url).json(&batch).send().await.unwrap();
    assert_eq!(no_token.status(), 401);
    assert_eq!(error_code(&no_token.json().await.unwrap()), "unauthorized");
    for (token, want) in [
        ("kerf_ct_0000".to_string(), 401),
        ("garbage".to_string(), 401),
        (stage.clone(), 403),
        (admin.clone(), 403),
    ] {
        let (s, body) = kerf.api(&token).post_events("prod", &batch).await;
        assert_eq!(s, want, "{body}");
        error_code(&body);
    }
    let (s, _) = kerf.api(&prod).post_events("prod", &batch).await;
    assert_eq!(s, 200);
    let audit_as_cluster = http
        .get(kerf.url("/v1/audit"))
        .bearer_auth(&prod)
        .send()
        .await
        .unwrap();
    assert_eq!(audit_as_cluster.status(), 403);
    let audit_anonymous = http.get(kerf.url("/v1/audit")).send().await.unwrap();
    assert_eq!(audit_anonymous.status(), 401);
}

#[tokio::test(flavor = "multi_thread")]
async fn events_and_the_actions_metric_survive_a_restart() {
    let data = DataDir::new();
    let token = data.create_cluster("prod");
    let admin = data.admin_token();
    let http = client();
    let ids: Vec<String> = (0..25).map(|_| uuid()).collect();
    {
        let kerf = data.start();
        let batch: Vec<Value> = ids.iter().map(|i| event(i)).collect();
        let (s, _) = kerf
            .api(&token)
            .post_events("prod", &Value::Array(batch))
            .await;
        assert_eq!(s, 200);
        assert_eq!(kerf.stop(), Some(0));
    }
    let kerf = data.start();
    let stored = kerf.api(&admin).audit_all("").await;
    assert_eq!(stored.len(), 25);
    let metrics = actions_metric(&http, &kerf.url("/metrics")).await;
    assert_eq!(
        metrics.get(&("prod".into(), "skipped".into(), "ModeAudit".into())),
        Some(&25)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn kerf_actions_total_equals_the_stored_count_per_cluster_type_and_reason() {
    let data = DataDir::new();
    let prod = data.create_cluster("prod");
    let stage = data.create_cluster("stage");
    let admin = data.admin_token();
    let kerf = data.start();
    let http = client();
    let kinds = [
        ("skipped", "ModeOff"),
        ("blocked", "Paused"),
        ("blocked", "Cooldown"),
        ("failed", "ApplyError"),
    ];
    for round in 0..6 {
        let batch: Vec<Value> = (0..10)
            .map(|i| {
                let (t, r) = kinds[(round + i) % kinds.len()];
                let mut e = event(&uuid());
                e["type"] = json!(t);
                e["reason"] = json!(r);
                e
            })
            .collect();
        let mut batch = batch;
        batch.push(batch[0].clone());
        let (cluster, token) = if round % 2 == 0 {
            ("prod", &prod)
        } else {
            ("stage", &stage)
        };
        let (s, _) = kerf
            .api(token)
            .post_events(cluster, &Value::Array(batch))
            .await;
        assert_eq!(s, 200);
    }
    let mut stored: HashMap<(String, String, String), u64> = HashMap::new();
    for e in kerf.api(&admin).audit_all("").await {
        let key = (
            e["cluster"].as_str().unwrap().to_string(),
            e["type"].as_str().unwrap().to_string(),
            e["reason"].as_str().unwrap().to_string(),
        );
        *stored.entry(key).or_default() += 1;
    }
    assert_eq!(stored.values().sum::<u64>(), 60);
    assert_eq!(actions_metric(&http, &kerf.url("/metrics")).await, stored);
}

#[tokio::test(flavor = "multi_thread")]
async fn audit_filters_select_by_cluster_type_reason_and_time() {
    let data = DataDir::new();
    let prod = data.create_cluster("prod");
    let stage = data.create_cluster("stage");
    let admin = data.admin_token();
    let kerf = data.start();
    let http = client();
    let mut early = event(&uuid());
    early["time"] = json!("2026-01-01T00:00:00Z");
    let mut applied = event(&uuid());
    applied["type"] = json!("blocked");
    applied["reason"] = json!("Paused");
    applied["recommendationID"] = json!("rec-1");
    kerf.api(&prod)
        .post_events("prod", &json!([early, applied]))
        .await;
    kerf.api(&stage)
        .post_events("stage", &json!([event(&uuid())]))
        .await;
    let count = |q: &'static str| {
        let base = kerf.url("");
        let admin = admin.clone();
        async move { Api::new(&base, &admin).audit_all(q).await.len() }
    };
    assert_eq!(count("&cluster=prod").await, 2);
    assert_eq!(count("&cluster=stage").await, 1);
    assert_eq!(count("&type=blocked&reason=Paused").await, 1);
    assert_eq!(count("&recommendationID=rec-1").await, 1);
    assert_eq!(count("&since=2026-06-01T00:00:00Z").await, 2);
    assert_eq!(count("&until=2026-06-01T00:00:00Z").await, 1);
    let config = http
        .get(kerf.url("/v1/audit?type=config_changed"))
        .bearer_auth(&admin)
        .send()
        .await
        .unwrap();
    assert_eq!(
        config.status(),
        400,
        "config_changed is served by /v1/audit/config"
    );
    let body: serde_json::Value = config.json().await.unwrap();
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("/v1/audit/config"));
    let bad = http
        .get(kerf.url("/v1/audit?limit=501"))
        .bearer_auth(&admin)
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);
    assert_eq!(error_code(&bad.json().await.unwrap()), "invalid_query");
}

/// Parses `kerf_actions_total` samples from the exposition text.
pub async fn actions_metric(
    http: &reqwest::Client,
    url: &str,
) -> HashMap<(String, String, String), u64> {
    let text = http.get(url).send().await.unwrap().text().await.unwrap();
    let mut out = HashMap::new();
    for line in text
        .lines()
        .filter(|l| l.starts_with("kerf_actions_total{"))
    {
        let (labels, value) = line.rsplit_once(' ').expect("sample");
        let label = |k: &str| {
            labels
                .split(&format!("{k}=\""))
                .nth(1)
                .and_then(|r| r.split('"').next())
                .expect("label")
                .to_string()
        };
        out.insert(
            (label("cluster"), label("type"), label("reason")),
            value.parse().expect("count"),
        );
    }
    out
}
