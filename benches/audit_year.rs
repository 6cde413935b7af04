//! A year of a 1,000-workload fleet's audit events, measured: stores a year of events
//! through the same validation and insert the ingest API uses (received times spread
//! over 365 days), then prints the database's bytes (after a WAL checkpoint) in total
//! and per event, and what retention does with it: pruning a month past the one-year
//! retention, batch by batch, with the longest writer hold and the latency of agent
//! writes made meanwhile.
//!
//! The event mix models an active fleet generously: per workload and day
//! `KERF_BENCH_EVENTS_PER_DAY` events (default 4): 35 % skipped, 30 % blocked, 20 %
//! applied (with containers), 5 % rolled back, 5 % fallback, 5 % failed, with the
//! messages and details agents send. Bytes scale linearly with the rate.
//!
//! Run: cargo bench --bench audit_year

use std::time::{Duration, Instant};

use kerf::runs::retention::AUDIT_BATCH;
use kerf::store::{AuditRows, Store, StoreOptions};
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

const WORKLOADS: usize = 1000;
const CLUSTERS: usize = 4;
const DAYS: i64 = 365;
const DAY: i64 = 86_400_000;
const T0: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

fn uuid(rng: &mut rand::rngs::StdRng) -> String {
    uuid::Builder::from_random_bytes(rng.random())
        .into_uuid()
        .to_string()
}

/// One event of workload `w` at `time_ms`, drawn from the mix.
fn event(rng: &mut rand::rngs::StdRng, w: usize, time_ms: i64) -> Value {
    let workload = json!({"namespace": format!("team-{:02}", w % 40), "kind": "Deployment",
                          "name": format!("service-{w:04}")});
    let time = kerf::timestamp::format_ms(time_ms);
    let containers = json!([{"name": "app",
        "from": {"requests": {"cpu": "500m", "memory": "512Mi"}, "limits": {"memory": "1Gi"}},
        "to": {"requests": {"cpu": "250m", "memory": "384Mi"}, "limits": {"memory": "768Mi"}}}]);
    let id = uuid(rng);
    let rec = uuid(rng);
    let roll: u32 = rng.random_range(0..100);
    match roll {
        0..35 => json!({"id": id, "type": "skipped", "time": time, "workload": workload,
            "reason": "NoSignificantChange", "recommendationID": rec, "resources": ["cpu"],
            "message": "recommended value within 5% tolerance of the current request"}),
        35..65 => json!({"id": id, "type": "blocked", "time": time, "workload": workload,
            "reason": "LowConfidence", "recommendationID": rec,
            "message": "confidence 62 below guardrails.minConfidence 70",
            "details": {"confidence": "62", "minConfidence": "70"}}),
        65..85 => json!({"id": id, "type": "applied", "time": time, "workload": workload,
            "reason": "RecommendationApplied", "recommendationID": rec, "strategy": "in-place",
            "resources": ["cpu", "memory"], "containers": containers,
            "message": "resized in place; pods kept running"}),
        85..90 => json!({"id": id, "type": "rolled_back", "time": time, "workload": workload,
            "reason": "OOMKills", "recommendationID": rec, "strategy": "in-place",
            "resources": ["memory"], "containers": containers,
            "message": "2 OOM kills within 30m after change (threshold 1)",
            "details": {"oomKills": "2", "watchDuration": "30m"}}),
        90..95 => json!({"id": id, "type": "fallback", "time": time, "workload": workload,
            "reason": "ResizeInfeasible", "recommendationID": rec, "strategy": "rollout",
            "message": "node cannot fit the resize in place; rolling out instead",
            "details": {"resizeStatus": "Infeasible"}}),
        _ => json!({"id": id, "type": "failed", "time": time, "workload": workload,
            "reason": "ApplyError", "recommendationID": rec,
            "message": "Operation cannot be fulfilled on deployments.apps \"service\": the object has been modified; please apply your changes to the latest version and try again",
            "details": {"error": "Conflict"}}),
    }
}

fn db_bytes(dir: &std::path::Path) -> u64 {
    ["kerf.db", "kerf.db-wal"]
        .iter()
        .filter_map(|f| std::fs::metadata(dir.join(f)).ok())
        .map(|m| m.len())
        .sum()
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((sorted.len() as f64 * p) as usize).min(sorted.len() - 1)]
}

