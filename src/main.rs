//! The kerf binary: parse the command line, run it, map failures to exit codes.

use clap::Parser;

/// The x86_64 builds' allocator, the static one that ships and the glibc one that
/// benchmarks and tests run, so that they measure what ships. musl's own maps every
/// buffer above 128 KiB afresh and unmaps it when freed, and a run decodes one such
/// buffer per series: a 1,000-workload scan page-faulted 2.2 M times and spent 9 s in
/// the kernel, 13.4 s against 5.4–7.2 s for the glibc build (docs/contracts/datasource.md,
/// "Measured"). glibc's, capped at two arenas, made the event ingest's threads queue for
/// its lock: 18,000 context switches in 3 s and both cores three quarters idle. jemalloc
/// keeps freed pages for the next buffer and gives each thread a cache. The aarch64
/// static build keeps musl's allocator: jemalloc's configure is not proven under its
/// cross compiler.
#[cfg(target_arch = "x86_64")]
mod jemalloc {
    #[global_allocator]
    static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

    /// jemalloc's options, read at its first allocation: two arenas, as glibc's are
    /// capped (8 per core otherwise, each keeping what it freed); freed pages handed back
    /// to the kernel within a quarter second rather than ten. A run frees and decodes
    /// series buffers for seconds on end, and with the default decay every freed page
    /// stayed resident to its end: the hub peaked at 66.6–68.0 MiB in a 1,000-workload
    /// run against 62.7–64.4 MiB with 250 ms, in the same wall time (`cargo bench
    /// --bench run_prometheus`; 0 ms faulted every buffer afresh, as musl did, and took
    /// 10.3 s). Event ingest measured the same either way (`cargo bench --bench ingest`).
    #[export_name = "_rjem_malloc_conf"]
    static MALLOC_CONF: ConfString = ConfString(c"narenas:2,dirty_decay_ms:250".as_ptr().cast());

    /// A C string pointer in a static, as jemalloc reads `malloc_conf`.
    #[repr(transparent)]
    struct ConfString(*const u8);

    // SAFETY: the pointer is to a static, immutable byte string.
    unsafe impl Sync for ConfString {}
}

fn main() {
    cap_malloc_arenas();
    let cli = kerf::cli::Cli::parse();
    if let Err(exit) = kerf::cli::run(cli) {
        kerf::commands::exit_with(exit);
    }
}

/// glibc gives every thread that allocates under contention an arena of its own (up to
/// 8 per core) and keeps what each has freed: after a recommendation run, whose
/// workloads are decoded on the runtime's threads and analyzed and stored on the
/// blocking pool's, the hub held 17 MiB more than with two arenas, for no measurable
/// speed (docs/contracts/datasource.md, "Measured"). Only glibc builds for other
/// architectures use it: x86_64 builds use jemalloc, and musl has no arenas to cap.
#[cfg(all(target_env = "gnu", not(target_arch = "x86_64")))]
fn cap_malloc_arenas() {
    // SAFETY: mallopt only sets an allocator parameter; called before any thread starts.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

#[cfg(not(all(target_env = "gnu", not(target_arch = "x86_64"))))]
fn cap_malloc_arenas() {}
