//! A panic inside a background job ends the process with a non-zero exit and a log line
//! naming the job, after a graceful stop (the database is checkpointed): a half-alive
//! hub is worse than a restart. The test re-runs this test binary as a child that serves
//! a real hub through `kerf::server::run_with` with one extra job that panics once the
//! hub is up, and leaves through the binary's own exit path (`kerf::commands`).

use std::process::{Command, Stdio};
use std::time::Duration;

const CHILD_ENV: &str = "KERF_TEST_JOB_PANIC_CHILD";
const TEST_NAME: &str =
    "jobs_supervision::a_panicking_job_ends_the_process_non_zero_naming_the_job";

/// The child: a real hub on port 0 whose extra job `explode` panics after it started.
fn child(data_dir: &str) -> ! {
    let mut config = kerf::config::Config {
        listen: "127.0.0.1:0".parse().expect("address"),
        data_dir: data_dir.into(),
        ..Default::default()
    };
    config.log.format = kerf::config::LogFormat::Text;
    kerf::telemetry::init(&config.log);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel::<()>();
    let served = runtime.block_on(kerf::server::run_with(
        config,
        None,
        move |_, jobs| {
            jobs.spawn("explode", |_stop| async move {
                // Panic only once the hub listens, so the failure comes from supervision.
                let _ = ready_rx.await;
                panic!("injected failure for the supervision test");
            })
        },
        move |_| async move {
            let _ = ready_tx.send(());
        },
    ));
    match served {
        Ok(()) => std::process::exit(0),
        Err(e) => kerf::commands::exit_with(kerf::commands::serve_exit(e)),
    }
}

#[test]
fn a_panicking_job_ends_the_process_non_zero_naming_the_job() {
    if let Ok(dir) = std::env::var(CHILD_ENV) {
        child(&dir);
    }
    let data = tempfile::tempdir().expect("tempdir");
    let mut proc = Command::new(std::env::current_exe().expect("test binary"))
        .args([TEST_NAME, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, data.path())
        .env("KERF_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the child");
    let exited =
        crate::support::wait::within_sync("the hub to exit", Duration::from_secs(60), || {
            proc.try_wait().expect("wait").ok_or("running")
        });
    let status = exited.unwrap_or_else(|_| {
        let _ = proc.kill();
        panic!("the hub kept running after its job panicked");
    });
    let out = proc.wait_with_output().expect("output");
    let logs =
        String::from_utf8_lossy(&out.stderr).to_string() + &String::from_utf8_lossy(&out.stdout);
    assert_eq!(status.code(), Some(1), "exit status {status}:\n{logs}");
    assert!(
        logs.contains("job=explode")
            && logs.contains("panicked: injected failure for the supervision test"),
        "no log line names the job and its panic:\n{logs}"
    );
    assert!(
        logs.contains("kerf: background job \"explode\" panicked"),
        "the exit line names the job:\n{logs}"
    );
    assert!(
        logs.contains("databases checkpointed"),
        "the hub stopped gracefully:\n{logs}"
    );
}
