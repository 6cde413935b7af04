//! Recommendation runs: for each cluster, collect usage from its datasource, analyze it
//! with the engine, and store one recommendation per workload; on a schedule and on
//! demand, never two at once for a cluster, with progress and history.
//!
//! * `engine` — one run of one cluster; `pipeline` — its stages, group by group;
//!   `analyze` — one chunk of analysis (blocking);
//!   `workload` — stable ids and grouping; `summary` — values, filters and cost delta.
//! * `progress` — runs in flight (the no-overlap rule); `scheduler` — the cron job;
//!   `retention` — the job pruning history; `schedule` — parsing and the pure `next_due`.
//! * `recommender` and `pricing` — the settings documents; `source` — a cluster's
//!   datasource; `failure` — why a started run failed.
//! * `state` — what a running run carries (`RunState`) and its transitions. The run's
//!   status, phase and trigger are `crate::run_vocabulary`'s (re-exported here, as
//!   `store::RunRecord` uses them); their states: `docs/contracts/runs.md`.

pub mod analyze;
pub mod backtest;
pub mod backtest_queue;
pub mod backtest_score;
pub mod batch;
pub mod engine;
pub mod failure;
pub mod live_check;
mod pipeline;
pub mod pricing;
pub mod progress;
pub mod realized;
pub mod recommender;
pub mod retention;
pub mod saved_settings;
pub mod schedule;
pub mod scheduler;
pub mod source;
mod state;
pub mod summary;
pub mod supervise;
pub mod workload;

use std::sync::Arc;

pub use crate::run_vocabulary::{
    CollectSummary, Excluded, Phase, PhaseMs, RunErrorEntry, RunErrors, RunStatus, Trigger,
    UnknownValue,
};
pub use failure::RunFailure;
pub use pricing::Pricing;
pub use progress::{ActiveRuns, Progress};
pub use recommender::{RecommenderSettings, SettingsError};

use crate::clock::Clock;
use crate::store::{RunRecord, Store, StoreError};

