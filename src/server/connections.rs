//! The connections the server holds. Each is registered with when bytes last moved and
//! how many requests it has in flight, so the server can close what is idle (no request
//! in flight and no bytes moving for `http.idle_timeout_seconds`) and, at the cap
//! (`http.max_connections`), close the longest-idle connection to admit a new one, or
//! refuse the newcomer when every connection is busy. No client can hold more than its
//! share of descriptors for longer than the idle timeout, however it behaves.

use std::collections::HashMap;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;
use tokio::time::Instant;

/// Descriptors kept free for everything but client connections (the database, the
/// outgoing HTTP of runs and notifications, files): a quarter of the limit, at least 64.
fn reserved_fds(limit: u64) -> u64 {
    (limit / 4).max(64)
}

/// The connection cap in force: `configured`, lowered to fit under the process's
/// open-file limit (raised to its hard limit first), so accepting never runs out of
/// descriptors. Logs when it had to lower it.
pub fn effective_cap(configured: usize) -> usize {
    let soft = raise_fd_limit();
    let fits = soft.saturating_sub(reserved_fds(soft)).max(8) as usize;
    if fits < configured {
        tracing::warn!(
            configured,
            open_file_limit = soft,
            cap = fits,
            "http.max_connections lowered to fit the open-file limit (raise it with ulimit -n)"
        );
    }
    configured.min(fits)
}

/// Notification sends in flight at once: `configured`, at most a quarter of the
/// descriptors kept free for everything but client connections (at least 4), so a
/// fan-out to hanging receivers cannot take the descriptors the API and the database
/// need. Logs when it had to lower it.
pub fn sends_cap(configured: usize) -> usize {
    let soft = raise_fd_limit();
    let fits = (reserved_fds(soft) / 4).max(4) as usize;
    if fits < configured {
        tracing::warn!(
            configured,
            open_file_limit = soft,
            cap = fits,
            "notifications.max_concurrent_sends lowered to fit the open-file limit"
        );
    }
    configured.min(fits)
}

#[cfg(unix)]
fn raise_fd_limit() -> u64 {
    let nofile = || {
        let mut l = libc::rlimit {
            rlim_cur: libc::RLIM_INFINITY,
            rlim_max: libc::RLIM_INFINITY,
        };
        // SAFETY: getrlimit only writes the struct it is given.
        unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut l) };
        l
    };
    let limit = nofile();
    let (soft, hard) = (limit.rlim_cur, limit.rlim_max);
    if soft < hard {
        // As Go's runtime does: the soft limit is a default, the hard one the allowance
        // (an unlimited one is taken as 2^20, the kernel's default nr_open).
        let raised = libc::rlimit {
            rlim_cur: if hard == libc::RLIM_INFINITY {
                soft.max(1 << 20)
            } else {
                hard
            },
            rlim_max: hard,
        };
        // SAFETY: setrlimit only reads the struct it is given.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            return nofile().rlim_cur;
        }
    }
    // Unlimited is RLIM_INFINITY, u64::MAX on Linux: no cap below any configured one.
    soft
}

#[cfg(not(unix))]
fn raise_fd_limit() -> u64 {
    u64::MAX
}

/// Every connection held, for admission and eviction.
pub struct Registry {
    cap: usize,
    epoch: Instant,
    slots: Mutex<Slots>,
}

#[derive(Default)]
struct Slots {
    next: u64,
    conns: HashMap<u64, Arc<Conn>>,
    /// Connections told to close that have not closed yet.
    leaving: usize,
}

/// What admission decided for a new connection.
pub enum Admission {
    /// Under the cap.
    Admitted(Slot),
    /// At the cap: the longest-idle connection was told to close to make room.
    Evicted(Slot),
    /// At the cap with every connection busy (or too many still closing).
    Refused,
}

impl Registry {
    pub fn new(cap: usize) -> Arc<Registry> {
        Arc::new(Registry {
            cap,
            epoch: Instant::now(),
            slots: Mutex::new(Slots::default()),
        })
    }

    /// Connections held now (closing ones included).
    pub fn len(&self) -> usize {
        self.lock().conns.len()
    }

