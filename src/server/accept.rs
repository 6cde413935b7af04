//! The accept loop: admits each connection through the [`Registry`] (the cap, eviction
//! of the longest-idle), bounds the TLS handshake, the request head and idleness, and
//! drains in-flight requests on shutdown. Accept errors (out of descriptors, memory)
//! back off instead of spinning, and repeated log lines are rate-limited so no client
//! behaviour can flood the log.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::ConnectInfo;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tower::ServiceExt;

use super::connections::{Admission, Conn, Registry, Slot, Watched};
use crate::backoff::Backoff;
use crate::config::HttpConfig;
use crate::jobs::{JobFailure, Jobs, LogThrottle};

/// The wait after an accept error: 5 ms, doubling per error in a row up to 1 s.
const BACKOFF: Backoff = Backoff::doubling(Duration::from_millis(5), Duration::from_secs(1));
/// One log line per kind of trouble per this period; the rest are counted.
const LOG_EVERY: Duration = Duration::from_secs(10);

/// The time bounds of a connection.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    pub header_read: Duration,
    pub idle: Duration,
    pub tls_handshake: Duration,
}

impl Timeouts {
    pub fn from_config(http: &HttpConfig) -> Timeouts {
        Timeouts {
            header_read: Duration::from_secs(http.header_read_timeout_seconds),
            idle: Duration::from_secs(http.idle_timeout_seconds),
            tls_handshake: Duration::from_secs(http.tls_handshake_timeout_seconds),
        }
    }
}

/// True for accept errors about one connection (it went away before we took it), which
/// need no pause; others (out of descriptors or memory) do.
fn about_one_connection(e: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(e.kind(), ConnectionAborted | ConnectionReset | Interrupted)
}

/// Serves until the shutdown signal or a job failure (returned), then drains.
pub async fn serve(
    listener: TcpListener,
    tls: Option<tokio_rustls::TlsAcceptor>,
    app: axum::Router,
    registry: Arc<Registry>,
    timeouts: Timeouts,
    grace: Duration,
    jobs: &mut Jobs,
) -> Option<JobFailure> {
    let graceful = GracefulShutdown::new();
    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(timeouts.header_read);
    builder.http2().timer(TokioTimer::new());
    let stop = crate::shutdown::signal();
    tokio::pin!(stop);
    let mut failed = None;
    let mut backoff = BACKOFF.streak();
    let (mut accept_log, mut refused_log) =
        (LogThrottle::new(LOG_EVERY), LogThrottle::new(LOG_EVERY));
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = &mut stop => break,
            failure = jobs.failure() => {
                failed = Some(failure);
                break;
            }
        };
        let (stream, peer) = match accepted {
            Ok(pair) => {
                backoff.reset();
                pair
            }
            Err(e) if about_one_connection(&e) => continue,
            Err(e) => {
                if let Some(suppressed) = accept_log.due() {
                    tracing::warn!(error = %e, suppressed, open = registry.len(), "accept failed; backing off");
                }
                tokio::select! {
                    _ = tokio::time::sleep(backoff.next_delay()) => {}
                    _ = &mut stop => break,
                }
                continue;
            }
        };
        let slot = match registry.admit() {
            Admission::Admitted(slot) => slot,
            Admission::Evicted(slot) => {
                tracing::debug!(%peer, "connection cap reached; closed the longest-idle connection");
                slot
            }
            Admission::Refused => {
                if let Some(suppressed) = refused_log.due() {
                    tracing::warn!(%peer, suppressed, "connection cap reached with every connection busy; refused");
                }
                continue;
            }
        };
        let conn = Connection {
            app: app.clone(),
            builder: builder.clone(),
            timeouts,
            peer,
        };
        let (tls, watcher) = (tls.clone(), graceful.watcher());
        tokio::spawn(conn.run(stream, tls, slot, watcher));
    }
    drop(listener);
    tracing::info!("draining in-flight requests");
    if tokio::time::timeout(grace, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!(
            grace_seconds = grace.as_secs(),
            "grace period over; closing remaining connections"
        );
    }
    failed
}

/// What one connection's task needs.
struct Connection {
    app: axum::Router,
    builder: Builder<TokioExecutor>,
    timeouts: Timeouts,
    peer: SocketAddr,
}

impl Connection {
    async fn run(
        self,
        stream: TcpStream,
        tls: Option<tokio_rustls::TlsAcceptor>,
        slot: Slot,
        watcher: hyper_util::server::graceful::Watcher,
    ) {
        let _ = stream.set_nodelay(true);
        let conn = slot.conn().clone();
        let io = Watched::new(stream, conn.clone());
        match tls {
            Some(acceptor) => {
                let handshake =
                    tokio::time::timeout(self.timeouts.tls_handshake, acceptor.accept(io));
                match handshake.await {
                    Ok(Ok(s)) => self.serve(s, conn, watcher).await,
                    Ok(Err(e)) => {
                        tracing::debug!(peer = %self.peer, error = %e, "TLS handshake failed")
                    }
                    Err(_) => tracing::debug!(peer = %self.peer, "TLS handshake timed out"),
                }
            }
            None => self.serve(io, conn, watcher).await,
        }
        drop(slot);
    }

    /// Serves HTTP/1 or HTTP/2 on `io` until the client leaves, the connection idles out
    /// or is evicted, or shutdown has drained it.
    async fn serve<I>(self, io: I, conn: Arc<Conn>, watcher: hyper_util::server::graceful::Watcher)
    where
        I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let (app, peer, tracked) = (self.app, self.peer, conn.clone());
        let svc = tower::service_fn(
            move |mut req: axum::extract::Request<hyper::body::Incoming>| {
                req.extensions_mut().insert(ConnectInfo(peer));
                let busy = tracked.busy();
                let app = app.clone();
                async move {
                    let resp = app.oneshot(req).await;
                    drop(busy);
                    resp
                }
            },
        );
        let served = self
            .builder
            .serve_connection_with_upgrades(TokioIo::new(io), TowerToHyperService::new(svc));
        tokio::select! {
            result = watcher.watch(served) => {
                if let Err(e) = result {
                    tracing::debug!(%peer, error = %e, "connection ended with an error");
                }
            }
            _ = conn.closed(self.timeouts.idle) => {
                tracing::debug!(%peer, "closing an idle connection");
            }
        }
    }
}
