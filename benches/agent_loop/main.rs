//! The agent's loop at scale: passes over 5,000 and 20,000 workloads of the sim's
//! in-process cluster, and over 500 workloads against the real API server with the sim
//! kubelet, each against a hub in its own process. Prints each pass's time, the feed
//! bytes it read and the memory. Targets (issue 35): a steady pass ≤ 50 ms at 5,000 and
//! ≤ 200 ms at 20,000, ≤ 100 ms after 1 % of the recommendations changed at 5,000,
//! ≤ 1 KiB of feeds per steady pass, the agent's memory ≤ 128 MiB at 20,000.
//!
//! `cargo bench --bench agent_loop` (both), `-- sim` or `-- real` for one. The real
//! part builds the control plane once (`scripts/ensure-kube.sh`); run it under
//! `flock /work/.heavy.lock`.

mod hub;
mod real;
mod sim;
#[path = "../support/mod.rs"]
mod support;

/// Every allocation of the benchmark is counted, so the agent's own live heap can be
/// told from the in-process sim's (both share this process).
#[global_allocator]
static HEAP: &stats_alloc::StatsAlloc<std::alloc::System> = &stats_alloc::INSTRUMENTED_SYSTEM;

/// Bytes allocated and not yet freed, in MiB.
pub fn live_heap_mib() -> f64 {
    let s = HEAP.stats();
    let live =
        s.bytes_allocated as i128 - s.bytes_deallocated as i128 + s.bytes_reallocated as i128;
    live as f64 / (1024.0 * 1024.0)
}

fn main() {
    let which: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let all = which.is_empty();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    kerf::tls::install_crypto_provider();
    if all || which.iter().any(|w| w == "sim") {
        runtime.block_on(sim::run());
    }
    if all || which.iter().any(|w| w == "real") {
        runtime.block_on(real::run());
    }
}
