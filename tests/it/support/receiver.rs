//! Real notification receivers on loopback: an HTTP server per channel kind that checks
//! the payload's shape like the real service would (Slack Block Kit, a Teams Adaptive
//! Card, kerf's signed webhook — the HMAC verified here, independently of kerf, by the
//! recipe of docs/contracts/notifications.md), records what it accepted, and can be told
//! to fail N times or to hang. A refused payload answers 400 and is recorded as a fault.
//! Like the contract's recipe, a webhook receiver refuses a signature whose
//! `X-Kerf-Timestamp` is more than five minutes from its own clock (a replay); that
//! clock is the system's, or the hub's manual clock in tests that move it.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use hmac::{Hmac, KeyInit, Mac};
use serde_json::Value;
use sha2::Sha256;

/// What a receiver expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Slack,
    Teams,
    /// kerf's webhook, signed with this secret.
    Webhook,
}

/// One accepted request.
#[derive(Debug, Clone)]
pub struct Received {
    /// `X-Kerf-Delivery`.
    pub delivery: String,
    /// `X-Kerf-Kind`.
    pub kind: String,
    pub body: Value,
}

/// The receiver's clock, in Unix seconds.
pub type Now = Arc<dyn Fn() -> i64 + Send + Sync>;

/// How far a signature's timestamp may be from the receiver's clock (the contract's 300 s).
pub const TOLERANCE_SECONDS: i64 = 300;

struct Inner {
    shape: Shape,
    secret: Option<String>,
    now: Mutex<Now>,
    /// Answer 500 to this many more requests.
    fail: AtomicUsize,
    hang: AtomicBool,
    /// Milliseconds to take before answering.
    delay_ms: AtomicUsize,
    attempts: AtomicUsize,
    accepted: Mutex<Vec<Received>>,
    faults: Mutex<Vec<String>>,
}

/// A running receiver.
#[derive(Clone)]
pub struct Receiver {
    pub url: String,
    inner: Arc<Inner>,
}

impl Receiver {
    /// Starts a receiver at `http://127.0.0.1:<port>/<path>`.
    pub async fn start(shape: Shape, path: &str, secret: Option<&str>) -> Receiver {
        let inner = Arc::new(Inner {
            shape,
            secret: secret.map(str::to_string),
            now: Mutex::new(Arc::new(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs() as i64)
            })),
            fail: AtomicUsize::new(0),
            hang: AtomicBool::new(false),
            delay_ms: AtomicUsize::new(0),
            attempts: AtomicUsize::new(0),
            accepted: Mutex::new(Vec::new()),
            faults: Mutex::new(Vec::new()),
        });
        let app = axum::Router::new()
            .fallback(axum::routing::post(receive))
            .with_state(inner.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind receiver");
        let url = format!("http://{}/{path}", listener.local_addr().expect("addr"));
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Receiver { url, inner }
    }

    /// The next `n` requests get 500 (with the request path echoed, as a careless
    /// server might: kerf must not store it).
    pub fn fail_next(&self, n: usize) {
        self.inner.fail.store(n, Ordering::SeqCst);
    }

    /// Every request hangs (never answered) until `hang(false)`.
    pub fn hang(&self, on: bool) {
        self.inner.hang.store(on, Ordering::SeqCst);
    }

    /// Takes `ms` before answering each request.
    pub fn delay(&self, ms: usize) {
        self.inner.delay_ms.store(ms, Ordering::SeqCst);
    }

    pub fn attempts(&self) -> usize {
        self.inner.attempts.load(Ordering::SeqCst)
    }

    pub fn accepted(&self) -> Vec<Received> {
        self.inner.accepted.lock().expect("lock").clone()
    }

    pub fn faults(&self) -> Vec<String> {
        self.inner.faults.lock().expect("lock").clone()
    }

    /// Event ids carried by accepted messages, counted once per distinct delivery id
    /// (a retried delivery is the same message), by event id.
    pub fn event_counts(&self) -> BTreeMap<String, usize> {
        let mut seen = std::collections::HashSet::new();
        let mut counts = BTreeMap::new();
        for r in self.accepted() {
            if !seen.insert(r.delivery.clone()) {
                continue;
            }
            for id in event_ids(&r) {
                *counts.entry(id).or_insert(0) += 1;
            }
        }
        counts
    }

    /// Polls until `done(accepted)` holds; panics after `limit` with what arrived.
    pub async fn wait_until(
        &self,
        limit: Duration,
        what: &str,
        done: impl Fn(&[Received]) -> bool,
    ) -> Duration {
        let started = Instant::now();
        // A steady 20 ms: callers judge schedules by the time this returns.
        let every = Duration::from_millis(20);
        super::wait::eventually_every(what, limit, every, async || {
            let got = self.accepted();
            if done(&got) {
                Ok(())
            } else {
                Err(format!(
                    "{} message(s), faults {:?}",
                    got.len(),
                    self.faults()
                ))
            }
        })
        .await;
        started.elapsed()
    }
}

