//! The state every handler shares: the store, the hub's one clock, the domain
//! services (runs, fleet, notifications, authentication) and the boot config, cloned
//! into each request.

use std::sync::Arc;

use crate::auth::Authenticator;
use crate::clock::Clock;
use crate::config::Config;
use crate::metrics::Metrics;
use crate::store::Store;

/// Everything handlers share.
#[derive(Clone)]
pub struct AppState {
    pub store: Store,
    pub metrics: Arc<Metrics>,
    pub config: Arc<Config>,
    /// The hub's one clock: every handler, feed, expiry and login limit reads it.
    pub clock: Arc<dyn Clock>,
    /// Password hashing, login limits and sessions.
    pub auth: Arc<Authenticator>,
    /// Recommendation runs: trigger, progress, settings.
    pub runs: crate::runs::Runs,
    /// Pauses and readiness: wakes the fleet ticker.
    pub fleet: crate::fleet::Fleet,
    /// The background jobs' status (`/readyz`).
    pub jobs: crate::jobs::Board,
    /// Notification channels: sealing, sending, waking the dispatcher and digest.
    pub notify: crate::notify::Notifier,
    /// The UI files' compressed forms, made once each.
    pub ui: Arc<crate::ui::Encoded>,
    /// The embedded usage store (remote writes in, runs of clusters without a
    /// Prometheus datasource out); `None` only in tests that build a bare state.
    pub usage: Option<crate::store::UsageStore>,
}

impl AppState {
    /// The state for `config`; time comes from the clock `runs` was made with, so the
    /// API, the runs and the background jobs share one clock.
    pub fn new(
        store: Store,
        metrics: Arc<Metrics>,
        config: Arc<Config>,
        runs: crate::runs::Runs,
    ) -> Result<AppState, crate::auth::password::PasswordError> {
        let clock = runs.clock().clone();
        let auth = Arc::new(Authenticator::new(&config.auth, clock.clone())?);
        let notify = crate::notify::Notifier::new(&config, store.clone(), runs.clone());
        Ok(AppState {
            store,
            metrics,
            config,
            clock,
            auth,
            runs,
            fleet: crate::fleet::Fleet::default(),
            jobs: crate::jobs::Board::default(),
            notify,
            ui: Arc::new(crate::ui::Encoded::new()),
            usage: None,
        })
    }

    /// With the embedded usage store (the server opens it beside the database).
    pub fn with_usage(mut self, usage: crate::store::UsageStore) -> AppState {
        self.usage = Some(usage);
        self
    }

    /// Now, on the hub's clock.
    pub fn now(&self) -> i64 {
        self.clock.now_ms()
    }
}
