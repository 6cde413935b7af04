//! Bytes per sample of the usage store (issue 30): a fleet's usage (`dataset`: 2,000
//! series every 30 s for 3 days by default, as the agent's collector sends them, one
//! append per round) written into a new `usage.db`, then the file's bytes and the XOR
//! chunks' bytes per sample. The target is ≤ 1.1 × what Prometheus's TSDB takes
//! for the same samples, so the file must come close to the chunk bytes.
//!
//! `cargo bench --bench usage_disk`; `KERF_BENCH_SERIES` and `KERF_BENCH_DAYS` change
//! the size.

mod dataset;

use dataset::{write_and_measure, Fleet};

fn env(name: &str, default: i64) -> i64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let series = env("KERF_BENCH_SERIES", 2_000) as usize;
    let days = env("KERF_BENCH_DAYS", 3);
    let fleet = Fleet::every_30s(series, days);
    let dir = tempfile::tempdir().expect("tempdir");
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let m = runtime.block_on(write_and_measure(
        &dir.path().join("usage.db"),
        "c1",
        fleet.rounds(),
    ));
    assert_eq!(
        m.accepted + m.duplicates,
        fleet.samples(),
        "every sample taken"
    );
    let d = m.disk;
    let per = |bytes: u64| bytes as f64 / d.samples as f64;
    let mib = |bytes: u64| bytes as f64 / (1024.0 * 1024.0);
    println!("usage store: {series} series every 30 s for {days} days, one append per round");
    println!(
        "  samples {} in {} chunks of {} series ({} sent twice, stored once)",
        d.samples, d.chunks, d.series, m.duplicates
    );
    println!(
        "  ingest {:.1} s ({:.0} samples/s)",
        m.elapsed.as_secs_f64(),
        d.samples as f64 / m.elapsed.as_secs_f64()
    );
    println!(
        "  chunk bytes {:.2} MiB = {:.3} B/sample",
        mib(d.chunk_bytes),
        per(d.chunk_bytes)
    );
    println!(
        "  file bytes  {:.2} MiB = {:.3} B/sample ({:.3} × the chunks; {:.2} MiB free pages)",
        mib(d.file_bytes),
        per(d.file_bytes),
        d.file_bytes as f64 / d.chunk_bytes as f64,
        mib(d.free_bytes)
    );
    println!(
        "  on disk before the checkpoint (file + WAL): {:.2} MiB = {:.3} B/sample",
        mib(m.files_before_checkpoint),
        per(m.files_before_checkpoint)
    );
}
