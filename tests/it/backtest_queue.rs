//! Issue 36, defect 6: backtests queued without limit, each holding a connection and
//! its request while the one in front read a slow datasource. One runs, a few wait
//! (`kerf::runs::backtest_queue`), and the next is told at once to come back later:
//! 429 `backtests_busy` with `Retry-After`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};
use tokio::sync::watch;

use crate::support::hub::hub;
use crate::support::{eventually, secs, Api};

const CLUSTER: &str = "prod";

/// A Prometheus that answers every request with a 400, but only once `open` says so.
#[derive(Clone)]
struct Slow {
    open: watch::Receiver<bool>,
    asked: Arc<AtomicUsize>,
}

async fn answer(State(mut s): State<Slow>) -> Response {
    s.asked.fetch_add(1, Ordering::SeqCst);
    let _ = s.open.wait_for(|open| *open).await;
    let body = json!({"status": "error", "errorType": "bad_data", "error": "not today"});
    (StatusCode::BAD_REQUEST, axum::Json(body)).into_response()
}

async fn slow_prometheus() -> (String, watch::Sender<bool>, Arc<AtomicUsize>) {
    let (open, rx) = watch::channel(true);
    let asked = Arc::new(AtomicUsize::new(0));
    let app = axum::Router::new().fallback(answer).with_state(Slow {
        open: rx,
        asked: asked.clone(),
    });
    let url = crate::support::serve(app).await;
    (url, open, asked)
}

/// A backtest: status, `Retry-After` and body.
async fn backtest(api: Api) -> (u16, Option<String>, Value) {
    let r = api
        .request("POST", "/v1/policies/backtest")
        .json(&json!({}))
        .send()
        .await;
    let retry = r
        .headers
        .get("retry-after")
        .map(|v| v.to_str().expect("ASCII").to_string());
    (r.status, retry, r.body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backtests_past_the_queue_are_told_to_retry_later_at_once() {
    let h = hub(CLUSTER, false).await;
    let (url, open, asked) = slow_prometheus().await;
    h.api.link_prometheus(CLUSTER, "slow", &url).await;
    // The check the link starts is done before the datasource slows down.
    let readiness = format!("/v1/clusters/{CLUSTER}/readiness");
    eventually("the datasource check", secs(20), async || {
        let (_, r) = h.api.get(&readiness).await;
        r["checks"]["datasource"]["status"] != "pending"
    })
    .await;
    open.send_replace(false);
    let before = asked.load(Ordering::SeqCst);

    // The first backtest holds the turn while its datasource does not answer.
    let mut all = tokio::task::JoinSet::new();
    all.spawn(backtest(h.api.clone()));
    eventually(
        "the first backtest to ask its datasource",
        secs(20),
        async || asked.load(Ordering::SeqCst) > before,
    )
    .await;
    let waiting = kerf::runs::backtest_queue::MAX_WAITING_BACKTESTS;
    for _ in 0..=waiting {
        all.spawn(backtest(h.api.clone()));
    }
    // Exactly one of them finds the queue full, and hears so at once.
    let (status, retry, body) = tokio::time::timeout(secs(20), all.join_next())
        .await
        .expect("a backtest past the queue is answered at once, not queued")
        .expect("a task")
        .expect("the task ends");
    assert_eq!(status, 429, "{body}");
    assert_eq!(body["error"]["code"], "backtests_busy", "{body}");
    assert_eq!(body["error"]["details"]["reason"], "queue_full", "{body}");
    assert_eq!(body["error"]["details"]["maxWaiting"], waiting, "{body}");
    let retry: u64 = retry.expect("Retry-After").parse().expect("seconds");
    assert!(retry > 0);

    // The datasource answers: the running one and every queued one finish.
    open.send_replace(true);
    let done = tokio::time::timeout(secs(60), all.join_all())
        .await
        .expect("the queue drains");
    assert_eq!(done.len(), waiting + 1);
    for (status, _, body) in done {
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["errors"][0]["cluster"], CLUSTER, "{body}");
    }
}
