//! The kerf binary: parse the command line, run it, map failures to exit codes.

use clap::Parser;

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
/// speed (docs/contracts/datasource.md, "Measured"). musl, the static build's libc,
/// has no arenas to cap.
#[cfg(target_env = "gnu")]
fn cap_malloc_arenas() {
    // SAFETY: mallopt only sets an allocator parameter; called before any thread starts.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

#[cfg(not(target_env = "gnu"))]
fn cap_malloc_arenas() {}
