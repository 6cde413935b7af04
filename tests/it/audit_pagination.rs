//! Cursor pagination stays exact while agents keep writing.

use std::collections::HashSet;

use serde_json::Value;

use crate::support::{client, event, uuid, Api, DataDir};

#[tokio::test(flavor = "multi_thread")]
async fn audit_pagination_visits_every_event_exactly_once_while_writers_insert() {
    let data = DataDir::new();
    let token = data.create_cluster("prod");
    let admin = data.admin_token();
    let kerf = data.start();
    let http = client();
    let mut before = HashSet::new();
    for _ in 0..10 {
        let ids: Vec<String> = (0..30).map(|_| uuid()).collect();
        before.extend(ids.iter().cloned());
        let batch: Vec<Value> = ids.iter().map(|i| event(i)).collect();
        assert_eq!(
            kerf.api(&token)
                .post_events("prod", &Value::Array(batch))
                .await
                .0,
            200
        );
    }
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut writers = Vec::new();
    for _ in 0..3 {
        let (base, token, stop) = (kerf.url(""), token.clone(), stop.clone());
        writers.push(tokio::spawn(async move {
            let mut sent = 0usize;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) && sent < 2000 {
                let batch: Vec<Value> = (0..10).map(|_| event(&uuid())).collect();
                assert_eq!(
                    Api::new(&base, &token)
                        .post_events("prod", &Value::Array(batch))
                        .await
                        .0,
                    200
                );
                sent += 10;
            }
            sent
        }));
    }
    let mut seen: Vec<String> = Vec::new();
    let mut next: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut url = kerf.url("/v1/audit?limit=7");
        if let Some(n) = &next {
            url.push_str(&format!("&next={n}"));
        }
        let page: Value = http
            .get(url)
            .bearer_auth(&admin)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        pages += 1;
        for item in page["items"].as_array().unwrap() {
            seen.push(item["id"].as_str().unwrap().to_string());
        }
        tokio::task::yield_now().await;
        match page["next"].as_str() {
            Some(n) => next = Some(n.to_string()),
            None => break,
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut written = 0;
    for w in writers {
        written += w.await.unwrap();
    }
    assert!(written > 0, "writers ran concurrently with the walk");
    let unique: HashSet<&String> = seen.iter().collect();
    assert_eq!(unique.len(), seen.len(), "no event visited twice");
    for id in &before {
        assert!(
            unique.contains(id),
            "event {id} stored before the walk was missed"
        );
    }
    assert!(pages >= 300 / 7, "walked {pages} pages");
}