/// Why a run could not start.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("cluster {cluster:?} already has run {run_id} in progress")]
    AlreadyRunning { cluster: String, run_id: String },
    #[error("no active cluster is named {0:?}")]
    UnknownCluster(String),
    #[error("stored {key} settings cannot be read: {message}; PUT them again")]
    BadSettings { key: &'static str, message: String },
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A backtest found the queue full or waited past its bound.
    #[error(transparent)]
    Busy(#[from] backtest_queue::Busy),
}

/// The run service: shared by the API, the scheduler and `kerf demo`. Cheap to clone.
#[derive(Clone)]
pub struct Runs {
    store: Store,
    clock: Arc<dyn Clock>,
    active: ActiveRuns,
    wake: Arc<tokio::sync::Notify>,
    /// Notified when a run ends (retention prunes then).
    finished: Arc<tokio::sync::Notify>,
    fixed_source: Option<crate::datasource::Datasource>,
    /// Where the datasource secret key lives.
    data_dir: std::path::PathBuf,
    /// Collection figures of finished runs go to `/metrics` when set.
    metrics: Option<Arc<crate::metrics::Metrics>>,
    /// Backtests: one runs, a few wait.
    backtests: backtest_queue::BacktestQueue,
    /// The embedded usage store: a cluster without a datasource reads its usage here.
    usage: Option<crate::store::UsageStore>,
    /// Where datasources may connect (`[outbound]`).
    outbound: Arc<crate::outbound::Policy>,
}

impl Runs {
    pub fn new(store: Store, clock: Arc<dyn Clock>) -> Self {
        Runs {
            store,
            clock,
            active: ActiveRuns::default(),
            wake: Arc::new(tokio::sync::Notify::new()),
            finished: Arc::new(tokio::sync::Notify::new()),
            fixed_source: None,
            data_dir: std::path::PathBuf::new(),
            metrics: None,
            backtests: backtest_queue::BacktestQueue::default(),
            usage: None,
            outbound: Arc::default(),
        }
    }

    /// Clusters without a datasource read their usage from `usage` (`kerf serve` sets
    /// it).
    pub fn with_usage(mut self, usage: crate::store::UsageStore) -> Self {
        self.usage = Some(usage);
        self
    }

    /// Whether a cluster reads its usage from the embedded store: when the hub keeps one,
    /// no fixed source answers for every cluster (the demo's), and the cluster links no
    /// datasource (`linked`). Its agent then collects (`[collector] enabled = "auto"`).
    pub fn reads_embedded(&self, linked: bool) -> bool {
        self.usage.is_some() && self.fixed_source.is_none() && !linked
    }

    /// Whether one source answers for every cluster (the demo's fleet).
    pub fn has_fixed_source(&self) -> bool {
        self.fixed_source.is_some()
    }

    /// The embedded usage store, when the hub keeps one.
    pub fn usage(&self) -> Option<&crate::store::UsageStore> {
        self.usage.as_ref()
    }

    /// Finished runs add their datasource requests, bytes and samples to `metrics`.
    pub fn with_metrics(mut self, metrics: Arc<crate::metrics::Metrics>) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// The data dir holding the datasource secret key (`kerf serve` sets it).
    pub fn with_data_dir(mut self, dir: std::path::PathBuf) -> Self {
        self.data_dir = dir;
        self
    }

    /// Datasources reach only what `policy` allows (`kerf serve` sets `[outbound]`'s).
    pub fn with_outbound(mut self, policy: crate::outbound::Policy) -> Self {
        self.outbound = Arc::new(policy);
        self
    }

    /// Where datasources may connect.
    pub fn outbound(&self) -> &Arc<crate::outbound::Policy> {
        &self.outbound
    }

    /// Every cluster reads `source` (the demo fleet in `kerf demo`), whatever it links.
    pub fn with_source(mut self, source: crate::datasource::Datasource) -> Self {
        self.fixed_source = Some(source);
        self
    }

    /// The datasource and scope of `cluster`, or why there is none.
    pub async fn source_for(
        &self,
        cluster: &str,
    ) -> Result<
        (
            crate::datasource::Datasource,
            crate::datasource::ClusterScope,
        ),
        RunFailure,
    > {
        let fallbacks = source::Fallbacks {
            outbound: &self.outbound,
            fixed: self.fixed_source.as_ref(),
            usage: self.usage.as_ref(),
        };
        source::resolve(&self.store, &self.data_dir, fallbacks, cluster).await
    }

    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// Runs in flight.
    pub fn active(&self) -> &ActiveRuns {
        &self.active
    }

    /// Tells the scheduler the settings changed (it re-reads the schedule).
    pub fn settings_changed(&self) {
        self.wake.notify_one();
    }

    pub(crate) fn wake(&self) -> &tokio::sync::Notify {
        &self.wake
    }

    /// Notified when a run ends.
    pub(crate) fn finished(&self) -> &tokio::sync::Notify {
        &self.finished
    }

    /// The stored recommender settings, or the defaults when none were saved.
    pub async fn recommender(&self) -> Result<RecommenderSettings, RunError> {
        saved_settings::load(&self.store, recommender::RECOMMENDER_KEY).await
    }

    /// The stored pricing, or the defaults when none were saved.
    pub async fn pricing(&self) -> Result<Pricing, RunError> {
        saved_settings::load(&self.store, pricing::PRICING_KEY).await
    }

    /// Everything effective-policy resolution needs for the workloads of `cluster` (all
    /// clusters when `None`), with `settings`' analysis policy as the default.
    pub async fn policy_set(
        &self,
        cluster: Option<&str>,
        settings: &RecommenderSettings,
    ) -> Result<crate::policy::PolicySet, RunError> {
        let default = serde_json::to_value(&settings.policy)
            .map_err(|e| RunError::Store(StoreError::Task(e.to_string())))?;
        let cluster = cluster.map(str::to_string);
        Ok(self
            .store
            .reading(move |r| r.policy_set(cluster.as_deref(), default))
            .await?)
    }

    /// Starts a run of `cluster` in the background and returns its first record and the
    /// task that ends with its final record. Refused while the cluster has a run.
    pub async fn start(
        &self,
        cluster: &str,
        trigger: Trigger,
    ) -> Result<(RunRecord, tokio::task::JoinHandle<RunRecord>), RunError> {
        let clusters = self.store.reading(|r| r.active_cluster_names()).await?;
        if !clusters.iter().any(|c| c == cluster) {
            return Err(RunError::UnknownCluster(cluster.to_string()));
        }
        let run_id = uuid::Uuid::new_v4().to_string();
        let slot =
            self.active
                .reserve(cluster, &run_id)
                .map_err(|taken| RunError::AlreadyRunning {
                    cluster: cluster.to_string(),
                    run_id: taken.run_id,
                })?;
        let settings = self.recommender().await?;
        let pricing = self.pricing().await?;
        let policies = self.policy_set(Some(cluster), &settings).await?;
        let mut run = engine::new_record(run_id, cluster, trigger, self.clock.now_ms(), &settings);
        let started = run.clone();
        run.seq = self
            .store
            .writing(move |tx| tx.insert_run(&started))
            .await?;
        tracing::info!(run = %run.id, cluster, trigger = trigger.as_str(), "run started");
        let inputs = engine::RunInputs {
            store: self.store.clone(),
            clock: self.clock.clone(),
            settings,
            pricing,
            policies,
            progress: slot,
        };
        let first = run.clone();
        let store = self.store.clone();
        let this = self.clone();
        let work = tokio::spawn(async move {
            let source = this.source_for(&run.cluster).await;
            let done = engine::execute(&inputs, run, source).await;
            drop(inputs.progress);
            if let Some(metrics) = &this.metrics {
                // Plain data: it always converts (and no figures yet reads as none).
                let collect = serde_json::to_value(&done.collect_stats).unwrap_or_default();
                metrics.record_collection(&done.cluster, &collect);
            }
            let now = inputs.clock.now_ms();
            crate::readiness::evaluate_logged(&store, now, &done.cluster).await;
            // Retention prunes after every run; a stored permit wakes it even when busy.
            this.finished.notify_one();
            done
        });
        // Watched: a panic in the work is recorded as a failed run (and logged), whoever
        // holds the handle (the scheduler and the API drop theirs).
        let (store, clock, started) = (self.store.clone(), self.clock.clone(), first.clone());
        let task = tokio::spawn(async move {
            supervise::watched(work, started, &store, || clock.now_ms()).await
        });
        Ok((first, task))
    }

    /// Starts a run and waits for its end (the demo, tests, benchmarks).
    pub async fn run_to_end(&self, cluster: &str, trigger: Trigger) -> Result<RunRecord, RunError> {
        let (first, task) = self.start(cluster, trigger).await?;
        task.await
            .map_err(|e| RunError::Store(StoreError::Task(format!("run {}: {e}", first.id))))
    }
}

#[cfg(test)]
#[path = "fleet_default_tests.rs"]
mod fleet_default_tests;
