//! One child process measured by the kernel: its wall time, peak RSS, CPU seconds and
//! minor page faults (`wait4`'s rusage), and its stdout. Shared by benches, each
//! printing the figures it needs.

#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

/// What one child run cost.
pub struct Measured {
    pub seconds: f64,
    /// Peak RSS (`ru_maxrss`), MiB.
    pub peak_mib: f64,
    pub user_s: f64,
    pub system_s: f64,
    /// Pages the kernel had to map fresh (zero-filled or from the page cache).
    pub minor_faults: i64,
    pub stdout: Vec<u8>,
}

fn seconds(t: libc::timeval) -> f64 {
    t.tv_sec as f64 + t.tv_usec as f64 / 1e6
}

/// Runs `bin` with `args` and a cleared environment; panics unless it exits 0.
// The child is reaped with `wait4`, which also gives its resource usage.
#[allow(clippy::zombie_processes)]
pub fn measured(bin: &Path, args: &[String]) -> Measured {
    let started = Instant::now();
    let child = Command::new(bin)
        .args(args)
        .env_clear()
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start kerf");
    let pid = child.id() as libc::pid_t;
    let mut stdout = child.stdout.expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stdout, &mut buf);
        buf
    });
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid out-parameter for wait4.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child, whose pid we hold.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(waited, pid, "wait4");
    let stdout = reader.join().expect("stdout reader");
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{} {} failed",
        bin.display(),
        args.join(" ")
    );
    Measured {
        seconds: started.elapsed().as_secs_f64(),
        peak_mib: usage.ru_maxrss as f64 / 1024.0,
        user_s: seconds(usage.ru_utime),
        system_s: seconds(usage.ru_stime),
        minor_faults: usage.ru_minflt,
        stdout,
    }
}
