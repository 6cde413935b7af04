//! Soak (issue 18): the real binary (`kerf demo`, release build) under ten minutes of
//! mixed load on loopback — 4 agents ingesting event batches (with duplicates), 20 UI
//! sessions reading, 500 idle sockets kept open (reopened as the server closes them),
//! 1 metrics scraper, malformed requests at 10/s, 200 notification channels (a third
//! aimed at a receiver that never answers) all notified by a fleet pause or resume every
//! 30 s — while `/healthz` is probed 10 times a second. Prints RSS, open descriptors, and p99 of `/v1/workloads` and `/healthz` for
//! the first and the last minute (after a 30 s warm-up), the worst per-minute `/healthz`
//! p99, and events lost (acknowledged but not stored), with the targets: RSS growth
//! ≤ 20 MiB, no descriptor growth, `/healthz` p99 ≤ 50 ms throughout, 0 events lost.
//!
//! Run: cargo bench --bench soak   (KERF_SOAK_SECONDS sets the measured time, default 600)

mod load;
mod stats;
#[path = "../support/mod.rs"]
mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use stats::{Clock, Stats};

const WARMUP: Duration = Duration::from_secs(30);
const WINDOW: Duration = Duration::from_secs(60);

/// The running hub and what the load needs to reach it.
pub struct Hub {
    pub base: String,
    pub addr: std::net::SocketAddr,
    pub admin: String,
    pub demo: support::Demo,
    pub data: support::DataDir,
}

fn start_demo() -> Hub {
    let data = support::DataDir::new();
    let demo = support::Demo::builder(Some(data.path()))
        .env("KERF_LOG", "warn")
        // The bench's own setting would read as an unknown kerf config key.
        .env_remove("KERF_SOAK_SECONDS")
        .demo();
    Hub {
        base: demo.kerf.url(""),
        addr: demo.kerf.addr,
        admin: demo.token.clone(),
        demo,
        data,
    }
}

fn rss_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count())
}

fn raise_own_fd_limit() {
    let mut l = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit only touch the struct they are given.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut l) == 0 {
            l.rlim_cur = l.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &l);
        }
    }
}

fn main() {
    let measured = Duration::from_secs(
        std::env::var("KERF_SOAK_SECONDS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(600),
    );
    raise_own_fd_limit();
    kerf::tls::install_crypto_provider();
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let hub = start_demo();
    let pid = hub.demo.kerf.pid();
    let clock = Clock::new();
    let stats = Arc::new(Stats::default());
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let load = runtime.block_on(load::start(
        &hub,
        clock.clone(),
        stats.clone(),
        stop.clone(),
    ));
    println!(
        "soak: {} agents, {} UI sessions, {} idle sockets, 1 scraper, {} malformed/s, {} channels ({} hanging) for {} s (+{} s warm-up)",
        load::AGENTS,
        load::SESSIONS,
        load::IDLE,
        load::MALFORMED_PER_SECOND,
        load::CHANNELS,
        load::HANGING,
        measured.as_secs(),
        WARMUP.as_secs()
    );
    let mut samples = Vec::new();
    let end = Instant::now() + WARMUP + measured;
    while Instant::now() < end {
        std::thread::sleep(Duration::from_secs(5));
        samples.push((clock.now(), rss_mib(pid), fds(pid)));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let acked = runtime.block_on(load::finish(load));
    let Hub { demo, data, .. } = hub;
    demo.kerf.stop();
    let stored = load::stored_events(data.path());
    report(&clock, &stats, &samples, measured, acked, stored);
}

fn report(
    clock: &Clock,
    stats: &Stats,
    samples: &[(Duration, f64, usize)],
    measured: Duration,
    acked: u64,
    stored: u64,
) {
    let (start, stop) = (WARMUP, WARMUP + measured);
    let first = (start, start + WINDOW);
    let last = (stop.saturating_sub(WINDOW), stop);
    let at = |w: (Duration, Duration)| {
        samples
            .iter()
            .filter(|s| s.0 >= w.0 && s.0 <= w.1)
            .fold((f64::NAN, 0usize), |acc, s| {
                (acc.0.max(s.1), acc.1.max(s.2))
            })
    };
    let (rss0, fd0) = at(first);
    let (rss1, fd1) = at(last);
    let p99 = |name: &str, w: (Duration, Duration)| stats.percentile(name, w, 0.99);
    let _ = clock;
    println!(
        "first minute: RSS {rss0:.1} MiB, {fd0} fds, p99 /v1/workloads {:.1} ms, p99 /healthz {:.1} ms",
        p99("workloads", first),
        p99("healthz", first)
    );
    println!(
        "last minute:  RSS {rss1:.1} MiB, {fd1} fds, p99 /v1/workloads {:.1} ms, p99 /healthz {:.1} ms",
        p99("workloads", last),
        p99("healthz", last)
    );
    println!("per minute (end of minute: RSS MiB, fds, /healthz p99 ms, /v1/workloads p99 ms):");
    let mut from = start;
    while from < stop {
        let w = (from, (from + WINDOW).min(stop));
        let (rss, fd) = samples
            .iter()
            .rfind(|s| s.0 >= w.0 && s.0 <= w.1)
            .map_or((f64::NAN, 0), |s| (s.1, s.2));
        println!(
            "  {:>4} s: {rss:6.1} {fd:5} {:6.1} {:6.1}",
            w.1.as_secs(),
            p99("healthz", w),
            p99("workloads", w)
        );
        from += WINDOW;
    }
    let worst = stats.worst_window("healthz", (start, stop), WINDOW, 0.99);
    println!("worst per-minute /healthz p99: {worst:.1} ms");
    for line in stats.counts() {
        println!("  {line}");
    }
    println!(
        "events: {acked} acknowledged (distinct ids), {stored} stored, {} lost",
        acked.saturating_sub(stored)
    );
    let verdicts = [
        ("RSS growth <= 20 MiB", rss1 - rss0 <= 20.0),
        ("no fd growth", fd1 <= fd0),
        ("/healthz p99 <= 50 ms throughout", worst <= 50.0),
        ("0 events lost", stored >= acked),
    ];
    for (what, ok) in verdicts {
        println!("target {what}: {}", if ok { "met" } else { "MISSED" });
    }
}