impl Receiver {
    /// Judges timestamps by `now` (Unix seconds) instead of the system clock.
    pub fn use_clock(&self, now: impl Fn() -> i64 + Send + Sync + 'static) {
        *self.inner.now.lock().expect("lock") = Arc::new(now);
    }
}

/// Event ids a webhook message carries (`data.events[].id`); chat messages carry none.
pub fn event_ids(r: &Received) -> Vec<String> {
    r.body["data"]["events"]
        .as_array()
        .map(|events| {
            events
                .iter()
                .filter_map(|e| e["id"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// HMAC-SHA256 over `<timestamp>.<body>`, hex, as the contract documents.
pub fn signature_ok(
    secret: &str,
    headers: &HeaderMap,
    body: &[u8],
    now_s: i64,
) -> Result<(), String> {
    let ts = headers
        .get("x-kerf-timestamp")
        .and_then(|v| v.to_str().ok())
        .ok_or("no X-Kerf-Timestamp")?;
    let signed: i64 = ts
        .parse()
        .map_err(|_| "X-Kerf-Timestamp is not Unix seconds")?;
    if (now_s - signed).abs() > TOLERANCE_SECONDS {
        return Err(format!(
            "X-Kerf-Timestamp {signed} is {}s from now: a replay, refused",
            now_s - signed
        ));
    }
    let sig = headers
        .get("x-kerf-signature")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("sha256="))
        .ok_or("no X-Kerf-Signature sha256=…")?;
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).map_err(|e| e.to_string())?;
    mac.update(ts.as_bytes());
    mac.update(b".");
    mac.update(body);
    let want = hex::decode(sig).map_err(|_| "signature is not hex")?;
    mac.verify_slice(&want)
        .map_err(|_| "signature does not match".to_string())
}

fn shape_ok(shape: Shape, v: &Value) -> Result<(), String> {
    match shape {
        Shape::Slack => {
            let text = v["text"].as_str().unwrap_or("");
            let blocks = v["blocks"].as_array().ok_or("no blocks")?;
            if text.is_empty() || blocks.first().map(|b| &b["type"]) != Some(&Value::from("header"))
            {
                return Err(format!("not a Block Kit message: {v}"));
            }
            if blocks.iter().any(|b| b["type"].as_str().is_none()) {
                return Err("a block without a type".into());
            }
            Ok(())
        }
        Shape::Teams => {
            let card = &v["attachments"][0];
            if v["type"] != "message"
                || card["contentType"] != "application/vnd.microsoft.card.adaptive"
                || card["content"]["type"] != "AdaptiveCard"
                || !card["content"]["body"].is_array()
            {
                return Err(format!("not an Adaptive Card message: {v}"));
            }
            Ok(())
        }
        Shape::Webhook => {
            if v["deliveryId"].as_str().is_none()
                || v["title"].as_str().is_none()
                || v["data"].is_null()
            {
                return Err(format!("not a kerf webhook body: {v}"));
            }
            Ok(())
        }
    }
}

async fn receive(
    State(inner): State<Arc<Inner>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> (StatusCode, String) {
    inner.attempts.fetch_add(1, Ordering::SeqCst);
    if inner.hang.load(Ordering::SeqCst) {
        std::future::pending::<()>().await;
    }
    let delay = inner.delay_ms.load(Ordering::SeqCst);
    if delay > 0 {
        tokio::time::sleep(Duration::from_millis(delay as u64)).await;
    }
    if inner
        .fail
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok()
    {
        return (
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("no route for {}", uri.path()),
        );
    }
    let fault = |why: String| {
        inner.faults.lock().expect("lock").push(why.clone());
        (StatusCode::BAD_REQUEST, why)
    };
    let value: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => return fault(format!("body is not JSON: {e}")),
    };
    if let Err(why) = shape_ok(inner.shape, &value) {
        return fault(why);
    }
    if let Some(secret) = &inner.secret {
        let now = (inner.now.lock().expect("lock"))();
        if let Err(why) = signature_ok(secret, &headers, &body, now) {
            return fault(why);
        }
    }
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string()
    };
    inner.accepted.lock().expect("lock").push(Received {
        delivery: header("x-kerf-delivery"),
        kind: header("x-kerf-kind"),
        body: value,
    });
    (StatusCode::OK, "ok".into())
}