fn main() {
    let per_day: usize = std::env::var("KERF_BENCH_EVENTS_PER_DAY")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4);
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = StoreOptions {
        readers: 2,
        busy_timeout_ms: 5000,
    };
    let store = Store::open_and_migrate(&dir.path().join("kerf.db"), &opts, T0).expect("store");
    let empty = db_bytes(dir.path());
    let mut rng = rand::rngs::StdRng::seed_from_u64(18);
    let started = Instant::now();
    let mut stored = 0u64;
    for day in 0..DAYS {
        // A day's events arrive in batches of 100, per cluster, spread over the day.
        let mut batch = Vec::with_capacity(100);
        for i in 0..WORKLOADS * per_day {
            let at = T0 + day * DAY + (i as i64 * DAY) / (WORKLOADS * per_day) as i64;
            batch.push(event(&mut rng, i % WORKLOADS, at));
            if batch.len() == 100 || i + 1 == WORKLOADS * per_day {
                let body = serde_json::to_vec(&batch).expect("json");
                let valid = kerf::events::validate_batch(&body).expect("valid events");
                let cluster = format!("cluster-{}", i % CLUSTERS);
                let out = runtime
                    .block_on(store.writing(move |tx| tx.insert_events(&cluster, &valid, at)))
                    .expect("insert");
                stored += out.inserted.len() as u64;
                batch.clear();
            }
        }
    }
    store.checkpoint().expect("checkpoint");
    let bytes = db_bytes(dir.path()) - empty;
    println!(
        "a year of events: {WORKLOADS} workloads x {per_day}/day x {DAYS} days = {stored} events stored in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    println!(
        "database bytes for them: {bytes} ({:.1} MiB), {:.0} bytes per event (row, payload and indexes)",
        bytes as f64 / 1048576.0,
        bytes as f64 / stored as f64
    );
    prune_a_month(&runtime, &store);
}

/// Day 396: retention (365 days) prunes the oldest month, batch by batch, while an
/// agent writes a small batch every 10 ms.
fn prune_a_month(runtime: &tokio::runtime::Runtime, store: &Store) {
    let cutoff = T0 + 31 * DAY;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let agent = {
        let (store, stop) = (store.clone(), stop.clone());
        runtime.spawn(async move {
            let mut rng = rand::rngs::StdRng::seed_from_u64(7);
            let mut latencies = Vec::new();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let body = serde_json::to_vec(&[event(&mut rng, 1, T0 + 400 * DAY)]).expect("json");
                let valid = kerf::events::validate_batch(&body).expect("valid");
                let t = Instant::now();
                store
                    .writing(move |tx| tx.insert_events("cluster-0", &valid, T0 + 400 * DAY))
                    .await
                    .expect("insert");
                latencies.push(t.elapsed().as_secs_f64() * 1000.0);
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            latencies
        })
    };
    let (holds, pruned, total) = runtime.block_on(async {
        let t = Instant::now();
        let (mut holds, mut pruned) = (Vec::new(), 0usize);
        loop {
            let b = Instant::now();
            let n = store
                .writing(move |tx| tx.prune_audit_batch(AuditRows::Events, cutoff, AUDIT_BATCH))
                .await
                .expect("prune");
            holds.push(b.elapsed().as_secs_f64() * 1000.0);
            pruned += n;
            if n < AUDIT_BATCH {
                break;
            }
            tokio::task::yield_now().await;
        }
        (holds, pruned, t.elapsed())
    });
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut latencies = runtime.block_on(agent).expect("agent");
    let mut holds = holds;
    holds.sort_by(f64::total_cmp);
    latencies.sort_by(f64::total_cmp);
    println!(
        "retention: pruned {pruned} events (a month) in {:.1} s, {} batches of {AUDIT_BATCH}; writer held per batch p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        total.as_secs_f64(),
        holds.len(),
        percentile(&holds, 0.5),
        percentile(&holds, 0.99),
        holds.last().copied().unwrap_or(0.0)
    );
    println!(
        "agent writes during pruning: {} writes, p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        latencies.len(),
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.99),
        latencies.last().copied().unwrap_or(0.0)
    );
}
