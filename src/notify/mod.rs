//! Notifications: the people who care hear about what kerf did. Channels (Slack, Teams,
//! signed webhook, email) and the rules that route events and the hub's notices to them
//! (`channel`, `rule`, `item`); the messages and their per-receiver shapes (`message`,
//! `render`, `sign`, `transport`); the dispatcher job that reads the audit log from a
//! stored cursor and records deliveries, the per-channel senders with retries, backoff
//! and rate limits (`dispatcher`, `sender`); the weekly digest (`digest`); and the
//! domain operations the API calls (`ops`, `rule_ops`: methods of [`Notifier`] taking a
//! [`Caller`]; `views`). Uses `store`, `auth` (patterns),
//! `events`, `runs` (pricing, workload ids); knows nothing of HTTP handlers.
//! docs/contracts/notifications.md is the contract.

pub mod channel;
pub mod digest;
pub mod dispatcher;
pub mod item;
pub mod message;
pub mod ops;
pub mod render;
pub mod rule;
pub mod rule_ops;
pub mod sender;
pub mod sign;
pub mod test_limit;
pub mod transport;
pub mod views;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use crate::config::Config;
use crate::events::config_change::AuditContext;
use crate::runs::Runs;
use crate::secret::SecretKey;
use crate::store::notify_channels::TeamScope;
use crate::store::Store;

/// One problem with a request field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

/// Why a notification operation was refused or failed.
#[derive(Debug, thiserror::Error)]
pub enum NotifyError {
    /// The request is invalid; each problem names its field.
    #[error("{}", .0.first().map(|e| format!("{}: {}", e.field, e.message)).unwrap_or_default())]
    Invalid(Vec<FieldError>),
    #[error("{0} does not exist")]
    NotFound(String),
    /// The caller's role does not reach what it asked for.
    #[error("{0}")]
    Forbidden(String),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    #[error(transparent)]
    Secret(#[from] crate::secret::SecretError),
    /// Too many channel tests by this caller: try again after this many seconds.
    #[error("too many channel tests; try again in {0} seconds")]
    TooManyTests(i64),
}

impl NotifyError {
    fn field(field: &str, message: impl Into<String>) -> NotifyError {
        NotifyError::Invalid(vec![FieldError {
            field: field.into(),
            message: message.into(),
        }])
    }
}

/// What the notification parts need from the boot config.
#[derive(Debug, Clone)]
pub struct Settings {
    pub data_dir: PathBuf,
    /// Base URL of the UI for links, without a trailing slash.
    pub public_url: String,
    /// The hub's zone: default of new digest schedules.
    pub time_zone: String,
    pub max_attempts: u32,
    pub retry_base_ms: u64,
    pub max_per_minute: u32,
    pub group_window: Duration,
    /// Channels in the fleet, and of one team, at most.
    pub max_channels: usize,
    pub max_channels_per_team: usize,
}

/// Who asks, and when: what every operation of the API takes.
#[derive(Debug, Clone)]
pub struct Caller {
    /// Actor and reason, for the audit of a change.
    pub ctx: AuditContext,
    /// Whose channels the caller sees: `None` = every channel (fleet roles).
    pub read: TeamScope,
    /// Whose channels the caller changes: `None` = every channel (fleet editors).
    pub write: TeamScope,
    /// Now, on the hub's clock.
    pub now: i64,
}

/// The notification side of the hub, shared by the API and the jobs. Cheap to clone.
#[derive(Clone)]
pub struct Notifier {
    pub store: Store,
    /// Pricing (the digest's currency) and the hub's clock.
    pub runs: Runs,
    pub settings: Arc<Settings>,
    pub transport: transport::Transport,
    /// Wakes the dispatcher and the digest: a channel, rule or schedule changed, or a
    /// delivery was recorded outside the dispatcher.
    pub wake: Arc<tokio::sync::Notify>,
    /// Channel tests per caller in the last minute.
    pub tests: Arc<test_limit::TestLimit>,
}

impl Notifier {
    pub fn new(config: &Config, store: Store, runs: Runs) -> Notifier {
        let n = &config.notifications;
        Notifier {
            store,
            runs,
            settings: Arc::new(Settings {
                data_dir: config.data_dir.clone(),
                public_url: config.public_url(),
                time_zone: n.time_zone.clone(),
                max_attempts: n.max_attempts,
                retry_base_ms: n.retry_base_ms,
                max_per_minute: n.max_per_minute,
                group_window: Duration::from_millis(n.group_window_ms),
                max_channels: n.max_channels,
                max_channels_per_team: n.max_channels_per_team,
            }),
            transport: transport::Transport::new(
                Duration::from_secs(n.send_timeout_seconds),
                config.outbound.channels(config.listen),
                n.max_concurrent_sends,
            ),
            wake: Arc::new(tokio::sync::Notify::new()),
            tests: Arc::default(),
        }
    }

    /// The key that seals channel secrets (the data dir's `secret.key`).
    pub fn key(&self) -> Result<SecretKey, NotifyError> {
        Ok(SecretKey::load_or_create(&self.settings.data_dir)?)
    }

    /// Wakes the jobs (they also poll, so a missed wake only delays).
    pub fn poke(&self) {
        self.wake.notify_waiters();
    }
}

/// Real time between two looks at the clock while waiting for a time on it: a manual
/// clock moved forward is noticed this quickly.
const CLOCK_POLL: Duration = Duration::from_millis(250);

/// Resolves when `clock` reads at least `at_ms`, `wake` fires, or `limit` of real time
/// has passed — whichever is first. Waits on the hub's clock, not on timers alone, so
/// the one test clock drives every deadline.
pub async fn wait_until(
    clock: &dyn crate::clock::Clock,
    at_ms: Option<i64>,
    wake: &tokio::sync::Notify,
    limit: Duration,
) {
    let give_up = tokio::time::Instant::now() + limit;
    let woken = wake.notified();
    tokio::pin!(woken);
    loop {
        let now = clock.now_ms();
        if at_ms.is_some_and(|at| now >= at) || tokio::time::Instant::now() >= give_up {
            return;
        }
        let left = at_ms.map_or(CLOCK_POLL, |at| Duration::from_millis((at - now) as u64));
        tokio::select! {
            _ = &mut woken => return,
            _ = tokio::time::sleep(left.min(CLOCK_POLL)) => {}
        }
    }
}
