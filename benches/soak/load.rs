//! The soak's load: each kind of client is a task on the bench's runtime.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::task::JoinHandle;

use super::stats::{Clock, Stats};
use super::support::receiver::{Receiver, Shape};
use super::Hub;

pub const AGENTS: usize = 4;
pub const SESSIONS: usize = 20;
pub const IDLE: usize = 500;
pub const MALFORMED_PER_SECOND: u64 = 10;
/// Notification channels, a third of them aimed at a receiver that never answers; the
/// fleet is paused and resumed every `PAUSE_EVERY`, which notifies every channel.
pub const CHANNELS: usize = 200;
pub const HANGING: usize = CHANNELS / 3;
const PAUSE_EVERY: Duration = Duration::from_secs(30);
const EVENTS_PER_BATCH: usize = 50;
const DUPLICATES_PER_BATCH: usize = 5;

/// The running load.
pub struct Load {
    tasks: Vec<JoinHandle<()>>,
    /// Event ids the hub acknowledged (200), distinct.
    acked: Arc<Mutex<HashSet<String>>>,
}

/// Everything a client task gets.
#[derive(Clone)]
struct Ctx {
    http: reqwest::Client,
    base: String,
    addr: std::net::SocketAddr,
    clock: Clock,
    stats: Arc<Stats>,
    stop: Arc<AtomicBool>,
}

impl Ctx {
    fn running(&self) -> bool {
        !self.stop.load(Ordering::Relaxed)
    }

    /// A GET timed as `name`.
    async fn timed_get(&self, name: &'static str, path: &str, cookie: Option<&str>) {
        let mut req = self.http.get(format!("{}{path}", self.base));
        if let Some(c) = cookie {
            req = req.header("cookie", c);
        }
        let t = Instant::now();
        match req.send().await {
            Ok(r) if r.status().is_success() => {
                let _ = r.bytes().await;
                self.stats
                    .latency(name, self.clock.now(), t.elapsed().as_secs_f64() * 1000.0);
            }
            Ok(r) => self
                .stats
                .count(format!("{name} answered {}", r.status().as_u16())),
            Err(_) => self.stats.count(format!("{name} failed")),
        }
    }
}

async fn post(ctx: &Ctx, path: &str, token: &str, body: Value) -> Value {
    let r = ctx
        .http
        .post(format!("{}{path}", ctx.base))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .expect("setup request");
    assert!(r.status().is_success(), "{path}: {}", r.status());
    r.json().await.expect("json")
}

/// Creates the clusters and users the load needs, then starts every task.
pub async fn start(hub: &Hub, clock: Clock, stats: Arc<Stats>, stop: Arc<AtomicBool>) -> Load {
    let ctx = Ctx {
        http: reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .expect("client"),
        base: hub.base.clone(),
        addr: hub.addr,
        clock,
        stats,
        stop,
    };
    let acked = Arc::new(Mutex::new(HashSet::new()));
    let mut tasks = Vec::new();
    for a in 0..AGENTS {
        let made = post(
            &ctx,
            "/v1/clusters",
            &hub.admin,
            json!({"name": format!("soak-{a}")}),
        )
        .await;
        let token = made["token"].as_str().expect("agent token").to_string();
        tasks.push(tokio::spawn(agent(ctx.clone(), a, token, acked.clone())));
    }
    for s in 0..SESSIONS {
        let made = post(
            &ctx,
            "/v1/admin/users",
            &hub.admin,
            json!({"username": format!("reader{s}"), "role": "viewer"}),
        )
        .await;
        let password = made["oneTimePassword"]
            .as_str()
            .expect("password")
            .to_string();
        let login = ctx
            .http
            .post(format!("{}/v1/auth/login", ctx.base))
            .json(&json!({"username": format!("reader{s}"), "password": password}))
            .send()
            .await
            .expect("login");
        let cookie = login.headers()["set-cookie"]
            .to_str()
            .expect("cookie")
            .split(';')
            .next()
            .expect("pair")
            .to_string();
        tasks.push(tokio::spawn(session(ctx.clone(), cookie)));
    }
    for _ in 0..IDLE {
        tasks.push(tokio::spawn(idle_socket(ctx.clone())));
    }
    let receivers = channels(&ctx, &hub.admin).await;
    tasks.push(tokio::spawn(pauser(
        ctx.clone(),
        hub.admin.clone(),
        receivers,
    )));
    tasks.push(tokio::spawn(scraper(ctx.clone())));
    tasks.push(tokio::spawn(malformed(ctx.clone(), hub.admin.clone())));
    tasks.push(tokio::spawn(prober(ctx.clone())));
    Load { tasks, acked }
}

