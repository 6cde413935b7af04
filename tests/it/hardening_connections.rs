//! Issue 18, defect 2: connections are bounded in time and number. Half-sent requests
//! and silent sockets are closed, a connection cap admits newcomers by closing the
//! longest-idle connection (so `/healthz` keeps answering while hundreds of sockets are
//! held), the cap fits under the open-file limit, and running out of descriptors makes
//! the accept loop back off with a rate-limited log line instead of spinning.

use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::support::{client, eventually, secs, DataDir, Kerf};

/// Room for hundreds of sockets in this test process, whatever its soft limit.
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

/// Opens `n` sockets to `kerf`, each sending `first` (possibly nothing).
async fn open(kerf: &Kerf, n: usize, first: &[u8]) -> Vec<TcpStream> {
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let mut s = TcpStream::connect(kerf.addr).await.expect("connect");
        if !first.is_empty() {
            s.write_all(first).await.expect("send");
        }
        out.push(s);
    }
    out
}

/// Waits until the server closes `s` (EOF or reset); false when `limit` passes first.
async fn closed_within(mut s: TcpStream, limit: Duration) -> bool {
    let mut buf = [0u8; 512];
    let closed = async {
        loop {
            match s.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => continue,
            }
        }
    };
    tokio::time::timeout(limit, closed).await.is_ok()
}

/// `/healthz` on a fresh connection, `n` times; the slowest answer.
async fn healthz_slowest(kerf: &Kerf, n: usize) -> Duration {
    let mut slowest = Duration::ZERO;
    for _ in 0..n {
        let http = client();
        let t = Instant::now();
        let r = tokio::time::timeout(
            Duration::from_secs(5),
            http.get(kerf.url("/healthz")).send(),
        )
        .await
        .expect("/healthz answered within 5 s")
        .expect("/healthz");
        assert_eq!(r.status(), 200);
        slowest = slowest.max(t.elapsed());
    }
    slowest
}

fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread")]
async fn half_sent_requests_and_silent_sockets_are_closed_by_the_server() {
    raise_own_fd_limit();
    let data = DataDir::new();
    let kerf = Kerf::builder(data.path())
        .envs(&[
            ("KERF_HTTP__HEADER_READ_TIMEOUT_SECONDS", "1"),
            ("KERF_HTTP__IDLE_TIMEOUT_SECONDS", "2"),
        ])
        .start();
    let half = open(
        &kerf,
        60,
        b"GET /healthz HTTP/1.1\r\nHost: kerf\r\nX-Slow: ",
    )
    .await;
    let silent = open(&kerf, 60, b"").await;
    let started = Instant::now();
    let waits = half
        .into_iter()
        .chain(silent)
        .map(|s| closed_within(s, Duration::from_secs(15)));
    let closed = futures_util::future::join_all(waits).await;
    let still_open = closed.iter().filter(|c| !**c).count();
    assert_eq!(still_open, 0, "sockets the server never closed");
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "not before the timeout"
    );
    healthz_slowest(&kerf, 3).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn at_the_cap_newcomers_close_idle_connections_so_healthz_keeps_answering() {
    raise_own_fd_limit();
    let data = DataDir::new();
    let kerf = Kerf::builder(data.path())
        .envs(&[("KERF_HTTP__MAX_CONNECTIONS", "16")])
        .start();
    let before = open_fds(kerf.pid());
    // Held open for the whole test: far more than the cap, and none ever times out.
    let _held = open(&kerf, 200, b"GET /healthz HTTP/1.1\r\nHost: kerf\r\n").await;
    let slowest = healthz_slowest(&kerf, 20).await;
    assert!(
        slowest < Duration::from_secs(2),
        "slowest /healthz {slowest:?}"
    );
    let during = open_fds(kerf.pid());
    assert!(
        during <= before + 16 + 4,
        "descriptors held: {during} (before the attack {before}, cap 16)"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn under_a_low_open_file_limit_the_cap_fits_and_nothing_spins() {
    raise_own_fd_limit();
    let data = DataDir::new();
    let kerf = Kerf::builder(data.path())
        .under_shell("ulimit -n 128")
        .start();
    let _held = open(&kerf, 250, b"GET /healthz HTTP/1.1\r\nHost: kerf\r\n").await;
    let slowest = healthz_slowest(&kerf, 20).await;
    assert!(
        slowest < Duration::from_secs(2),
        "slowest /healthz {slowest:?}"
    );
    assert!(open_fds(kerf.pid()) <= 128);
    let logs = kerf.log_text();
    assert!(
        logs.contains("lowered to fit the open-file limit"),
        "{logs}"
    );
    let accept_failures = logs.matches("accept failed").count();
    assert!(
        accept_failures <= 1,
        "{accept_failures} accept failures logged"
    );
}

/// CPU seconds (user + system) the process has used.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after_name = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = after_name.split_whitespace().collect();
    let ticks: f64 = f.get(11).and_then(|v| v.parse().ok()).unwrap_or(0.0)
        + f.get(12).and_then(|v| v.parse().ok()).unwrap_or(0.0);
    ticks / 100.0
}

#[tokio::test(flavor = "multi_thread")]
async fn out_of_descriptors_the_accept_loop_backs_off_and_logs_rarely() {
    raise_own_fd_limit();
    let data = DataDir::new();
    let kerf = Kerf::builder(data.path())
        .envs(&[("KERF_HTTP__IDLE_TIMEOUT_SECONDS", "2")])
        .start();
    healthz_slowest(&kerf, 1).await;
    // The cap was sized for a generous limit; now the descriptors run out under it.
    let tight = (open_fds(kerf.pid()) + 8) as u64;
    let mut room = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: prlimit reads and writes only the structs it is given; the PID is our child's.
    let lowered = unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut room);
        room.rlim_cur = tight;
        libc::prlimit(
            kerf.pid() as i32,
            libc::RLIMIT_NOFILE,
            &room,
            std::ptr::null_mut(),
        )
    };
    assert_eq!(
        lowered,
        0,
        "lower the child's limit: {}",
        std::io::Error::last_os_error()
    );
    let held = open(&kerf, 100, b"").await;
    let cpu_before = cpu_seconds(kerf.pid());
    let t = Instant::now();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let cpu = cpu_seconds(kerf.pid()) - cpu_before;
    assert!(
        cpu < 0.5 * t.elapsed().as_secs_f64(),
        "kerf used {cpu:.2} CPU s in {:?}: the accept loop spins",
        t.elapsed()
    );
    let failures = kerf.log_text().matches("accept failed").count();
    assert!(
        (1..=2).contains(&failures),
        "{failures} accept-failure lines"
    );
    drop(held);
    // Once the held sockets go, it serves again.
    eventually("kerf to serve again", secs(15), async || {
        match client().get(kerf.url("/healthz")).send().await {
            Ok(r) if r.status() == 200 => Ok(()),
            other => Err(other.map(|r| r.status())),
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tls_handshake_that_never_finishes_is_closed_at_its_timeout() {
    let data = DataDir::new();
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).expect("cert");
    let (cert_path, key_path) = (data.path().join("tls.crt"), data.path().join("tls.key"));
    std::fs::write(&cert_path, cert.cert.pem()).expect("cert");
    std::fs::write(&key_path, cert.signing_key.serialize_pem()).expect("key");
    let kerf = Kerf::builder(data.path())
        .envs(&[
            ("KERF_TLS__CERT_FILE", cert_path.to_str().expect("path")),
            ("KERF_TLS__KEY_FILE", key_path.to_str().expect("path")),
            ("KERF_HTTP__TLS_HANDSHAKE_TIMEOUT_SECONDS", "1"),
            // Only the handshake timeout can close these within the test's deadline.
            ("KERF_HTTP__IDLE_TIMEOUT_SECONDS", "3600"),
        ])
        .start();
    // The first bytes of a TLS record (a ClientHello that never comes whole).
    let stalled = open(&kerf, 20, &[0x16, 0x03, 0x01, 0x02, 0x00]).await;
    let waits = stalled
        .into_iter()
        .map(|s| closed_within(s, Duration::from_secs(10)));
    let closed = futures_util::future::join_all(waits).await;
    assert!(closed.iter().all(|c| *c), "stalled handshakes stayed open");
}
