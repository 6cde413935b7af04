//! The pods of a demo workload over a window: each release's pods, cut where they were
//! replaced, and a CronJob's runs, each a Job with its pods.

use crate::datasource::Window;
use crate::sim::catalogue::{Kind, WorkloadSpec};
use crate::sim::shape::Rng;

const HOUR_MS: f64 = 3_600_000.0;

/// One pod's life: which release, when it ran.
pub(super) struct Pod {
    pub(super) name: String,
    pub(super) uid: String,
    pub(super) owner_kind: &'static str,
    pub(super) owner_name: String,
    pub(super) revision: Option<String>,
    /// When its release began (the ReplicaSet's creation).
    pub(super) release_ms: i64,
    pub(super) start_ms: i64,
    pub(super) end_ms: i64,
    /// A pod of a CronJob's latest run (its settings are read though it has finished).
    pub(super) latest_run: bool,
}

/// The pods of one workload: the current release (replaced once if asked), and the
/// release before a rollout.
pub(super) fn pods_of(
    spec: &WorkloadSpec,
    rng: &mut Rng,
    created_ms: i64,
    window: Window,
) -> Vec<Pod> {
    if let Some(runs) = spec.runs {
        return runs_of(spec, runs, rng, created_ms, window);
    }
    let end = window.end_ms;
    let far = end + HOUR_MS as i64; // still running after the end
    let rollout = spec.rollout_minutes_ago.map(|m| end - m * 60_000);
    let mut releases = Vec::new(); // (revision, from, to)
    if let Some(at) = rollout {
        releases.push((rng.suffix(10), created_ms, at));
        releases.push((rng.suffix(10), at, far));
    } else {
        releases.push((rng.suffix(10), created_ms, far));
    }
    let mut pods = Vec::new();
    for (revision, from, to) in releases {
        let lives = lives(spec, from, to, end);
        for (start, stop) in lives {
            if stop < window.start_ms {
                continue;
            }
            for i in 0..spec.replicas {
                let (owner_kind, owner_name, name, rev) = match spec.kind {
                    Kind::Deployment | Kind::Rollout | Kind::CronJob => {
                        let rs = format!("{}-{}", spec.name, revision);
                        let pod = format!("{rs}-{}", rng.suffix(5));
                        ("ReplicaSet", rs, pod, None)
                    }
                    Kind::StatefulSet => (
                        "StatefulSet",
                        spec.name.clone(),
                        format!("{}-{i}", spec.name),
                        Some(format!("{}-{}", spec.name, revision)),
                    ),
                    Kind::DaemonSet => (
                        "DaemonSet",
                        spec.name.clone(),
                        format!("{}-{}", spec.name, rng.suffix(5)),
                        Some(revision.clone()),
                    ),
                };
                pods.push(Pod {
                    name,
                    uid: rng.uuid(),
                    owner_kind,
                    owner_name,
                    revision: rev,
                    release_ms: from,
                    start_ms: start,
                    end_ms: stop,
                    latest_run: false,
                });
            }
        }
    }
    pods
}

/// A CronJob's runs in the window, newest first: a Job each (named, as the CronJob
/// controller names them, after its scheduled minute) with one pod per `replicas`.
fn runs_of(
    spec: &WorkloadSpec,
    runs: crate::sim::catalogue::Runs,
    rng: &mut Rng,
    created_ms: i64,
    window: Window,
) -> Vec<Pod> {
    let mut pods = Vec::new();
    let mut start = window.end_ms - runs.last_minutes_ago * 60_000;
    let mut latest = true;
    while start + runs.minutes * 60_000 >= window.start_ms && start >= created_ms {
        let job = format!("{}-{}", spec.name, start / 60_000);
        for _ in 0..spec.replicas {
            pods.push(Pod {
                name: format!("{job}-{}", rng.suffix(5)),
                uid: rng.uuid(),
                owner_kind: "Job",
                owner_name: job.clone(),
                revision: None,
                release_ms: start,
                start_ms: start,
                end_ms: (start + runs.minutes * 60_000).min(window.end_ms),
                latest_run: latest,
            });
        }
        latest = false;
        start -= runs.every_minutes.max(1) * 60_000;
    }
    pods
}

/// The pod lifetimes of one release running `[from, to)`: cut at each replacement.
fn lives(spec: &WorkloadSpec, from: i64, to: i64, end: i64) -> Vec<(i64, i64)> {
    let mut cuts = Vec::new();
    if let Some(m) = spec.pods_replaced_minutes_ago {
        let every = spec.pods_replaced_every_minutes.map(|e| e.max(1) * 60_000);
        let mut at = end - m * 60_000;
        while at > from {
            if at < to {
                cuts.push(at);
            }
            match every {
                Some(e) => at -= e,
                None => break,
            }
        }
    }
    cuts.sort_unstable();
    let mut out = Vec::with_capacity(cuts.len() + 1);
    let mut start = from;
    for at in cuts {
        out.push((start, at));
        start = at;
    }
    out.push((start, to));
    out
}
