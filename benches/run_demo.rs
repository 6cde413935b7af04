//! A full recommendation run of each demo cluster through the real run engine (demo
//! datasource → chunked analysis → SQLite), printing the time of each phase. Run with
//! `cargo bench --bench run_demo`. The 1,000-workload Prometheus benchmark of issue 4
//! builds on this once the Prometheus fixture generator can produce that fleet.

use std::sync::Arc;
use std::time::Instant;

use kerf::clock::SystemClock;
use kerf::datasource::{Datasource, DemoFleet};
use kerf::runs::{Runs, Trigger};
use kerf::store::{self, Store, StoreOptions};

fn main() {
    let dir = std::env::temp_dir().join(format!("kerf-bench-{}", uuid::Uuid::new_v4()));
    let opts = StoreOptions {
        readers: 2,
        busy_timeout_ms: 5000,
    };
    let store = Store::open_and_migrate(&dir.join("kerf.db"), &opts, 0).expect("store");
    for (i, name) in DemoFleet::clusters().iter().enumerate() {
        let digest = format!("bench-{i}");
        store
            .writing_blocking(|tx| {
                tx.insert_cluster(
                    &store::NewCluster {
                        name,
                        token_sha256: &digest,
                    },
                    &Default::default(),
                    0,
                )
            })
            .expect("cluster");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let runs = Runs::new(store, Arc::new(SystemClock)).with_source(Datasource::demo(42));
    println!("cluster     workloads  recs  collect_ms  analyze_ms  store_ms  total_ms  samples");
    for round in 0..3 {
        for cluster in DemoFleet::clusters() {
            let started = Instant::now();
            let run = runtime
                .block_on(runs.run_to_end(cluster, Trigger::Manual))
                .expect("run");
            let total = started.elapsed().as_millis();
            let phase: serde_json::Value = serde_json::to_value(&run.phase_ms).expect("json");
            let stats: serde_json::Value = serde_json::to_value(&run.collect_stats).expect("json");
            println!(
                "{cluster:<11} {:>9}  {:>4}  {:>10}  {:>10}  {:>8}  {total:>8}  {}{}",
                run.workloads_total,
                run.recommendations,
                phase["collect"].as_u64().unwrap_or(0),
                phase["analyze"].as_u64().unwrap_or(0),
                phase["store"].as_u64().unwrap_or(0),
                stats["samples"],
                if round == 0 { "  (cold)" } else { "" },
            );
        }
    }
    drop(runs);
    let _ = std::fs::remove_dir_all(&dir);
}
