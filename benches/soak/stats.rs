//! Latencies and counts of the soak, kept with the time they were taken.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Time since the soak began.
#[derive(Clone)]
pub struct Clock(Arc<Instant>);

impl Clock {
    pub fn new() -> Clock {
        Clock(Arc::new(Instant::now()))
    }

    pub fn now(&self) -> Duration {
        self.0.elapsed()
    }
}

/// Every latency by name, with when it was measured, plus counters.
#[derive(Default)]
pub struct Stats {
    latencies: Mutex<BTreeMap<&'static str, Vec<(Duration, f64)>>>,
    counts: Mutex<BTreeMap<String, u64>>,
}

impl Stats {
    /// Records that `name` took `ms` at `at`.
    pub fn latency(&self, name: &'static str, at: Duration, ms: f64) {
        let mut l = self.latencies.lock().expect("stats");
        l.entry(name).or_default().push((at, ms));
    }

    /// Adds one to counter `name`.
    pub fn count(&self, name: impl Into<String>) {
        *self
            .counts
            .lock()
            .expect("stats")
            .entry(name.into())
            .or_default() += 1;
    }

    /// The `p` quantile of `name` inside `window` (ms); NaN when none.
    pub fn percentile(&self, name: &str, window: (Duration, Duration), p: f64) -> f64 {
        let l = self.latencies.lock().expect("stats");
        let mut v: Vec<f64> = l
            .get(name)
            .into_iter()
            .flatten()
            .filter(|(at, _)| *at >= window.0 && *at < window.1)
            .map(|(_, ms)| *ms)
            .collect();
        if v.is_empty() {
            return f64::NAN;
        }
        v.sort_by(f64::total_cmp);
        v[((v.len() as f64 * p) as usize).min(v.len() - 1)]
    }

    /// The worst `p` quantile of `name` over consecutive windows of `width` in `span`.
    pub fn worst_window(
        &self,
        name: &str,
        span: (Duration, Duration),
        width: Duration,
        p: f64,
    ) -> f64 {
        let mut worst = 0.0f64;
        let mut from = span.0;
        while from < span.1 {
            let q = self.percentile(name, (from, (from + width).min(span.1)), p);
            if !q.is_nan() {
                worst = worst.max(q);
            }
            from += width;
        }
        worst
    }

    /// Counter lines, `name: n`.
    pub fn counts(&self) -> Vec<String> {
        let c = self.counts.lock().expect("stats");
        c.iter().map(|(k, v)| format!("{k}: {v}")).collect()
    }
}