/// Waits for the tasks to see the stop flag; returns the distinct acknowledged ids.
pub async fn finish(load: Load) -> u64 {
    for t in load.tasks {
        let _ = tokio::time::timeout(Duration::from_secs(40), t).await;
    }
    load.acked.lock().expect("acked").len() as u64
}

/// Events stored for the soak's clusters, read from the database after the hub stopped.
pub fn stored_events(data_dir: &std::path::Path) -> u64 {
    let conn = rusqlite::Connection::open_with_flags(
        data_dir.join("kerf.db"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .expect("open the database");
    conn.query_row(
        "SELECT COUNT(*) FROM audit_events WHERE cluster LIKE 'soak-%'",
        [],
        |r| r.get::<_, i64>(0),
    )
    .expect("count") as u64
}

fn event(id: &str, a: usize, i: u64) -> Value {
    json!({"id": id, "type": "skipped", "time": "2026-11-04T10:15:00Z",
           "workload": {"namespace": format!("ns-{a}"), "kind": "Deployment", "name": format!("app-{}", i % 200)},
           "reason": "NoSignificantChange", "resources": ["cpu"],
           "message": "recommended value within 5% tolerance"})
}

/// An agent: a batch a second, some ids of the previous batch again (retries).
async fn agent(ctx: Ctx, a: usize, token: String, acked: Arc<Mutex<HashSet<String>>>) {
    let url = format!("{}/v1/clusters/soak-{a}/events", ctx.base);
    let mut previous: Vec<Value> = Vec::new();
    let mut n = 0u64;
    while ctx.running() {
        let mut batch: Vec<Value> = (0..EVENTS_PER_BATCH)
            .map(|_| {
                n += 1;
                event(&uuid::Uuid::new_v4().to_string(), a, n)
            })
            .collect();
        batch.extend(previous.iter().take(DUPLICATES_PER_BATCH).cloned());
        let t = Instant::now();
        let sent = ctx
            .http
            .post(&url)
            .bearer_auth(&token)
            .json(&batch)
            .send()
            .await;
        match sent {
            Ok(r) if r.status() == 200 => {
                ctx.stats.latency(
                    "events",
                    ctx.clock.now(),
                    t.elapsed().as_secs_f64() * 1000.0,
                );
                let mut ids = acked.lock().expect("acked");
                ids.extend(
                    batch
                        .iter()
                        .filter_map(|e| e["id"].as_str().map(str::to_string)),
                );
            }
            Ok(r) => ctx
                .stats
                .count(format!("events answered {}", r.status().as_u16())),
            Err(_) => ctx.stats.count("events failed"),
        }
        previous = batch;
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// A UI session: what the overview and workload pages read, once a second.
async fn session(ctx: Ctx, cookie: String) {
    while ctx.running() {
        ctx.timed_get("me", "/v1/me", Some(&cookie)).await;
        ctx.timed_get("workloads", "/v1/workloads?limit=50", Some(&cookie))
            .await;
        ctx.timed_get("clusters", "/v1/clusters", Some(&cookie))
            .await;
        ctx.timed_get("audit", "/v1/audit?limit=50", Some(&cookie))
            .await;
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// A socket that connects, sends nothing, and reconnects when the server closes it.
async fn idle_socket(ctx: Ctx) {
    while ctx.running() {
        let Ok(mut s) = tokio::net::TcpStream::connect(ctx.addr).await else {
            ctx.stats.count("idle connect failed");
            tokio::time::sleep(Duration::from_millis(500)).await;
            continue;
        };
        let mut buf = [0u8; 64];
        loop {
            match tokio::time::timeout(Duration::from_secs(1), s.read(&mut buf)).await {
                Ok(Ok(0)) | Ok(Err(_)) => {
                    ctx.stats.count("idle sockets closed by the server");
                    break;
                }
                _ if !ctx.running() => return,
                _ => {}
            }
        }
    }
}

/// Prometheus, every 5 s.
async fn scraper(ctx: Ctx) {
    while ctx.running() {
        ctx.timed_get("metrics", "/metrics", None).await;
        tokio::time::sleep(Duration::from_secs(5)).await;
    }
}

/// [`CHANNELS`] webhook channels: [`HANGING`] to a receiver that never answers, the rest
/// to one that accepts. Both receivers live as long as the load.
async fn channels(ctx: &Ctx, admin: &str) -> [Receiver; 2] {
    const KEY: &str = "soak-signing-key-0123";
    let fine = Receiver::start(Shape::Webhook, "fine", Some(KEY)).await;
    let hanging = Receiver::start(Shape::Webhook, "hang", Some(KEY)).await;
    hanging.hang(true);
    for i in 0..CHANNELS {
        let url = if i < HANGING { &hanging.url } else { &fine.url };
        let body = json!({"name": format!("soak-{i}"), "type": "webhook", "url": url, "signingSecret": KEY});
        post(ctx, "/v1/notifications/channels", admin, body).await;
    }
    [fine, hanging]
}

/// Pauses and resumes the fleet every [`PAUSE_EVERY`]: each pause and resume is a
/// message to every channel.
async fn pauser(ctx: Ctx, admin: String, _receivers: [Receiver; 2]) {
    let mut paused = false;
    while ctx.running() {
        tokio::time::sleep(PAUSE_EVERY).await;
        let path = if paused {
            "/v1/fleet/resume"
        } else {
            "/v1/fleet/pause"
        };
        let sent = ctx
            .http
            .post(format!("{}{path}", ctx.base))
            .bearer_auth(&admin)
            .json(&json!({"reason": "soak"}))
            .send()
            .await;
        let ok = sent.is_ok_and(|r| r.status().is_success());
        ctx.stats.count(format!("fleet pause toggled: {ok}"));
        paused = !paused;
    }
}

/// `/healthz` ten times a second on a kept-alive connection.
async fn prober(ctx: Ctx) {
    while ctx.running() {
        ctx.timed_get("healthz", "/healthz", None).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Hostile and broken requests, 10 a second, cycling through kinds.
async fn malformed(ctx: Ctx, admin: String) {
    let mut i = 0u64;
    let every = Duration::from_millis(1000 / MALFORMED_PER_SECOND);
    while ctx.running() {
        let base = &ctx.base;
        let http = &ctx.http;
        let answered = match i % 8 {
            0 => {
                http.post(format!("{base}/v1/clusters/soak-0/events"))
                    .body("[{\"id\": ")
                    .send()
                    .await
            }
            1 => {
                http.post(format!("{base}/v1/clusters/soak-0/events"))
                    .bearer_auth("kerf_ct_nope")
                    .json(&json!([]))
                    .send()
                    .await
            }
            2 => {
                let m = reqwest::Method::from_bytes(format!("X{i}{}", "Q".repeat(4096)).as_bytes())
                    .expect("method");
                http.request(m, format!("{base}/x")).send().await
            }
            3 => {
                http.get(format!("{base}/v1/workloads/%FF"))
                    .bearer_auth(&admin)
                    .send()
                    .await
            }
            4 => {
                http.post(format!("{base}/v1/auth/login"))
                    .header("content-type", "text/plain")
                    .body("{}")
                    .send()
                    .await
            }
            5 => {
                http.post(format!("{base}/v1/datasources"))
                    .bearer_auth(&admin)
                    .body(vec![b'{'; 2 << 20])
                    .send()
                    .await
            }
            _ => {
                raw(&ctx, i % 8 == 6).await;
                tokio::time::sleep(every).await;
                i += 1;
                continue;
            }
        };
        let kind = [
            "bad JSON",
            "unknown token",
            "8 KB method",
            "non-UTF-8 path",
            "text/plain login",
            "2 MiB body",
        ];
        let outcome = match answered {
            Ok(r) => r.status().as_u16().to_string(),
            Err(_) => "no answer".into(),
        };
        ctx.stats
            .count(format!("malformed {}: {outcome}", kind[(i % 8) as usize]));
        tokio::time::sleep(every).await;
        i += 1;
    }
}

/// A half-sent request head, or a declared 100 MB body that never comes; then gone.
async fn raw(ctx: &Ctx, half_head: bool) {
    if let Ok(mut s) = tokio::net::TcpStream::connect(ctx.addr).await {
        let head: &[u8] = if half_head {
            b"GET /v1/workloads HTTP/1.1\r\nHost: kerf\r\nX-Slow: "
        } else {
            b"POST /v1/clusters/soak-0/events HTTP/1.1\r\nHost: kerf\r\nContent-Length: 100000000\r\n\r\n["
        };
        let _ = s.write_all(head).await;
    }
}
