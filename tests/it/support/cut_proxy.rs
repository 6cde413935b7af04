//! A loopback TCP proxy in front of a real server that breaks one answer mid-stream:
//! the answer to the N-th `POST /api/v1/read` is cut (both sockets closed) after a
//! given number of bytes. Every other byte passes through untouched.

#![allow(dead_code)]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the proxy cuts and whether it has.
pub struct CutProxy {
    pub url: String,
    pub cut: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

impl CutProxy {
    /// Proxies to `upstream` (`http://host:port`), cutting the answer to remote read
    /// number `nth` (1-based) after `after_bytes` bytes.
    pub async fn start(upstream: &str, nth: usize, after_bytes: usize) -> CutProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let target = upstream.trim_start_matches("http://").to_string();
        let cut = Arc::new(AtomicBool::new(false));
        let reads = Arc::new(AtomicUsize::new(0));
        let flag = cut.clone();
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = TcpStream::connect(&target).await else {
                    continue;
                };
                tokio::spawn(relay(
                    client,
                    server,
                    reads.clone(),
                    flag.clone(),
                    nth,
                    after_bytes,
                ));
            }
        });
        CutProxy { url, cut, task }
    }
}

impl Drop for CutProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn relay(
    client: TcpStream,
    server: TcpStream,
    reads: Arc<AtomicUsize>,
    cut: Arc<AtomicBool>,
    nth: usize,
    after_bytes: usize,
) {
    let (mut client_rx, mut client_tx) = client.into_split();
    let (mut server_rx, mut server_tx) = server.into_split();
    // Set by the request side when this connection carries the remote read to cut.
    let armed = Arc::new(AtomicBool::new(false));
    let arm = armed.clone();
    let upstream = async move {
        let mut buf = vec![0u8; 16 * 1024];
        while let Ok(n) = client_rx.read(&mut buf).await {
            if n == 0 {
                break;
            }
            let text = String::from_utf8_lossy(&buf[..n]);
            for _ in text.matches("POST /api/v1/read") {
                if reads.fetch_add(1, Ordering::SeqCst) + 1 == nth {
                    arm.store(true, Ordering::SeqCst);
                }
            }
            if server_tx.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
    };
    let downstream = async move {
        let mut buf = vec![0u8; 16 * 1024];
        let mut sent = 0usize;
        while let Ok(n) = server_rx.read(&mut buf).await {
            if n == 0 {
                break;
            }
            if armed.load(Ordering::SeqCst) && !cut.load(Ordering::SeqCst) {
                if sent + n >= after_bytes {
                    let keep = after_bytes - sent;
                    let _ = client_tx.write_all(&buf[..keep]).await;
                    cut.store(true, Ordering::SeqCst);
                    return; // both halves close: the answer ends mid-stream
                }
                sent += n;
            }
            if client_tx.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
    };
    tokio::select! {
        _ = upstream => {}
        _ = downstream => {}
    }
}
