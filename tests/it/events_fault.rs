//! SIGKILL in the middle of ingest: after a restart and resends, the stored set is
//! exactly the union of the ids sent. Nothing lost, nothing doubled.

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::{watch, Mutex};

use std::time::Duration;

use crate::support::api::send_until_acked;
use crate::support::wait::eventually_every;
use crate::support::{client, event, secs, uuid, DataDir, Kerf};

const CLIENTS: usize = 4;
const BATCHES_PER_CLIENT: usize = 60;
const BATCH: usize = 25;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sigkill_mid_stream_loses_and_doubles_nothing_after_resends() {
    let data = DataDir::new();
    let token = data.create_cluster("prod");
    let admin = data.admin_token();
    let http = client();
    let kerf = data.start();
    let (url_tx, url_rx) = watch::channel(kerf.url(""));
    let acked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let sent_ids = Arc::new(Mutex::new(HashSet::new()));
    let mut clients = Vec::new();
    for _ in 0..CLIENTS {
        let (http, token, url_rx, acked, sent_ids) = (
            http.clone(),
            token.clone(),
            url_rx.clone(),
            acked.clone(),
            sent_ids.clone(),
        );
        clients.push(tokio::spawn(async move {
            for _ in 0..BATCHES_PER_CLIENT {
                let batch: Vec<Value> = (0..BATCH).map(|_| event(&uuid())).collect();
                sent_ids
                    .lock()
                    .await
                    .extend(batch.iter().map(|e| e["id"].as_str().unwrap().to_string()));
                send_until_acked(&http, &url_rx, &token, &Value::Array(batch)).await;
                acked.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        }));
    }
    let third = CLIENTS * BATCHES_PER_CLIENT / 3;
    eventually_every(
        "a third of the batches acknowledged",
        secs(60),
        Duration::from_millis(2),
        async || {
            let n = acked.load(std::sync::atomic::Ordering::SeqCst);
            if n >= third {
                Ok(())
            } else {
                Err(n)
            }
        },
    )
    .await;
    let killed_at = acked.load(std::sync::atomic::Ordering::SeqCst);
    kerf.kill();
    let kerf = Kerf::builder(data.path()).start();
    url_tx.send(kerf.url("")).expect("clients listen");
    for c in clients {
        c.await.expect("client finished");
    }
    assert!(
        killed_at < CLIENTS * BATCHES_PER_CLIENT,
        "the kill happened mid-stream"
    );
    let stored = kerf.api(&admin).audit_all("").await;
    let stored_ids: Vec<String> = stored
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect();
    let unique: HashSet<String> = stored_ids.iter().cloned().collect();
    assert_eq!(unique.len(), stored_ids.len(), "an event was stored twice");
    let sent = sent_ids.lock().await.clone();
    assert_eq!(sent.len(), CLIENTS * BATCHES_PER_CLIENT * BATCH);
    assert_eq!(
        unique, sent,
        "stored set differs from the union of sent ids"
    );
}