    /// True when no connection is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Registers a new connection, making room at the cap by evicting the connection
    /// that has been idle longest (none in flight).
    pub fn admit(self: &Arc<Self>) -> Admission {
        let mut s = self.lock();
        let mut evicted = false;
        if s.conns.len() - s.leaving >= self.cap {
            // Evictions finish within a scheduling round; past this many, stop admitting.
            if s.leaving > self.cap / 4 {
                return Admission::Refused;
            }
            let victim = s
                .conns
                .values()
                .filter(|c| !c.evicted.load(Ordering::Acquire) && c.in_flight() == 0)
                .min_by_key(|c| c.last_ms.load(Ordering::Acquire))
                .cloned();
            let Some(victim) = victim else {
                return Admission::Refused;
            };
            victim.evict();
            s.leaving += 1;
            evicted = true;
        }
        s.next += 1;
        let conn = Arc::new(Conn {
            id: s.next,
            epoch: self.epoch,
            last_ms: AtomicU64::new(self.epoch.elapsed().as_millis() as u64),
            in_flight: AtomicUsize::new(0),
            evicted: AtomicBool::new(false),
            wake: Notify::new(),
        });
        s.conns.insert(conn.id, conn.clone());
        let slot = Slot {
            conn,
            registry: self.clone(),
        };
        if evicted {
            Admission::Evicted(slot)
        } else {
            Admission::Admitted(slot)
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Slots> {
        // The map stays consistent whatever panicked while it was held.
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// One connection's activity.
pub struct Conn {
    id: u64,
    epoch: Instant,
    /// Milliseconds since the registry's epoch when bytes last moved or a request ended.
    last_ms: AtomicU64,
    in_flight: AtomicUsize,
    evicted: AtomicBool,
    wake: Notify,
}

impl Conn {
    fn touch(&self) {
        let now = self.epoch.elapsed().as_millis() as u64;
        self.last_ms.fetch_max(now, Ordering::AcqRel);
    }

    fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Acquire)
    }

    fn evict(&self) {
        self.evicted.store(true, Ordering::Release);
        self.wake.notify_one();
    }

    /// Marks a request in flight until the returned guard drops.
    pub fn busy(self: &Arc<Self>) -> Busy {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        self.touch();
        Busy(self.clone())
    }

    /// Resolves when the connection should close: idle (nothing in flight, no bytes)
    /// for `idle`, or evicted and no longer serving a request.
    pub async fn closed(&self, idle: Duration) {
        loop {
            let quiet = self.in_flight() == 0;
            if quiet && self.evicted.load(Ordering::Acquire) {
                return;
            }
            let since = self.epoch.elapsed().as_millis() as u64;
            let idle_ms = since.saturating_sub(self.last_ms.load(Ordering::Acquire));
            let limit = idle.as_millis() as u64;
            if quiet && idle_ms >= limit {
                return;
            }
            let wait = if quiet { limit - idle_ms } else { limit };
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(wait.max(1))) => {}
                _ = self.wake.notified() => {}
            }
        }
    }
}

/// A request in flight on a connection.
pub struct Busy(Arc<Conn>);

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.touch();
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
        if self.0.evicted.load(Ordering::Acquire) {
            self.0.wake.notify_one();
        }
    }
}

/// A registered connection; it leaves the registry when dropped.
pub struct Slot {
    conn: Arc<Conn>,
    registry: Arc<Registry>,
}

impl Slot {
    pub fn conn(&self) -> &Arc<Conn> {
        &self.conn
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut s = self.registry.lock();
        s.conns.remove(&self.conn.id);
        if self.conn.evicted.load(Ordering::Acquire) {
            s.leaving = s.leaving.saturating_sub(1);
        }
    }
}

/// A socket whose reads and writes count as activity of its connection.
pub struct Watched<S> {
    inner: S,
    conn: Arc<Conn>,
}

impl<S> Watched<S> {
    pub fn new(inner: S, conn: Arc<Conn>) -> Self {
        Watched { inner, conn }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for Watched<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let out = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(out, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.conn.touch();
        }
        out
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Watched<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let out = Pin::new(&mut self.inner).poll_write(cx, buf);
        if matches!(out, Poll::Ready(Ok(n)) if n > 0) {
            self.conn.touch();
        }
        out
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let out = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if matches!(out, Poll::Ready(Ok(n)) if n > 0) {
            self.conn.touch();
        }
        out
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slot(a: Admission) -> Slot {
        match a {
            Admission::Admitted(s) | Admission::Evicted(s) => s,
            Admission::Refused => panic!("refused"),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn at_the_cap_the_longest_idle_connection_makes_room_and_busy_ones_never_do() {
        let reg = Registry::new(2);
        let old = slot(reg.admit());
        tokio::time::advance(Duration::from_secs(5)).await;
        let busy = slot(reg.admit());
        let _request = busy.conn().busy();
        let newcomer = reg.admit();
        assert!(matches!(newcomer, Admission::Evicted(_)));
        // The idle one was told to close; the busy one was not.
        tokio::time::timeout(
            Duration::from_millis(1),
            old.conn().closed(Duration::from_secs(3600)),
        )
        .await
        .expect("the idle connection is closing");
        assert!(!busy.conn().evicted.load(Ordering::Acquire));
        drop(old);
        // Now both held connections are busy or just admitted and busy.
        let n = slot(newcomer);
        let _r2 = n.conn().busy();
        assert!(matches!(reg.admit(), Admission::Refused));
        assert_eq!(reg.len(), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_connection_is_idle_only_with_nothing_in_flight() {
        let reg = Registry::new(8);
        let s = slot(reg.admit());
        let request = s.conn().busy();
        let idle = Duration::from_secs(10);
        let closed = tokio::time::timeout(Duration::from_secs(60), s.conn().closed(idle)).await;
        assert!(closed.is_err(), "a request in flight keeps it open");
        drop(request);
        let started = Instant::now();
        s.conn().closed(idle).await;
        assert!(
            started.elapsed() >= idle,
            "closes a full idle period after the request"
        );
    }
}
